package markov

import (
	"errors"
	"fmt"
	"math"
)

// Fit returns the maximum-likelihood chain for one or many observed
// sequences over the given states: P(x,y) = (n(x,y) + α) / (n(x,·) + kα)
// where n counts observed transitions x→y within each sequence (never
// across sequences) and α ≥ 0 is additive smoothing. The fitted chain has
// the stationary initial distribution (the choice [SWC17] §5.3 makes for
// real data); change Init to use another.
//
// Without smoothing, a state that is never followed by another observation
// has no estimate and Fit returns an error naming it.
func Fit(states []string, seqs [][]int, alpha float64) (*Chain, error) {
	k := len(states)
	if k == 0 {
		return nil, errors.New("fit: no states")
	}
	counts := make([][]float64, k)
	for i := range counts {
		counts[i] = make([]float64, k)
	}
	for s, seq := range seqs {
		for t, x := range seq {
			if x < 0 || x >= k {
				return nil, fmt.Errorf("fit: sequence %d position %d: state index %d out of range [0,%d)", s, t, x, k)
			}
			if t > 0 {
				counts[seq[t-1]][x]++
			}
		}
	}
	return FitCounts(states, counts, alpha)
}

// FitCounts is Fit from transition counts (counts[x][y]: transitions from
// x to y), as a pipeline that counts them in parallel has them.
func FitCounts(states []string, counts [][]float64, alpha float64) (*Chain, error) {
	k := len(states)
	if k == 0 {
		return nil, errors.New("fit: no states")
	}
	if alpha < 0 || alpha != alpha {
		return nil, fmt.Errorf("fit: smoothing %v, want ≥ 0", alpha)
	}
	if len(counts) != k {
		return nil, fmt.Errorf("fit: %d rows of transition counts for %d states", len(counts), k)
	}
	n := 0.0
	for x, row := range counts {
		if len(row) != k {
			return nil, fmt.Errorf("fit: row %d of transition counts has %d entries, want %d", x, len(row), k)
		}
		for _, c := range row {
			if !(c >= 0) || math.IsInf(c, 0) {
				return nil, fmt.Errorf("fit: transition count %v, want a finite number ≥ 0", c)
			}
			n += c
		}
	}
	if n == 0 && alpha == 0 {
		return nil, errors.New("fit: no transitions observed (every sequence has length ≤ 1)")
	}
	P := make([][]float64, k)
	for x := range k {
		tot := 0.0
		for _, v := range counts[x] {
			tot += v
		}
		tot += float64(k) * alpha
		if tot == 0 {
			return nil, fmt.Errorf("fit: state %q is never followed by another observation, so its transition row has no estimate; use smoothing > 0", states[x])
		}
		P[x] = make([]float64, k)
		for y := range k {
			P[x][y] = (counts[x][y] + alpha) / tot
		}
	}
	return New(states, P, InitStationary, nil)
}
