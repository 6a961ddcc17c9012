package bdp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// joint enumerates the definition: every reading sequence x (k^n) and
// every output sequence y (m^n) with P(x) and P(y | x).
type joint struct {
	k, m, n int
	px      []float64   // P(x), x in base k, position t−1 = digit t−1
	pyx     [][]float64 // P(y | x)
}

func digit(x, t, base int) int {
	for range t {
		x /= base
	}
	return x % base
}

func ipow(b, e int) int {
	r := 1
	for range e {
		r *= b
	}
	return r
}

func newJoint(P [][]float64, q []float64, E [][]float64, n int) *joint {
	k, m := len(P), len(E[0])
	j := &joint{k: k, m: m, n: n, px: make([]float64, ipow(k, n)), pyx: make([][]float64, ipow(k, n))}
	for x := range j.px {
		p := q[digit(x, 0, k)]
		for t := 1; t < n; t++ {
			p *= P[digit(x, t-1, k)][digit(x, t, k)]
		}
		j.px[x] = p
		j.pyx[x] = make([]float64, ipow(m, n))
		for y := range j.pyx[x] {
			py := 1.0
			for t := range n {
				py *= E[digit(x, t, k)][digit(y, t, m)]
			}
			j.pyx[x][y] = py
		}
	}
	return j
}

// lossAgainst is the BDPL of A(i, K) (0-based i, K a bitmask) by direct
// summation: max over x_K, a ≠ b, y of ln P(y|a,x_K)/P(y|b,x_K) over
// conditionings of positive probability; NaN when there is none.
func (j *joint) lossAgainst(i, K int) float64 {
	type acc struct {
		w float64
		s []float64
	}
	groups := map[[2]int]*acc{} // (x_K encoded, x_i)
	for x, p := range j.px {
		if p == 0 {
			continue
		}
		kc := 0
		for t := j.n - 1; t >= 0; t-- {
			if K>>t&1 == 1 {
				kc = kc*j.k + digit(x, t, j.k)
			}
		}
		key := [2]int{kc, digit(x, i, j.k)}
		g := groups[key]
		if g == nil {
			g = &acc{s: make([]float64, len(j.pyx[x]))}
			groups[key] = g
		}
		g.w += p
		for y, v := range j.pyx[x] {
			g.s[y] += p * v
		}
	}
	best := math.NaN()
	for ka, ga := range groups {
		for kb, gb := range groups {
			if ka[0] != kb[0] || ka[1] == kb[1] {
				continue
			}
			for y := range ga.s {
				num, den := ga.s[y]/ga.w, gb.s[y]/gb.w
				if num == 0 && den == 0 {
					continue
				}
				if r := math.Log(num) - math.Log(den); math.IsNaN(best) || r > best {
					best = r
				}
			}
		}
	}
	return best
}

func (j *joint) worst(know Knowledge) float64 {
	best := math.NaN()
	all := 1<<j.n - 1
	for i := range j.n {
		for K := 0; K <= all; K++ {
			if K>>i&1 == 1 {
				continue
			}
			if (know == NoneKnown && K != 0) || (know == AllKnown && K != all&^(1<<i)) {
				continue
			}
			if r := j.lossAgainst(i, K); !math.IsNaN(r) && (math.IsNaN(best) || r > best) {
				best = r
			}
		}
	}
	return best
}

// witnessLoss evaluates the reported adversary and output directly: the
// ratio P(y|a,x_K)/P(y|b,x_K) for that output and that conditioning. The
// outputs outside the window are completed with the first completion of
// positive probability (they cancel from the ratio).
func (j *joint) witnessLoss(l Loss) float64 {
	fixed := map[int]int{}
	for _, r := range l.Output {
		for t := r.From; t <= r.To; t++ {
			fixed[t-1] = r.Symbol
		}
	}
	for y := range ipow(j.m, j.n) {
		ok := true
		for t, s := range fixed {
			ok = ok && digit(y, t, j.m) == s
		}
		if !ok {
			continue
		}
		var num, wa, den, wb float64
		for x, p := range j.px {
			match := true
			for _, kn := range l.Adversary.Known {
				match = match && digit(x, kn.Index-1, j.k) == kn.Value
			}
			if !match {
				continue
			}
			switch digit(x, l.Adversary.Target-1, j.k) {
			case l.Adversary.Secret:
				num += p * j.pyx[x][y]
				wa += p
			case l.Adversary.Alternative:
				den += p * j.pyx[x][y]
				wb += p
			}
		}
		if num > 0 || den > 0 {
			return math.Log(num/wa) - math.Log(den/wb)
		}
	}
	return math.NaN()
}

func randRow(rng *rand.Rand, k int, zeros bool) []float64 {
	row := make([]float64, k)
	s := 0.0
	for i := range row {
		row[i] = rng.Float64() + 0.05
		if zeros && rng.IntN(3) == 0 {
			row[i] = 0
		}
		s += row[i]
	}
	if s == 0 {
		row[rng.IntN(k)], s = 1, 1
	}
	for i := range row {
		row[i] /= s
	}
	return row
}

func close(a, b float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*(1+math.Abs(b))
}

// TestWorstMatchesBruteForce checks the fast path (two states) and the
// enumerating path (three states) against the definition, for every target
// and every known set, on random chains with and without structural zeros
// and on randomized response and three-output mechanisms, n = 1..7 (two
// states) and n = 1..4 (three states). The reported witness must attain the
// loss.
func TestWorstMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := 0
	for trial := range 24 {
		k := 2
		maxN := 7
		if trial%4 == 3 {
			k, maxN = 3, 4
		}
		zeros := trial%3 == 2
		P := make([][]float64, k)
		for i := range P {
			P[i] = randRow(rng, k, zeros)
		}
		q := randRow(rng, k, zeros && trial%2 == 0)
		m := 2 + trial%2
		E := make([][]float64, k)
		for i := range E {
			E[i] = randRow(rng, m, trial%5 == 4)
		}
		ch, err := markov.New(nil, P, markov.InitGiven, q)
		if err != nil {
			t.Fatal(err)
		}
		mech, err := NewMechanism(E)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= maxN; n++ {
			if n == 7 && trial%2 == 1 {
				continue // keep the suite fast: n = 7 on half the trials
			}
			j := newJoint(P, q, E, n)
			for _, know := range []Knowledge{AnyKnown, NoneKnown, AllKnown} {
				want := j.worst(know)
				got, err := Worst(ch, mech, n, know)
				if math.IsNaN(want) {
					if err == nil {
						t.Fatalf("trial %d n=%d %v: brute force has no valid conditioning, Worst returned %v", trial, n, know, got.Loss)
					}
					continue
				}
				if err != nil {
					t.Fatalf("trial %d n=%d %v: %v", trial, n, know, err)
				}
				if !close(got.Loss, want) {
					t.Fatalf("trial %d n=%d %v P=%v q=%v E=%v: Worst %v, brute force %v", trial, n, know, P, q, E, got.Loss, want)
				}
				if w := j.witnessLoss(got); !close(w, want) {
					t.Fatalf("trial %d n=%d %v: witness %+v attains %v, not %v", trial, n, know, got, w, want)
				}
				cases++
			}
		}
	}
	t.Logf("%d configurations checked", cases)
}
