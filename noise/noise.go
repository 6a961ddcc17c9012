// Package noise is the one door to randomness for releases: Laplace noise
// from a cryptographically secure source, sampled so that floating-point
// artifacts cannot leak the input (Mironov, "On significance of the least
// significant bits for differential privacy", CCS 2012).
//
// # Construction
//
// Following Google's "Secure Noise Generation" note (the construction of
// github.com/google/differential-privacy/go/noise, re-implemented here
// because that package cannot take an injected random source for tests):
// the input is rounded to a multiple of a power of two g ≈ b·2⁻⁴⁰ and a
// two-sided geometric multiple of g is added. Outputs lie on the grid gℤ, so
// no output reveals low-order bits of the input, and the geometric sample
// comes from a bisection driven only by uniform draws and exact comparisons.
//
// # Guarantee
//
// Add(x, b, unit) returns a sample whose distribution, for every pair of
// inputs x, x' with |x − x'| ≤ s and s ≥ unit, has likelihood ratio at most
// exp(s/b) — the ratio of x + Lap(b) — at every output. Rounding can move an
// input by g/2, so the geometric's scale is widened to b·(1 + g/unit), which
// pays for a shift of s + g whenever s ≥ unit. The noise therefore never
// falls below the requested scale.
//
// Release adds such noise to every coordinate of a d-coordinate query of
// Lipschitz constant L (in L1) with unit L/d (Unit). The Markov Quilt
// Mechanism's proof bounds the loss by c·L/b when the query moves by at
// most c·L in L1 (c ≥ 1 readings changed); snapping adds up to g on each
// of the m coordinates that move, and m ≤ d ≤ c·d, so the snapped loss
// Σ(|δ_i| + g)/b' is at most c·L·(1 + g·d/L)/b' ≤ c·L/b at
// b' = b·(1 + g/(L/d)). A unit of L itself would pay for one snapped
// coordinate only: a count histogram moves two bins by 1 per reading,
// and once g > 1 (b > 2⁴⁰) each bin's shift of 1 can snap to g.
//
// The default Source reads crypto/rand. Tests inject a deterministic
// Source; nothing in the release path can construct one.
package noise

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Source yields independent, uniformly distributed 64-bit words.
type Source interface {
	Uint64() uint64
}

type cryptoSource struct{}

func (cryptoSource) Uint64() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand.Read never returns an error on supported platforms
		// (Go 1.24+ crashes the program instead); keep the guard explicit.
		panic("noise: crypto/rand failed: " + err.Error())
	}
	return binary.LittleEndian.Uint64(b[:])
}

// Secure returns the cryptographically secure source (crypto/rand).
func Secure() Source { return cryptoSource{} }

// Laplace adds snapped Laplace noise drawn from its Source.
type Laplace struct {
	src Source
}

// NewLaplace returns a sampler using src; nil means Secure().
func NewLaplace(src Source) *Laplace {
	if src == nil {
		src = Secure()
	}
	return &Laplace{src: src}
}

// granularityParam sets g = the smallest power of two ≥ b / 2⁴⁰ (Google's
// choice: overflow of the geometric is then astronomically unlikely).
const granularityParam = 0x1p40

// Granularity returns the grid spacing g used for scale b.
func Granularity(b float64) float64 {
	return ceilPow2(b / granularityParam)
}

func ceilPow2(x float64) float64 {
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac in [0.5, 1)
	if frac == 0.5 {
		return math.Ldexp(1, exp-1)
	}
	return math.Ldexp(1, exp)
}

// EffectiveScale is the scale b·(1 + g/unit + 2⁻⁵⁰) of the geometric noise
// that Add actually uses, rounded up; it is never below b. The g/unit term
// pays for snapping the input to the grid; the 2⁻⁵⁰ term makes a release
// calibrated with the float64 f nearest a decimal ε private at that exact
// decimal d (|d − f| ≤ 2⁻⁵³·f, so f/(1 + 2⁻⁵⁰) ≤ d), which is what a ledger
// records (guarantee.Rat), and absorbs the rounding of this product.
func EffectiveScale(b, unit float64) float64 {
	return math.Nextafter(b*(1+Granularity(b)/unit+0x1p-50), math.Inf(1))
}

// Add returns x plus noise at least as private as Lap(b) for input changes
// of size ≥ unit (see the package comment). b and unit must be finite and
// positive, x finite.
func (l *Laplace) Add(x, b, unit float64) (float64, error) {
	if !(b > 0) || math.IsInf(b, 0) {
		return 0, fmt.Errorf("noise: scale %v, want a finite number > 0", b)
	}
	if !(unit > 0) || math.IsInf(unit, 0) {
		return 0, fmt.Errorf("noise: unit %v, want a finite number > 0", unit)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errors.New("noise: input is not finite")
	}
	g := Granularity(b)
	lambda := g / EffectiveScale(b, unit)
	k := l.twoSidedGeometric(lambda)
	// x/g and the product are exact: g is a power of two.
	return math.Round(x/g)*g + float64(k)*g, nil
}

