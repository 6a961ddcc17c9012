package bdp

import "math"

// A side is one factor of the Markov-blanket factorisation (loss.go): the
// outputs strictly between the target and its nearest known reading on one
// side (or the chain's end). After j outputs the factor is a non-negative
// vector v indexed by the target's value, and the adversary's best choice of
// those j outputs maximises ln v_a − ln v_b. at(j, a, b) is that supremum
// (NaN when no output is possible under a or b); trace recovers outputs
// attaining it, in processing order.
type side struct {
	k     int
	best  []float64 // best[(j·k+a)·k+b]
	trace func(j, a, b int) []int
}

func (s *side) at(j, a, b int) float64 { return s.best[(j*s.k+a)*s.k+b] }

// stepFunc applies one output y to v, writing the result to dst: the
// forward step dst = (v ∘ E[·,y]) P for a left side, the backward step
// dst = P (E[·,y] ∘ v) for a right side.
type stepFunc func(dst, v []float64, y int)

func forwardStep(P, E [][]float64) stepFunc {
	return func(dst, v []float64, y int) {
		clear(dst)
		for x, vx := range v {
			w := vx * E[x][y]
			if w == 0 {
				continue
			}
			for b, p := range P[x] {
				dst[b] += w * p
			}
		}
	}
}

func backwardStep(P, E [][]float64) stepFunc {
	return func(dst, v []float64, y int) {
		for a, row := range P {
			s := 0.0
			for b, p := range row {
				s += p * E[b][y] * v[b]
			}
			dst[a] = s
		}
	}
}

// logRatio is ln v_a − ln v_b, with NaN when both are zero (an output the
// two hypotheses both rule out, which is not part of the supremum).
func logRatio(v []float64, a, b int) float64 {
	if v[a] == 0 && v[b] == 0 {
		return math.NaN()
	}
	return math.Log(v[a]) - math.Log(v[b])
}

// normalise scales v so that its largest entry is 1 (ratios are all that
// matter, and this keeps 10⁶ steps from underflowing). It reports false for
// the zero vector: an output sequence impossible from this start.
func normalise(v []float64) bool {
	hi := 0.0
	for _, x := range v {
		hi = max(hi, x)
	}
	if hi == 0 {
		return false
	}
	for i := range v {
		v[i] /= hi
	}
	return true
}

// binarySide computes the side of a two-state chain for j = 0..J exactly in
// O(J·m) time. Every step v ↦ normalise(step(v, y)) acts on the ratio
// v_0/v_1 as a linear-fractional map with non-negative coefficients, hence
// monotone (or constant) on [0, ∞]. So the largest and smallest ratios
// reachable after j+1 outputs are images of the largest or smallest after j
// outputs: tracking the two extremes is exact, and back-pointers recover the
// outputs. best[j][0·2+1] = ln of the largest ratio, best[j][1·2+0] = −ln of
// the smallest.
func binarySide(start []float64, J, m int, step stepFunc) *side {
	type ext struct {
		v       [2]float64
		y       int32
		fromMax bool
	}
	hi := make([]ext, J+1)
	lo := make([]ext, J+1)
	var v0 [2]float64
	copy(v0[:], start)
	normalise(v0[:])
	hi[0].v, lo[0].v = v0, v0
	// above reports whether u's ratio exceeds w's (cross-multiplied, so
	// exact for 0 and ∞).
	above := func(u, w [2]float64) bool { return u[0]*w[1] > w[0]*u[1] }
	var dst [2]float64
	for j := 1; j <= J; j++ {
		found := false
		for y := range m {
			for _, fromMax := range []bool{true, false} {
				src := lo[j-1].v
				if fromMax {
					src = hi[j-1].v
				}
				step(dst[:], src[:], y)
				if !normalise(dst[:]) {
					continue
				}
				e := ext{dst, int32(y), fromMax}
				if !found {
					hi[j], lo[j], found = e, e, true
					continue
				}
				if above(dst, hi[j].v) {
					hi[j] = e
				}
				if above(lo[j].v, dst) {
					lo[j] = e
				}
			}
		}
	}
	s := &side{k: 2, best: make([]float64, 4*(J+1))}
	for j := range J + 1 {
		s.best[4*j+1] = logRatio(hi[j].v[:], 0, 1)
		s.best[4*j+2] = logRatio(lo[j].v[:], 1, 0)
	}
	s.trace = func(j, a, b int) []int {
		ys := make([]int, j)
		useMax := a == 0
		for t := j; t >= 1; t-- {
			e := lo[t]
			if useMax {
				e = hi[t]
			}
			ys[t-1] = int(e.y)
			useMax = e.fromMax
		}
		return ys
	}
	return s
}

// enumSide computes the side of a k-state chain for j = 0..J by visiting
// every output sequence (Σ m^j vectors): exact for any k, and the reason
// chains with more than two states are limited to short lengths.
func enumSide(start []float64, J, k, m int, step stepFunc) *side {
	s := &side{k: k, best: make([]float64, (J+1)*k*k)}
	arg := make([][]int, (J+1)*k*k)
	for i := range s.best {
		s.best[i] = math.NaN()
	}
	path := make([]int, J)
	var visit func(j int, v []float64)
	visit = func(j int, v []float64) {
		for a := range k {
			for b := range k {
				if a == b {
					continue
				}
				r := logRatio(v, a, b)
				if p := (j*k+a)*k + b; !math.IsNaN(r) && (math.IsNaN(s.best[p]) || r > s.best[p]) {
					s.best[p] = r
					arg[p] = append(arg[p][:0], path[:j]...)
				}
			}
		}
		if j == J {
			return
		}
		dst := make([]float64, k)
		for y := range m {
			step(dst, v, y)
			if !normalise(dst) {
				continue
			}
			path[j] = y
			visit(j+1, dst)
		}
	}
	v := append([]float64(nil), start...)
	if normalise(v) {
		visit(0, v)
	}
	s.trace = func(j, a, b int) []int { return append([]int(nil), arg[(j*k+a)*k+b]...) }
	return s
}
