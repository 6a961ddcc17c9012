// Package guarantee is the one privacy guarantee value of the toolkit: ε as
// an exact rational, the rule and theorem that give it, and the secrets it
// covers. A mechanism's release produces one (its own ε, "single release");
// the release record carries the exact ε the user typed
// (record.Release.EpsilonExact, charged by Charge); composition
// (package compose) turns a dataset's records into one; the ledger stores
// it (ledger.State.Spent) and every output — puff, puff serve, puffbeam —
// prints it, rounded up by Up, never recomputed from a float.
//
// Exactness. ε is a *big.Rat from what the user typed to the ledger's
// budget check. Floats appear only at the two ends: the float a
// mechanism's noise is calibrated with (Charge says which rational it is
// charged as, never below what the release loses) and the float an output
// shows (Up: never below the rational; Down for what remains of a budget:
// never above it). See docs/math.md "Exact accounting".
package guarantee

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Guarantee is what a set of releases promises about one dataset: the
// privacy loss of any pair of secrets it covers is at most Epsilon, by Rule,
// proved in Theorem.
type Guarantee struct {
	// Epsilon is ε exact; nil when no rule gives one (see Applies of
	// compose.Claim). A bound, never an estimate: every rational on the
	// way is rounded up.
	Epsilon *big.Rat
	Rule    string // the composition rule ("single", "mqm-sequential", ..., "none")
	Theorem string // where the rule is proved, by bibliography key
	Covers  string // the secrets it protects when the rule says ("" : every pair of Θ)
}

// None is the guarantee of no release: ε = 0 by rule "none".
func None() Guarantee { return Guarantee{Epsilon: new(big.Rat), Rule: "none"} }

// Float is ε shown as a float64 whose shortest decimal is never below ε
// (Up); 0 when ε is nil.
func (g Guarantee) Float() float64 {
	if g.Epsilon == nil {
		return 0
	}
	return Up(g.Epsilon)
}

// String is "ε = 0.5 by rule (theorem)", ε rounded up.
func (g Guarantee) String() string {
	s := fmt.Sprintf("ε = %.6g by %s", g.Float(), g.Rule)
	if g.Theorem != "" {
		s += " (" + g.Theorem + ")"
	}
	return s
}

// Rat is the exact rational of a recorded ε, Δ or budget given as a float:
// its shortest decimal representation ("0.1" for the float nearest 1/10),
// so ten releases of 0.1 sum to exactly 1 and a budget check never depends
// on float rounding. NaN and ±Inf have none (nil).
//
// The decimal d and the float f a mechanism was calibrated with differ by
// at most half an ulp (|d − f| ≤ 2⁻⁵³·f); package noise widens every scale
// by a factor 1 + 2⁻⁵⁰ (noise.ScaleFor), so each release is private at
// f/(1 + 2⁻⁵⁰) ≤ d: the decimal is never an understatement.
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

// Charge is the exact ε a ledger charges for a release calibrated at the
// float f: the rational the user wrote (exact, "p/q", as
// record.Release.EpsilonExact keeps it) when it is positive and f is its
// nearest float64, else f's shortest decimal (Rat). Either is never below
// what the release loses: the noise is calibrated at f, widened by
// 1 + 2⁻⁵⁰ (noise.ScaleFor), so the release is private at f/(1 + 2⁻⁵⁰),
// below both the decimal of f and any rational whose nearest float is f
// (both lie within half an ulp of f).
func Charge(f float64, exact string) *big.Rat {
	if exact != "" {
		if q, ok := new(big.Rat).SetString(exact); ok && q.Sign() > 0 {
			if g, _ := q.Float64(); g == f {
				return q
			}
		}
	}
	return Rat(f)
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
