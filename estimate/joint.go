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

// JointResult is Joint's estimate and how far its iteration got.
type JointResult struct {
	// A and B are the estimates of the two sides' histograms, in order:
	// each exactly a histogram (non-negative, summing to its N or at most
	// to it).
	A, B [][]float64
	// Disagreement is the largest difference between the two sides'
	// totals of a bin in A and B, in counts.
	Disagreement float64
	// Rounds is the number of rounds of projections run.
	Rounds int
	// Capped says the iteration stopped at the round cap (MaxJointRounds)
	// before reaching the tolerance: A and B are still histograms, but the
	// totals agree only to Disagreement, and they are not the projection
	// to the documented accuracy. A caller says so (puff consistent
	// prints a warning).
	Capped bool
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
// It is computed by Dykstra's alternating projections between the affine
// set of agreeing totals and the product of the histograms' simplices,
// each an exact projection in the weighted norm; a round ends with the
// simplices, so every returned histogram is exactly one (non-negative, its
// sum). It stops when, after a round, no count moved by more than
// JointTol·(1 + the largest N) and the two sides' totals of every bin
// agree to within JointTol·(1 + the largest N) — both measured, not
// assumed; or after MaxJointRounds rounds, which the result says
// (Capped). ctx stops it.
func Joint(ctx context.Context, a, b []Histogram) (*JointResult, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, errors.New("estimate: Joint needs histograms on both sides")
	}
	k := len(a[0].Noisy)
	var na, nb float64
	for i, hs := range [][]Histogram{a, b} {
		for j, h := range hs {
			if len(h.Noisy) != k {
				return nil, fmt.Errorf("estimate: histogram %d of side %d has %d bins, want %d", j, i+1, len(h.Noisy), k)
			}
			if !(h.Variance > 0) || math.IsInf(h.Variance, 0) {
				return nil, fmt.Errorf("estimate: histogram %d of side %d: noise variance %v, want finite > 0", j, i+1, h.Variance)
			}
			if err := check(h.Noisy, h.N); err != nil {
				return nil, fmt.Errorf("histogram %d of side %d: %w", j, i+1, err)
			}
			if i == 0 {
				na += h.N
			} else {
				nb += h.N
			}
		}
	}
	if math.Abs(na-nb) > 1e-9*max(na, nb) {
		return nil, fmt.Errorf("estimate: the two sides hold %g and %g readings: they do not partition the same readings", na, nb)
	}
	return joint(ctx, a, b, MaxJointRounds)
}

// joint is Joint of checked input, with at most maxRounds rounds.
func joint(ctx context.Context, a, b []Histogram, maxRounds int) (*JointResult, error) {
	k := len(a[0].Noisy)
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
	tol := JointTol * (1 + top)
	y := make([]float64, k)
	res := &JointResult{Capped: true}
	for round := 0; round < maxRounds; round++ {
		if round%16 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		change := 0.0
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
		// project z + p onto the simplices
		for i, h := range all {
			for j := range y {
				y[j] = z[i][j] + p[i][j]
			}
			c, err := h.project(y, scale[i])
			if err != nil {
				return nil, err
			}
			for j := range y {
				p[i][j] = y[j] - c[j]
				change = max(change, math.Abs(c[j]-z[i][j])*scale[i])
				z[i][j] = c[j]
			}
		}
		res.Rounds = round + 1
		if change <= tol && disagreement(z, sign, scale) <= tol {
			res.Capped = false
			break
		}
	}
	// z is in the simplices (the round ended there): it is the estimate
	out := make([][]float64, len(all))
	for i := range all {
		out[i] = make([]float64, k)
		for j, v := range z[i] {
			out[i][j] = v * scale[i]
		}
	}
	res.A, res.B = out[:len(a)], out[len(a):]
	res.Disagreement = disagreement(z, sign, scale)
	return res, nil
}

// disagreement is the largest difference between the two sides' totals
// of a bin, in counts, of z in scaled coordinates.
func disagreement(z [][]float64, sign, scale []float64) float64 {
	d := 0.0
	for j := range z[0] {
		sa, sb := 0.0, 0.0
		for i := range z {
			if sign[i] > 0 {
				sa += z[i][j] * scale[i]
			} else {
				sb += z[i][j] * scale[i]
			}
		}
		d = max(d, math.Abs(sa-sb))
	}
	return d
}

// project is the projection of y, in coordinates c/s, onto the
// histogram's set there: {z ≥ 0, Σ z = N/s}, or ≤ when not Exact.
func (h Histogram) project(y []float64, s float64) ([]float64, error) {
	if h.Exact {
		return Simplex(y, h.N/s)
	}
	return AtMost(y, h.N/s)
}

// Joint's stopping rule: the largest change of a count in a round and the
// largest disagreement of the two sides' totals of a bin, each relative to
// 1 + the largest N, and the most rounds.
const (
	JointTol       = 1e-10
	MaxJointRounds = 100000
)
