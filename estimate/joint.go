package estimate

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Histogram is one released noisy count histogram for Joint: its noisy
// counts, the variance of each count's noise (2b² for Laplace of scale b),
// and its public number of readings N, which the counts sum to (Exact) or
// at most (a reading's value may be missing).
type Histogram struct {
	Noisy    []float64
	Variance float64
	N        float64
	Exact    bool
}

// Joint returns consistent estimates of two families of count histograms
// over the same bins that partition the same readings — the windows of a
// release (each reading in one window) and the cells of a profile (each
// reading in one cell): the weighted least-squares projection of all the
// noisy counts onto the set where every histogram is non-negative and sums
// to its N (or at most N), and the two families' bin-wise totals agree
// (Σ_w c_w = Σ_p c_p: both are the histogram of all the readings). The
// weights are the inverse noise variances. It is post-processing of the
// two releases (docs/math.md §4.14, "Windows and profiles together"): it
// reads only the released counts, their scales and the public sizes. The
// set is convex and holds the true counts, so the estimate is never
// farther from them than the noisy counts in the weighted Euclidean norm.
//
// It is computed by Dykstra's alternating projections between the product
// of the histograms' simplices and the affine set of agreeing totals, each
// an exact projection in the weighted norm, until no count moves by more
// than 10⁻¹⁰·(1 + the largest N) in a round; ctx stops it. Every returned
// histogram is exactly one (non-negative, its sum); the totals agree to
// within that tolerance.
func Joint(ctx context.Context, a, b []Histogram) ([][]float64, [][]float64, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, nil, errors.New("estimate: Joint needs histograms on both sides")
	}
	k := len(a[0].Noisy)
	var na, nb float64
	for i, hs := range [][]Histogram{a, b} {
		for j, h := range hs {
			if len(h.Noisy) != k {
				return nil, nil, fmt.Errorf("estimate: histogram %d of side %d has %d bins, want %d", j, i+1, len(h.Noisy), k)
			}
			if !(h.Variance > 0) || math.IsInf(h.Variance, 0) {
				return nil, nil, fmt.Errorf("estimate: histogram %d of side %d: noise variance %v, want finite > 0", j, i+1, h.Variance)
			}
			if err := check(h.Noisy, h.N); err != nil {
				return nil, nil, fmt.Errorf("histogram %d of side %d: %w", j, i+1, err)
			}
			if i == 0 {
				na += h.N
			} else {
				nb += h.N
			}
		}
	}
	if math.Abs(na-nb) > 1e-9*max(na, nb) {
		return nil, nil, fmt.Errorf("estimate: the two sides hold %g and %g readings: they do not partition the same readings", na, nb)
	}
	// Work in scaled coordinates z = c/s, s = √variance, where the weighted
	// norm is Euclidean: a histogram's set becomes {z ≥ 0, Σ z = N/s} (or
	// ≤), and the agreement Σ_a s_a z_a = Σ_b s_b z_b bin by bin is a
	// hyperplane per bin with normal (s_a…, −s_b…).
	all := append(append([]Histogram{}, a...), b...)
	sign := make([]float64, len(all))
	scale := make([]float64, len(all))
	norm2 := 0.0
	for i, h := range all {
		scale[i] = math.Sqrt(h.Variance)
		sign[i] = 1
		if i >= len(a) {
			sign[i] = -1
		}
		norm2 += h.Variance
	}
	z := make([][]float64, len(all))
	p := make([][]float64, len(all)) // Dykstra's increments for the simplices
	q := make([][]float64, len(all)) // and for the hyperplanes
	top := 0.0
	for i, h := range all {
		z[i] = make([]float64, k)
		p[i] = make([]float64, k)
		q[i] = make([]float64, k)
		for j, v := range h.Noisy {
			z[i][j] = v / scale[i]
		}
		top = max(top, h.N)
	}
	y := make([]float64, k)
	for round := 0; round < maxJointRounds; round++ {
		if round%16 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		change := 0.0
		// project z + p onto the simplices
		for i, h := range all {
			for j := range y {
				y[j] = z[i][j] + p[i][j]
			}
			c, err := h.project(y, scale[i])
			if err != nil {
				return nil, nil, err
			}
			for j := range y {
				p[i][j] = y[j] - c[j]
				change = max(change, math.Abs(c[j]-z[i][j])*scale[i])
				z[i][j] = c[j]
			}
		}
		// project z + q onto the agreement hyperplanes, bin by bin
		for j := range k {
			dot := 0.0
			for i := range all {
				dot += sign[i] * scale[i] * (z[i][j] + q[i][j])
			}
			f := dot / norm2
			for i := range all {
				w := z[i][j] + q[i][j]
				c := w - f*sign[i]*scale[i]
				q[i][j] = w - c
				change = max(change, math.Abs(c-z[i][j])*scale[i])
				z[i][j] = c
			}
		}
		if change <= jointTol*(1+top) {
			break
		}
	}
	// The last projection was onto the hyperplanes, so z is within the
	// tolerance of the simplices: project it onto them once more, so that
	// every histogram is exactly a histogram (non-negative, its sum) and
	// the totals agree to within the tolerance.
	out := make([][]float64, len(all))
	for i, h := range all {
		c, err := h.project(z[i], scale[i])
		if err != nil {
			return nil, nil, err
		}
		for j := range c {
			c[j] *= scale[i]
		}
		out[i] = c
	}
	return out[:len(a)], out[len(a):], nil
}

// project is the projection of y, in coordinates c/s, onto the
// histogram's set there: {z ≥ 0, Σ z = N/s}, or ≤ when not Exact.
func (h Histogram) project(y []float64, s float64) ([]float64, error) {
	if h.Exact {
		return Simplex(y, h.N/s)
	}
	return AtMost(y, h.N/s)
}

// Joint's stopping rule: the largest change of a count in a round, relative
// to 1 + the largest N, and the most rounds.
const (
	jointTol       = 1e-10
	maxJointRounds = 100000
)
