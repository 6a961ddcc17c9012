// Package estimate turns released noisy answers into consistent estimates:
// the Euclidean projection of a noisy count histogram onto the histograms
// its public size allows (non-negative counts summing to the number of
// readings, or at most to it), and a noisy mean clamped to the range its
// true value lies in.
//
// # Guarantee
//
// Every function here reads only its arguments: the released noisy values
// and public sizes. An estimate is therefore post-processing of a release
// and costs no privacy: whatever Pufferfish (or differential) privacy the
// release has, the release together with its estimate has too ([KM14] §5,
// transformation invariance; docs/math.md §4.14). When the true answer lies
// in the set projected onto, the estimate is never farther from it in the
// Euclidean norm than the noisy answer (a projection onto a closed convex
// set is non-expansive), so it never hurts in L2.
package estimate

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Simplex is the Euclidean projection of y onto the scaled simplex
// {c : c ≥ 0, Σ c = n}: the closest histogram of n readings to the noisy
// counts y. It is c_i = max(y_i − τ, 0) for the one τ with Σ c = n, found
// exactly after sorting y (O(k log k); docs/math.md §4.14). n must be
// finite and ≥ 0, y finite and, for n > 0, not empty.
func Simplex(y []float64, n float64) ([]float64, error) {
	if err := check(y, n); err != nil {
		return nil, err
	}
	if len(y) == 0 {
		if n > 0 {
			return nil, fmt.Errorf("estimate: no bins to hold %g readings", n)
		}
		return []float64{}, nil
	}
	tau := threshold(y, n)
	c := make([]float64, len(y))
	for i, v := range y {
		c[i] = max(v-tau, 0)
	}
	return c, nil
}

// AtMost is the Euclidean projection of y onto {c : c ≥ 0, Σ c ≤ n}: for
// counts whose sum is only known to be at most n (numeric readings, some of
// whose values may be missing and so in no bin; how many is private). It
// is max(y, 0) when that sums to at most n, else Simplex(y, n)
// (docs/math.md §4.14).
func AtMost(y []float64, n float64) ([]float64, error) {
	if err := check(y, n); err != nil {
		return nil, err
	}
	c := make([]float64, len(y))
	s := 0.0
	for i, v := range y {
		c[i] = max(v, 0)
		s += c[i]
	}
	if s <= n {
		return c, nil
	}
	return Simplex(y, n)
}

// Clamp is v moved into [lo, hi]: the closest value to a noisy mean that a
// mean of values in [lo, hi] can take.
func Clamp(v, lo, hi float64) float64 {
	return min(max(v, lo), hi)
}

func check(y []float64, n float64) error {
	if math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
		return fmt.Errorf("estimate: total %v, want a finite number ≥ 0", n)
	}
	for _, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("estimate: a noisy value is not finite")
		}
	}
	return nil
}

// threshold is the τ of Simplex: with u the values in decreasing order and
// S_j = u_1 + … + u_j, ρ is the largest j with u_j > (S_j − n)/j, and
// τ = (S_ρ − n)/ρ ([DSSC08] Fig. 1; docs/math.md §4.14). j = 1 always qualifies
// (u_1 > u_1 − n for n > 0), and for n = 0 τ = u_1 gives c = 0.
func threshold(y []float64, n float64) float64 {
	u := slices.Clone(y)
	slices.Sort(u)
	slices.Reverse(u)
	s, tau := 0.0, u[0]-n
	for j, v := range u {
		s += v
		t := (s - n) / float64(j+1)
		if v <= t {
			break
		}
		tau = t
	}
	return tau
}
