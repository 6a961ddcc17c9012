package ledger

import (
	"math/big"
	"testing"
)

// ParseBudget never panics, and an accepted budget is > 0 and stored
// exactly: its decimal reads back as the same rational.
func FuzzParseBudget(f *testing.F) {
	for _, s := range []string{"1", "0.1", "2.5", "1/4", "1/3", "-1", "NaN", "1e400", "1e-30", "0x10", " 3 ", "1e-31"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseBudget(s)
		if err != nil {
			return
		}
		if r.Sign() <= 0 {
			t.Fatalf("%q: budget %v accepted", s, r)
		}
		back, ok := new(big.Rat).SetString(Decimal(r))
		if !ok || back.Cmp(r) != 0 {
			t.Fatalf("%q: %v stored as %q", s, r, Decimal(r))
		}
	})
}
