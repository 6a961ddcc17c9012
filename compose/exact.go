package compose

import (
	"math"
	"math/big"
	"strconv"
)

// Exact arithmetic of the ledger.
//
// A recorded ε is the rational the user wrote when the record carries it
// (EpsilonRat), else the decimal its float64 prints as (strconv's
// shortest representation: "0.1" for the float nearest 1/10), read as an
// exact rational, so ten releases of 0.1 sum to exactly 1 and a budget check
// never depends on float rounding. The decimal d and the float f a
// mechanism was calibrated with differ by at most half an ulp
// (|d − f| ≤ 2⁻⁵³·f); package noise widens every scale by a factor
// 1 + 2⁻⁵⁰ (noise.ScaleFor), so each release is private at f/(1 + 2⁻⁵⁰) ≤ d:
// the recorded decimal is never an understatement.
//
// Max-influences across gaps come from mqm.Influence, already rounded up;
// they enter as the exact rationals of their floats. Claims carry the
// exact bound (Claim.Bound) and, for display, the float rounded up.

// Rat is the exact rational of a recorded ε, Δ or budget given as a float:
// its shortest decimal representation. NaN and ±Inf have none (nil).
func Rat(f float64) *big.Rat {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return nil
	}
	return r
}

// Up is r as a float64 whose printed (shortest) decimal is never below r:
// how a bound is shown. A float stands for its shortest decimal, as a
// recorded ε does (Rat), so a sum of decimals prints as itself.
func Up(r *big.Rat) float64 {
	f, _ := r.Float64()
	if d := Rat(f); d != nil && d.Cmp(r) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// Down is r as a float64 whose printed decimal is never above r: how a
// remaining budget is shown.
func Down(r *big.Rat) float64 {
	f, _ := r.Float64()
	if d := Rat(f); d != nil && d.Cmp(r) > 0 {
		f = math.Nextafter(f, math.Inf(-1))
	}
	return f
}

// EpsilonRat is the exact ε a ledger charges for a release calibrated at
// the float f: the rational the user wrote (exact, "p/q") when it is
// positive and f is its nearest float64, else f's shortest decimal (Rat).
// Either is never below what the release loses: the noise is calibrated
// at f, widened by 1 + 2⁻⁵⁰ (noise.ScaleFor), so the release is private at
// f/(1 + 2⁻⁵⁰), below both the decimal of f and any rational whose nearest
// float is f (both lie within half an ulp of f).
func EpsilonRat(f float64, exact string) *big.Rat {
	if exact != "" {
		if q, ok := new(big.Rat).SetString(exact); ok && q.Sign() > 0 {
			if g, _ := q.Float64(); g == f {
				return q
			}
		}
	}
	return Rat(f)
}

func ratOf(f float64) *big.Rat { return new(big.Rat).SetFloat64(f) }

func add(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }

func minRat(a, b *big.Rat) *big.Rat {
	if a.Cmp(b) <= 0 {
		return a
	}
	return b
}

func maxRat(a, b *big.Rat) *big.Rat {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

// capBy is min(E, e) for a computed influence e (+Inf: no cap).
func capBy(E *big.Rat, e float64) *big.Rat {
	if math.IsInf(e, 1) {
		return E
	}
	return minRat(E, ratOf(e))
}

func zero() *big.Rat { return new(big.Rat) }
