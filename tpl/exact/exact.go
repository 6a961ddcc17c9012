// Package exact computes, by brute force from the definition, the privacy
// loss of windowed count histograms with i.i.d. Laplace noise on every bin
// of every window, for small instances: every sequence of every series is
// enumerated and the supremum over outputs is taken over the integer grid
// of each window's bins, where it is attained (docs/math.md §8.8). It is
// the independent check of package tpl's bounds and the source of the
// exact limits b* that `puff experiment streams` prints; it shares no code
// with tpl.
package exact

import (
	"errors"
	"fmt"
	"math"
)

// Series is one series: a chain (P, initial law Q) and which of its steps
// have no reading (nil: none).
type Series struct {
	P       [][]float64
	Q       []float64
	Missing []bool // len T when set
}

// Limits of the enumeration.
const (
	MaxSequences = 1 << 16 // k^(m·T) joint sequences
	MaxWork      = 4e9     // grid points × sequence groups × (windows + steps)
)

// Loss returns the exact privacy loss, max over series i, steps t and
// pairs a ≠ a' of positive probability of sup_r |log p(r | X^i_t = a) −
// log p(r | X^i_t = a')|, of the release that adds i.i.d. Lap(b) to every
// bin of the pooled k-bin count histogram of every window (consecutive
// windows of the given widths, summing to T; missing readings are not
// counted). Series are independent.
func Loss(series []Series, widths []int, b float64) (float64, error) {
	in, total, err := newInstance(series, widths, b)
	if err != nil {
		return 0, err
	}
	e := in.enumerate(total)
	// grid of each window with readings: r ∈ {0..nobs}^k
	var active []int
	gridSize := make([]int, in.nw)
	G := 1.0
	for j := range in.nw {
		if e.nobs[j] == 0 {
			continue // pure noise: the same factor under every secret
		}
		active = append(active, j)
		gs := 1
		for range in.k {
			gs *= e.nobs[j] + 1
		}
		gridSize[j] = gs
		G *= float64(gs)
	}
	if G*float64(len(e.groups))*float64(in.nw+in.n*in.k) > MaxWork {
		return 0, fmt.Errorf("exact: %.3g grid points × %d groups is too much work", G, len(e.groups))
	}
	F := in.factors(e, active, gridSize, b)
	return in.supremum(e, F, active, gridSize), nil
}

// instance is one checked call of Loss: the series, the window of every
// step and the sizes of the enumeration.
type instance struct {
	series []Series
	k      int   // states
	T      int   // steps per series
	m      int   // series
	n      int   // m·T joint steps
	nw     int   // windows
	win    []int // window of each step
}

// newInstance checks the arguments of Loss and returns the instance and
// the number k^(m·T) of joint sequences (at most MaxSequences).
func newInstance(series []Series, widths []int, b float64) (*instance, int, error) {
	if len(series) == 0 {
		return nil, 0, errors.New("exact: no series")
	}
	if !(b > 0) {
		return nil, 0, fmt.Errorf("exact: scale %v", b)
	}
	k := len(series[0].P)
	T := 0
	for _, w := range widths {
		if w < 1 {
			return nil, 0, fmt.Errorf("exact: width %d", w)
		}
		T += w
	}
	m := len(series)
	n := m * T
	total := 1
	for range n {
		total *= k
		if total > MaxSequences {
			return nil, 0, fmt.Errorf("exact: %d^%d sequences exceed %d", k, n, MaxSequences)
		}
	}
	win := make([]int, T) // window of each step
	s := 0
	for j, w := range widths {
		for range w {
			win[s] = j
			s++
		}
	}
	return &instance{series: series, k: k, T: T, m: m, n: n, nw: len(widths), win: win}, total, nil
}

func (in *instance) observed(i, t int) bool {
	ms := in.series[i].Missing
	return ms == nil || !ms[t]
}

// group gathers the joint sequences with the same count vector in every
// window: they have the same likelihood at every output.
type group struct {
	cv []int       // count-vector index per window
	w  [][]float64 // w[i*T+t][a]: Σ Pr(x) [x^i_t = a]
}

// enumeration is what the enumeration of every joint sequence leaves.
type enumeration struct {
	nobs   []int       // readings per window (pooled over series)
	cvList [][][]int   // count vectors of each window, indexed
	groups []*group    // in order of first appearance
	marg   [][]float64 // marg[i*T+t][a] = Pr(X^i_t = a)
}

