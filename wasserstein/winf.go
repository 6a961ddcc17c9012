// Package wasserstein implements the Wasserstein Mechanism, which is
// ε-Pufferfish private in any Pufferfish framework ([SWC17] §3, Algorithm 1,
// Theorem 3.2; docs/math.md §2), its (ε, δ) variant ([SWC16] App. A.4,
// Theorem A.8), and the ∞-Wasserstein distance W∞ it is built on.
//
// # Guarantee
//
// With W = max over secret pairs (s_i, s_j) and θ ∈ Θ (both secrets of
// positive probability) of W∞(P(F(X) | s_i, θ), P(F(X) | s_j, θ)), releasing
// F(D) + Lap(W/ε) is ε-Pufferfish private (Theorem 3.2). For a vector query
// with W∞ taken in the L1 ground metric, independent Lap(W/ε) on every
// coordinate is ε-Pufferfish private by the same coupling argument (the
// density ratio of two coupled points is at most exp(ε‖t − s‖₁/W)).
//
// # Exact and bounds
//
// WInf, Trimmed and the mechanism are exact rational computations. WInfFloat
// is a float64 path for very large supports that returns a rigorous upper
// bound (it can only add noise).
package wasserstein

import (
	"fmt"
	"math"
	"math/big"
	"slices"
)

// Dist is a finitely supported distribution on the real line: atoms X with
// non-negative exact weights W (normalised internally; only the proportions
// matter). Atoms need not be sorted or distinct.
type Dist struct {
	X []*big.Rat
	W []*big.Rat
}

// idist is a Dist with sorted distinct atoms and integer weights.
type idist struct {
	x  []*big.Rat
	fx []float64 // float64 approximations of x (nearest), for cheap filters
	w  []*big.Int
}

func (d Dist) normalise(name string) (idist, error) {
	if len(d.X) != len(d.W) {
		return idist{}, fmt.Errorf("wasserstein: %s has %d atoms and %d weights", name, len(d.X), len(d.W))
	}
	den := big.NewInt(1)
	for i, w := range d.W {
		if w == nil || w.Sign() < 0 {
			return idist{}, fmt.Errorf("wasserstein: %s: weight %d is negative", name, i)
		}
		g := new(big.Int).GCD(nil, nil, den, w.Denom())
		den.Mul(den, new(big.Int).Quo(w.Denom(), g))
	}
	idx := make([]int, len(d.X))
	approx := make([]float64, len(d.X))
	for i := range idx {
		idx[i] = i
		approx[i], _ = d.X[i].Float64()
	}
	// Rounding to float64 is monotone, so different floats order the
	// rationals exactly; only equal floats need the exact comparison.
	cmp := func(a, b int) int {
		switch {
		case approx[a] < approx[b]:
			return -1
		case approx[a] > approx[b]:
			return 1
		}
		return d.X[a].Cmp(d.X[b])
	}
	slices.SortFunc(idx, cmp)
	out := idist{x: make([]*big.Rat, 0, len(d.X)), fx: make([]float64, 0, len(d.X)), w: make([]*big.Int, 0, len(d.X))}
	last := -1
	for _, i := range idx {
		if d.W[i].Sign() == 0 {
			continue
		}
		m := new(big.Int).Set(d.W[i].Num())
		if !d.W[i].IsInt() || den.Cmp(bigOne) != 0 {
			m.Mul(m, new(big.Int).Quo(den, d.W[i].Denom()))
		}
		if l := len(out.x); l > 0 && cmp(last, i) == 0 {
			out.w[l-1].Add(out.w[l-1], m)
			continue
		}
		out.x = append(out.x, d.X[i])
		out.fx = append(out.fx, approx[i])
		out.w = append(out.w, m)
		last = i
	}
	if len(out.x) == 0 {
		return idist{}, fmt.Errorf("wasserstein: %s has no mass", name)
	}
	return out, nil
}

var bigOne = big.NewInt(1)

func total(w []*big.Int) *big.Int {
	s := new(big.Int)
	for _, v := range w {
		s.Add(s, v)
	}
	return s
}

// scaled returns the integer weights of μ and ν rescaled to a common total
// (μ by ν's total and vice versa), so masses compare as integers.
func scaled(mu, nu idist) (a, b []*big.Int, tot *big.Int) {
	tm, tn := total(mu.w), total(nu.w)
	a = make([]*big.Int, len(mu.w))
	for i, w := range mu.w {
		a[i] = new(big.Int).Mul(w, tn)
	}
	b = make([]*big.Int, len(nu.w))
	for i, w := range nu.w {
		b[i] = new(big.Int).Mul(w, tm)
	}
	return a, b, new(big.Int).Mul(tm, tn)
}

