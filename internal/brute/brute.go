// Package brute computes the exact Pufferfish loss of releases about one
// Markov chain by enumerating every sequence: the independent oracle that
// tests check mechanisms, windows, streams and ledgers against. It shares
// no code with the mechanisms it checks. Its cost is exponential in the
// chain's length: tests keep k^T small.
//
// # What it computes
//
// A chain X_1..X_T on k states has initial law Q and kernels P (one per
// step, or one for all). A release is a vector of integer-valued functions
// of the sequence (Coords) with independent Laplace noise of scale b on
// each (Scale). The loss of a set of releases is
//
//	max over t, a ≠ a' with P(X_t=a), P(X_t=a') > 0 of
//	sup over outputs y of | log p(y | X_t = a) − log p(y | X_t = a') |.
//
// The supremum over real outputs is a maximum over the integer grid
// (docs/math.md §4.8): on each unit interval between integers every term
// of p(y | x) in one coordinate is A·e^{−y/b} or B·e^{y/b}, so the ratio of
// the two mixtures is a Möbius function of e^{2y/b}, monotone there; below
// the smallest or above the largest value of a coordinate it is constant.
// Moving one coordinate at a time to the better end of its interval never
// lowers the ratio, so some grid point attains the supremum.
package brute

import (
	"fmt"
	"math"
)

// Chain is one Markov chain: Q the law of X_1, P the kernel of every step
// (Steps, when set, gives the kernel of step t → t+1 as Steps[t-1]).
type Chain struct {
	Q     []float64
	P     [][]float64
	Steps [][][]float64
	T     int
}

// Release is one noisy vector: Coords(x) are integers, each gets Laplace
// noise of scale Scale.
type Release struct {
	Coords func(x []int) []int
	Scale  float64
}

// Counts is the k-bin count histogram of the readings at positions (0-based).
func Counts(k int, positions []int, scale float64) Release {
	return Release{Scale: scale, Coords: func(x []int) []int {
		c := make([]int, k)
		for _, p := range positions {
			c[x[p]]++
		}
		return c
	}}
}

// Windows cuts positions 0..T-1 into consecutive windows of the given
// widths (summing to T); missing lists positions without a reading. Each
// window's count histogram gets scale b[j] (one b for all when len(b) = 1).
// Windows left with no reading are not released.
func Windows(k, T int, widths []int, missing []int, b []float64) []Release {
	skip := map[int]bool{}
	for _, m := range missing {
		skip[m] = true
	}
	var out []Release
	from := 0
	for j, w := range widths {
		var pos []int
		for p := from; p < from+w && p < T; p++ {
			if !skip[p] {
				pos = append(pos, p)
			}
		}
		from += w
		if len(pos) == 0 {
			continue
		}
		s := b[0]
		if len(b) > 1 {
			s = b[j]
		}
		out = append(out, Counts(k, pos, s))
	}
	return out
}

// Loss is the exact Pufferfish loss of all releases together, and a
// witness (the position t, 0-based, and the pair a, a').
func Loss(c Chain, rels []Release) (loss float64, t, a, a2 int, err error) {
	k := len(c.Q)
	if k < 2 || c.T < 1 {
		return 0, 0, 0, 0, fmt.Errorf("brute: %d states, length %d", k, c.T)
	}
	if n := math.Pow(float64(k), float64(c.T)); n > 1<<22 {
		return 0, 0, 0, 0, fmt.Errorf("brute: %g sequences is too many", n)
	}
	kernel := func(s int) [][]float64 {
		if c.Steps != nil {
			return c.Steps[s]
		}
		return c.P
	}
	// group sequences by their output vector: W[v][t*k+a] = P(F = v, X_t = a)
	type group struct {
		coords []int
		w      []float64
	}
	groups := map[string]*group{}
	var order []*group
	marg := make([]float64, c.T*k)
	x := make([]int, c.T)
	var rec func(pos int, p float64)
	rec = func(pos int, p float64) {
		if p == 0 {
			return
		}
		if pos == c.T {
			var coords []int
			for _, r := range rels {
				coords = append(coords, r.Coords(x)...)
			}
			key := fmt.Sprint(coords)
			g := groups[key]
			if g == nil {
				g = &group{coords: coords, w: make([]float64, c.T*k)}
				groups[key] = g
				order = append(order, g)
			}
			for s, v := range x {
				g.w[s*k+v] += p
				marg[s*k+v] += p
			}
			return
		}
		for v := 0; v < k; v++ {
			x[pos] = v
			if pos == 0 {
				rec(1, c.Q[v])
			} else {
				rec(pos+1, p*kernel(pos - 1)[x[pos-1]][v])
			}
		}
	}
	rec(0, 1)
	if len(order) == 0 {
		return 0, 0, 0, 0, fmt.Errorf("brute: no sequence has positive probability")
	}
	// per coordinate: its scale and the range of its values
	var scales []float64
	for _, r := range rels {
		for range r.Coords(make([]int, c.T)) {
			scales = append(scales, r.Scale)
		}
	}
	d := len(scales)
	lo, hi := make([]int, d), make([]int, d)
	for i := range d {
		lo[i], hi[i] = math.MaxInt, math.MinInt
		for _, g := range order {
			lo[i], hi[i] = min(lo[i], g.coords[i]), max(hi[i], g.coords[i])
		}
	}
	grid := 1.0
	for i := range d {
		grid *= float64(hi[i] - lo[i] + 1)
	}
	if grid*float64(len(order)) > 1<<31 {
		return 0, 0, 0, 0, fmt.Errorf("brute: %g grid points × %d outputs is too many", grid, len(order))
	}
	y := slices(lo)
	sum := make([]float64, c.T*k)
	best := -1.0
	for {
		clear(sum)
		for _, g := range order {
			lik := 1.0
			for i := range d {
				lik *= math.Exp(-math.Abs(float64(y[i]-g.coords[i])) / scales[i])
			}
			for j, w := range g.w {
				sum[j] += w * lik
			}
		}
		for s := 0; s < c.T; s++ {
			for u := 0; u < k; u++ {
				if marg[s*k+u] == 0 {
					continue
				}
				for v := 0; v < k; v++ {
					if v == u || marg[s*k+v] == 0 {
						continue
					}
					l := math.Log(sum[s*k+u]/marg[s*k+u]) - math.Log(sum[s*k+v]/marg[s*k+v])
					if l > best {
						best, t, a, a2 = l, s, u, v
					}
				}
			}
		}
		// next grid point
		i := 0
		for ; i < d; i++ {
			if y[i] < hi[i] {
				y[i]++
				break
			}
			y[i] = lo[i]
		}
		if i == d {
			break
		}
	}
	return max(best, 0), t, a, a2, nil
}

func slices(s []int) []int { return append([]int(nil), s...) }

// MinScale is the smallest common scale b (to relative 1e-9, rounded up)
// at which the releases made by mk(b) have loss ≤ eps, searched in
// [lo, hi]; the loss is taken as non-increasing in b.
func MinScale(c Chain, eps, lo, hi float64, mk func(b float64) []Release) (float64, error) {
	for range 200 {
		if hi-lo <= 1e-9*hi {
			break
		}
		mid := (lo + hi) / 2
		l, _, _, _, err := Loss(c, mk(mid))
		if err != nil {
			return 0, err
		}
		if l <= eps {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