// enumerate walks the total joint sequences of positive probability and
// groups them by their count vectors.
func (in *instance) enumerate(total int) *enumeration {
	k, T, m, n, nw := in.k, in.T, in.m, in.n, in.nw
	e := &enumeration{nobs: make([]int, nw), cvList: make([][][]int, nw), marg: make([][]float64, m*T)}
	for i := range m {
		for t := range T {
			if in.observed(i, t) {
				e.nobs[in.win[t]]++
			}
		}
	}
	cvIndex := make([]map[string]int, nw)
	for j := range nw {
		cvIndex[j] = map[string]int{}
	}
	groups := map[string]*group{}
	for s := range e.marg {
		e.marg[s] = make([]float64, k)
	}
	x := make([]int, n)
	for code := range total {
		c := code
		for s := range n {
			x[s] = c % k
			c /= k
		}
		pr := in.prob(x)
		if pr == 0 {
			continue
		}
		counts := in.counts(x)
		cv := make([]int, nw)
		key := ""
		for j := range nw {
			ck := fmt.Sprint(counts[j])
			id, ok := cvIndex[j][ck]
			if !ok {
				id = len(e.cvList[j])
				cvIndex[j][ck] = id
				e.cvList[j] = append(e.cvList[j], counts[j])
			}
			cv[j] = id
			key += fmt.Sprint(id, ",")
		}
		g := groups[key]
		if g == nil {
			g = &group{cv: cv, w: make([][]float64, m*T)}
			for s := range g.w {
				g.w[s] = make([]float64, k)
			}
			groups[key] = g
			e.groups = append(e.groups, g)
		}
		for s := range n {
			g.w[s][x[s]] += pr
			e.marg[s][x[s]] += pr
		}
	}
	return e
}

// prob is the probability of the joint sequence x (series independent).
func (in *instance) prob(x []int) float64 {
	pr := 1.0
	for i := range in.m {
		xs := x[i*in.T : (i+1)*in.T]
		pr *= in.series[i].Q[xs[0]]
		for t := 1; t < in.T; t++ {
			pr *= in.series[i].P[xs[t-1]][xs[t]]
		}
	}
	return pr
}

// counts is the pooled count histogram of every window of x (missing
// readings not counted).
func (in *instance) counts(x []int) [][]int {
	counts := make([][]int, in.nw)
	for j := range in.nw {
		counts[j] = make([]int, in.k)
	}
	for i := range in.m {
		for t := range in.T {
			if in.observed(i, t) {
				counts[in.win[t]][x[i*in.T+t]]++
			}
		}
	}
	return counts
}

// factors returns the factor tables F[j][r][cv] = exp(−Σ_i |r_i − c_i| / b)
// of the active windows.
func (in *instance) factors(e *enumeration, active, gridSize []int, b float64) [][][]float64 {
	k := in.k
	F := make([][][]float64, in.nw)
	for _, j := range active {
		F[j] = make([][]float64, gridSize[j])
		r := make([]int, k)
		for ri := range gridSize[j] {
			c := ri
			for i := range k {
				r[i] = c % (e.nobs[j] + 1)
				c /= e.nobs[j] + 1
			}
			F[j][ri] = make([]float64, len(e.cvList[j]))
			for ci, cnt := range e.cvList[j] {
				d := 0
				for i := range k {
					d += abs(r[i] - cnt[i])
				}
				F[j][ri][ci] = math.Exp(-float64(d) / b)
			}
		}
	}
	return F
}

// supremum returns the largest log-likelihood ratio over every grid point
// of the active windows, every step and every pair of secrets of positive
// probability (NaN if any ratio is NaN).
func (in *instance) supremum(e *enumeration, F [][][]float64, active, gridSize []int) float64 {
	n, k := in.n, in.k
	acc := make([][]float64, n)
	for s := range acc {
		acc[s] = make([]float64, k)
	}
	idx := make([]int, len(active))
	best := 0.0
	for {
		for s := range acc {
			clear(acc[s])
		}
		for _, g := range e.groups {
			lik := 1.0
			for a, j := range active {
				lik *= F[j][idx[a]][g.cv[j]]
			}
			for s := range n {
				for v, wv := range g.w[s] {
					acc[s][v] += lik * wv
				}
			}
		}
		for s := range n {
			for a := range k {
				if e.marg[s][a] <= 0 {
					continue
				}
				for a2 := range k {
					if a2 == a || e.marg[s][a2] <= 0 {
						continue
					}
					v := math.Log(acc[s][a] / e.marg[s][a] * e.marg[s][a2] / acc[s][a2])
					if v > best || math.IsNaN(v) {
						best = v
					}
				}
			}
		}
		// next grid point (mixed radix)
		p := 0
		for p < len(active) {
			idx[p]++
			if idx[p] < gridSize[active[p]] {
				break
			}
			idx[p] = 0
			p++
		}
		if p == len(active) {
			break
		}
	}
	return best
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// Scale returns the least per-bin scale b (to relative precision 1e-9, the
// upper end of the bracket) with Loss ≤ eps, by bisection between lo and
// hi; it assumes the loss is non-increasing in b on that bracket (checked
// at its ends).
func Scale(series []Series, widths []int, eps, lo, hi float64) (float64, error) {
	lh, err := Loss(series, widths, hi)
	if err != nil {
		return 0, err
	}
	if lh > eps {
		return 0, fmt.Errorf("exact: loss %v > %v at the upper end %v", lh, eps, hi)
	}
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		l, err := Loss(series, widths, mid)
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