// WInf returns W∞(μ, ν) exactly: the largest distance between atoms that the
// quantile (monotone) coupling pairs with positive mass, which is optimal on
// the real line (docs/math.md §2). It merges the two step CDFs in one pass:
// O((n + m) log(n + m)) for the sort plus exact integer arithmetic.
func WInf(mu, nu Dist) (*big.Rat, error) {
	a, err := mu.normalise("μ")
	if err != nil {
		return nil, err
	}
	b, err := nu.normalise("ν")
	if err != nil {
		return nil, err
	}
	wa, wb, _ := scaled(a, b)
	ra, rb := new(big.Int).Set(wa[0]), new(big.Int).Set(wb[0])
	i, j := 0, 0
	best := new(big.Rat)
	bestLow := 0.0 // a float64 ≤ best
	d := new(big.Rat)
	const rel = 0x1p-50 // bounds the float error of x (2^-53 each) and of the subtraction
	for {
		// Exact arithmetic only when the pair could beat the best: the true
		// distance is at most est + err, and best ≥ bestLow.
		fa, fb := a.fx[i], b.fx[j]
		huge := math.IsInf(fa, 0) || math.IsInf(fb, 0) // beyond float64: decide exactly
		if est := math.Abs(fa - fb); huge || est+rel*(math.Abs(fa)+math.Abs(fb))+0x1p-1060 >= bestLow {
			d.Sub(a.x[i], b.x[j])
			d.Abs(d)
			if d.Cmp(best) > 0 {
				best.Set(d)
				f, _ := best.Float64()
				bestLow = f - rel*f
				if math.IsInf(f, 1) {
					bestLow = math.MaxFloat64 // best exceeds every float distance
				}
			}
		}
		switch c := ra.Cmp(rb); {
		case c < 0:
			rb.Sub(rb, ra)
			i++
			if i == len(wa) {
				return best, nil
			}
			ra.Set(wa[i])
		case c > 0:
			ra.Sub(ra, rb)
			j++
			if j == len(wb) {
				return best, nil
			}
			rb.Set(wb[j])
		default:
			i++
			j++
			if i == len(wa) || j == len(wb) {
				return best, nil
			}
			ra.Set(wa[i])
			rb.Set(wb[j])
		}
	}
}

// FloatDist is a distribution on the real line in float64: atoms sorted
// ascending (ties allowed) with non-negative weights summing to 1.
type FloatDist struct {
	X []float64
	W []float64
}

// WInfFloat returns an upper bound on W∞(μ, ν) for float64 inputs, for
// supports too large for exact arithmetic. The weights are taken as exact;
// the computed cumulative sums are within τ = (n+m+2)·2^−52 of the true ones,
// so every pair of atoms whose CDF intervals could overlap in exact arithmetic
// is considered (a superset of the quantile coupling's pairs) and the largest
// distance among them, rounded up, is returned. O(n + m) after the inputs are
// sorted; the bound is tight unless two cumulative sums agree to within τ.
func WInfFloat(mu, nu FloatDist) (float64, error) {
	for _, d := range []struct {
		name string
		FloatDist
	}{{"μ", mu}, {"ν", nu}} {
		if len(d.X) != len(d.W) || len(d.X) == 0 {
			return 0, fmt.Errorf("wasserstein: %s needs as many weights as atoms (at least one)", d.name)
		}
		s := 0.0
		for i, w := range d.W {
			if !(w >= 0) || math.IsInf(w, 0) || math.IsNaN(d.X[i]) || math.IsInf(d.X[i], 0) {
				return 0, fmt.Errorf("wasserstein: %s: atom %d has weight %g at %g", d.name, i, w, d.X[i])
			}
			if i > 0 && d.X[i] < d.X[i-1] {
				return 0, fmt.Errorf("wasserstein: %s: atoms must be sorted ascending (atom %d)", d.name, i)
			}
			s += w
		}
		if math.Abs(s-1) > 1e-9 {
			return 0, fmt.Errorf("wasserstein: %s: weights sum to %.17g, not 1", d.name, s)
		}
	}
	mu, nu = positive(mu), positive(nu)
	n, m := len(mu.X), len(nu.X)
	tau := float64(n+m+2) * 0x1p-52
	cum := func(w []float64) []float64 {
		c := make([]float64, len(w)+1)
		for i, v := range w {
			c[i+1] = c[i] + v
		}
		c[len(w)] = 1 // both totals are 1 in exact arithmetic
		return c
	}
	A, B := cum(mu.W), cum(nu.W)
	// Atom i of μ owns (A[i], A[i+1]], atom j of ν owns (B[j], B[j+1]]. They
	// may overlap when A[i] < B[j+1] + 2τ and B[j] < A[i+1] + 2τ; for each i
	// these j form a range [lo, hi] moving right with i, and the largest
	// |x_i − y_j| over a range of sorted y is at one of its ends.
	best := 0.0
	lo := 0
	for i := range n {
		for lo < m-1 && !(A[i] < B[lo+1]+2*tau) {
			lo++
		}
		hi := lo
		for hi+1 < m && B[hi+1] < A[i+1]+2*tau {
			hi++
		}
		best = max(best, math.Abs(mu.X[i]-nu.X[lo]), math.Abs(mu.X[i]-nu.X[hi]))
	}
	return math.Nextafter(best, math.Inf(1)), nil
}

// positive drops atoms of zero weight (their CDF interval is empty).
func positive(d FloatDist) FloatDist {
	var out FloatDist
	for i, w := range d.W {
		if w > 0 {
			out.X = append(out.X, d.X[i])
			out.W = append(out.W, w)
		}
	}
	return out
}
