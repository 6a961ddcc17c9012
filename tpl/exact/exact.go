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
	if len(series) == 0 {
		return 0, errors.New("exact: no series")
	}
	if !(b > 0) {
		return 0, fmt.Errorf("exact: scale %v", b)
	}
	k := len(series[0].P)
	T := 0
	for _, w := range widths {
		if w < 1 {
			return 0, fmt.Errorf("exact: width %d", w)
		}
		T += w
	}
	m := len(series)
	n := m * T
	total := 1
	for range n {
		total *= k
		if total > MaxSequences {
			return 0, fmt.Errorf("exact: %d^%d sequences exceed %d", k, n, MaxSequences)
		}
	}
	win := make([]int, T) // window of each step
	{
		s := 0
		for j, w := range widths {
			for range w {
				win[s] = j
				s++
			}
		}
	}
	observed := func(i, t int) bool {
		ms := series[i].Missing
		return ms == nil || !ms[t]
	}
	nw := len(widths)
	// readings per window (pooled over series)
	nobs := make([]int, nw)
	for i := range m {
		for t := range T {
			if observed(i, t) {
				nobs[win[t]]++
			}
		}
	}
	// count vectors of each window, indexed
	cvIndex := make([]map[string]int, nw)
	cvList := make([][][]int, nw)
	for j := range nw {
		cvIndex[j] = map[string]int{}
	}
	type group struct {
		cv []int       // count-vector index per window
		w  [][]float64 // w[i*T+t][a]: Σ Pr(x) [x^i_t = a]
	}
	groups := map[string]*group{}
	var order []string
	marg := make([][]float64, m*T)
	for s := range marg {
		marg[s] = make([]float64, k)
	}
	x := make([]int, n)
	for code := range total {
		c := code
		for s := range n {
			x[s] = c % k
			c /= k
		}
		pr := 1.0
		for i := range m {
			xs := x[i*T : (i+1)*T]
			pr *= series[i].Q[xs[0]]
			for t := 1; t < T; t++ {
				pr *= series[i].P[xs[t-1]][xs[t]]
			}
		}
		if pr == 0 {
			continue
		}
		counts := make([][]int, nw)
		for j := range nw {
			counts[j] = make([]int, k)
		}
		for i := range m {
			for t := range T {
				if observed(i, t) {
					counts[win[t]][x[i*T+t]]++
				}
			}
		}
		cv := make([]int, nw)
		key := ""
		for j := range nw {
			ck := fmt.Sprint(counts[j])
			id, ok := cvIndex[j][ck]
			if !ok {
				id = len(cvList[j])
				cvIndex[j][ck] = id
				cvList[j] = append(cvList[j], counts[j])
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
			order = append(order, key)
		}
		for s := range n {
			g.w[s][x[s]] += pr
			marg[s][x[s]] += pr
		}
	}
	// grid of each window with readings: r ∈ {0..nobs}^k
	var active []int
	gridSize := make([]int, nw)
	G := 1.0
	for j := range nw {
		if nobs[j] == 0 {
			continue // pure noise: the same factor under every secret
		}
		active = append(active, j)
		gs := 1
		for range k {
			gs *= nobs[j] + 1
		}
		gridSize[j] = gs
		G *= float64(gs)
	}
	if G*float64(len(order))*float64(nw+n*k) > MaxWork {
		return 0, fmt.Errorf("exact: %.3g grid points × %d groups is too much work", G, len(order))
	}
	// factor tables F[j][r][cv] = exp(−Σ_i |r_i − c_i| / b)
	F := make([][][]float64, nw)
	for _, j := range active {
		F[j] = make([][]float64, gridSize[j])
		r := make([]int, k)
		for ri := range gridSize[j] {
			c := ri
			for i := range k {
				r[i] = c % (nobs[j] + 1)
				c /= nobs[j] + 1
			}
			F[j][ri] = make([]float64, len(cvList[j]))
			for ci, cnt := range cvList[j] {
				d := 0
				for i := range k {
					d += abs(r[i] - cnt[i])
				}
				F[j][ri][ci] = math.Exp(-float64(d) / b)
			}
		}
	}
	gs := make([]*group, len(order))
	for i, key := range order {
		gs[i] = groups[key]
	}
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
		for _, g := range gs {
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
				if marg[s][a] <= 0 {
					continue
				}
				for a2 := range k {
					if a2 == a || marg[s][a2] <= 0 {
						continue
					}
					v := math.Log(acc[s][a] / marg[s][a] * marg[s][a2] / acc[s][a2])
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
	return best, nil
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
