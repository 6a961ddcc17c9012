package compose

import (
	"math"
	"math/big"
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
