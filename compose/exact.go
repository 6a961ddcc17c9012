package compose

import (
	"math"
	"math/big"
	"slices"
)

// Exact arithmetic of the ledger: every ε is a rational (package
// guarantee: Charge for a record's ε, Rat for a float Δ or budget, Up to
// show a bound). Max-influences across gaps come from mqm.Influence,
// already rounded up; they enter as the exact rationals of their floats.
// Claims carry the exact bound (Claim.Epsilon) and show it rounded up
// (Claim.Float).

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

// event is a change, at time t, of the ε a record is exposed to: +ε where
// a release starts, −ε after it ends.
type event struct {
	t   int
	eps *big.Rat
}

// mostExposed is the largest ε any record is exposed to: the running sum
// of the events in time order, read after the last event of each time.
func mostExposed(ev []event) *big.Rat {
	slices.SortFunc(ev, func(a, b event) int { return a.t - b.t })
	cur, worst := zero(), zero()
	for i, e := range ev {
		cur = add(cur, e.eps)
		if i+1 == len(ev) || ev[i+1].t != e.t {
			worst = maxRat(worst, cur)
		}
	}
	return worst
}