// uniform returns a uniform draw from (0, 1) on the grid (j + ½)·2⁻⁵³.
func (l *Laplace) uniform() float64 {
	return (float64(l.src.Uint64()>>11) + 0.5) * 0x1p-53
}

// twoSidedGeometric samples K with P(K = k) ∝ exp(−λ|k|): a magnitude
// M = G − 1 ≥ 0 and a sign, where (M = 0, sign −) is redrawn so that 0 is
// not counted twice.
func (l *Laplace) twoSidedGeometric(lambda float64) int64 {
	for {
		m := l.geometric(lambda) - 1
		neg := l.src.Uint64()&1 == 1
		if m == 0 && neg {
			continue
		}
		if neg {
			return -m
		}
		return m
	}
}

// geometric samples G ≥ 1 with P(G = n) = e^{−λ(n−1)}(1 − e^{−λ}), truncated
// at MaxInt64, by bisection: keep an interval (lo, hi] known to contain G
// and move to the lower half with probability
// P(G ≤ mid | lo < G ≤ hi) = (1 − e^{−λ(mid−lo)}) / (1 − e^{−λ(hi−lo)}),
// choosing mid near the conditional median so each step halves the mass.
func (l *Laplace) geometric(lambda float64) int64 {
	const top = math.MaxInt64
	if l.uniform() > -math.Expm1(-lambda*float64(top)) {
		return top
	}
	var lo, hi int64 = 0, top
	for hi-lo > 1 {
		span := float64(hi - lo)
		// median of the truncated geometric on (lo, hi]
		step := int64(math.Floor(-math.Log(0.5*(1+math.Exp(-lambda*span))) / lambda))
		mid := lo + max(1, min(step, hi-lo-1))
		p := math.Expm1(-lambda*float64(mid-lo)) / math.Expm1(-lambda*span)
		if l.uniform() <= p {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// Unit is the unit Release samples a d-coordinate query of Lipschitz
// constant lipschitz with: lipschitz/d rounded down (see the package
// comment), so that every coordinate's snapping is paid for.
func Unit(lipschitz float64, d int) float64 {
	if d <= 1 {
		return lipschitz
	}
	u := lipschitz / float64(d)
	if math.FMA(u, float64(d), -lipschitz) > 0 {
		u = math.Nextafter(u, 0)
	}
	return u
}

// Sampled is the scale Release's geometric noise has for a d-coordinate
// query of Lipschitz constant lipschitz at per-coordinate scale b
// (EffectiveScale at Unit): what a report prints as the noise sampled.
func Sampled(b, lipschitz float64, d int) float64 {
	return EffectiveScale(b, Unit(lipschitz, d))
}

// ScaleFor is the Laplace scale for a query with Lipschitz constant
// lipschitz (in L1 for vectors) released with the 1-Lipschitz scale sigma
// of the Markov Quilt Mechanism: σ·L, rounded up to the next float64 when
// the product is not exact, so rounding never understates the noise.
func ScaleFor(sigma, lipschitz float64) float64 {
	p := sigma * lipschitz
	if math.FMA(sigma, lipschitz, -p) > 0 {
		p = math.Nextafter(p, math.Inf(1))
	}
	return p
}

// Release returns values with independent noise at least as private as
// Lap(ScaleFor(sigma, lipschitz)) added to every coordinate, at unit
// Unit(lipschitz, len(values)) (the package comment says why): the release
// step of every mechanism whose privacy proof shifts the query by multiples
// of its Lipschitz constant (MQM on chains and networks, [SWC17] Thm 4.3,
// applied coordinate-wise to vector queries). A query with Lipschitz
// constant 0 does not depend on the data and is returned as is. This is
// the one histogram-noise path of release, experiment and puff bn, and the
// one puff verify audit models.
func (l *Laplace) Release(values []float64, sigma, lipschitz float64) ([]float64, error) {
	out := make([]float64, len(values))
	if lipschitz == 0 {
		copy(out, values)
		return out, nil
	}
	if !(lipschitz > 0) || math.IsInf(lipschitz, 0) {
		return nil, fmt.Errorf("noise: Lipschitz constant %v, want a finite number ≥ 0", lipschitz)
	}
	b, unit := ScaleFor(sigma, lipschitz), Unit(lipschitz, len(values))
	for i, x := range values {
		v, err := l.Add(x, b, unit)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
