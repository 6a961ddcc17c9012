package compose

import (
	"math"
	"math/big"
	"testing"
)

// EpsilonRat charges the rational written when its nearest float is the
// one the noise was calibrated with, and the float's decimal otherwise;
// either is never below what the release loses, f/(1 + 2⁻⁵⁰).
func TestEpsilonRat(t *testing.T) {
	for _, c := range []struct {
		f     float64
		exact string
		want  string
	}{
		{5.0 / 9, "5/9", "5/9"},
		{1.0 / 3, "1/3", "1/3"},
		{0.1, "1/10", "1/10"},
		{0.1, "", "1/10"},                                  // no exact: the decimal
		{5.0 / 9, "", "2777777777777778/5000000000000000"}, // 0.5555555555555556
		{0.5, "1/3", "1/2"},                                // not the float's rational: ignored
		{0.5, "x", "1/2"},
		{0.5, "-1/2", "1/2"},
	} {
		got := EpsilonRat(c.f, c.exact)
		want, _ := new(big.Rat).SetString(c.want)
		if got == nil || got.Cmp(want) != 0 {
			t.Errorf("EpsilonRat(%v, %q) = %v, want %v", c.f, c.exact, got, want)
		}
		// never below the loss of a release calibrated at f
		loss := new(big.Rat).SetFloat64(c.f / (1 + math.Pow(2, -50)))
		if got.Cmp(loss) < 0 {
			t.Errorf("EpsilonRat(%v, %q) = %v below the release's loss %v", c.f, c.exact, got, loss)
		}
	}
}
