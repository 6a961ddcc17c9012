package markov

import (
	"context"
	"errors"
)

// ErrNoPositiveLaw is returned by StationaryGTH when elimination meets a
// state that no other state reaches: the chain is not irreducible.
var ErrNoPositiveLaw = errors.New("the chain is not irreducible (no unique positive stationary law)")

// StationaryGTH returns the stationary law of an irreducible P by the
// Grassmann–Taksar–Heyman state reduction ([OCi93]): only sums of
// non-negative numbers, products and quotients, never the difference
// 1 − P(x,x), so every entry of π has a small relative error (GTHError)
// however sticky the chain — an LU solve of (I − P)ᵀπ = 0 loses every digit
// when P(x,x) ≈ 1 (docs/math.md §8.9). It checks ctx every 64 eliminations
// (O(k³) in all).
func StationaryGTH(ctx context.Context, P [][]float64) ([]float64, error) {
	k := len(P)
	a := make([]float64, k*k)
	for i := range k {
		copy(a[i*k:(i+1)*k], P[i])
	}
	for n := k - 1; n >= 1; n-- {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		s := 0.0
		for j := range n {
			s += a[n*k+j]
		}
		if !(s > 0) {
			return nil, ErrNoPositiveLaw
		}
		for i := range n {
			a[i*k+n] /= s
		}
		for i := range n {
			f := a[i*k+n]
			if f == 0 {
				continue
			}
			for j := range n {
				a[i*k+j] += f * a[n*k+j]
			}
		}
	}
	pi := make([]float64, k)
	pi[0] = 1
	sum := 1.0
	for n := 1; n < k; n++ {
		s := 0.0
		for i := range n {
			s += pi[i] * a[i*k+n]
		}
		pi[n] = s
		sum += s
	}
	for i := range pi {
		pi[i] /= sum
		if !(pi[i] > 0) {
			return nil, ErrNoPositiveLaw
		}
	}
	return pi, nil
}

// GTHError bounds the entrywise relative error of StationaryGTH's π on k
// states: [OCi93]'s analysis of the elimination gives 2k³u to first order
// (u = 2⁻⁵³, docs/math.md §8.10); four times that covers the higher-order
// terms while 8k³u < 10⁻³ (k ≤ 2,000).
func GTHError(k int) float64 {
	return 8 * float64(k) * float64(k) * float64(k) * 0x1p-53
}
