package guarantee

import (
	"math"
	"math/big"
	"testing"
)

// Charge charges the rational written when its nearest float is the
// one the noise was calibrated with, and the float's decimal otherwise;
// either is never below what the release loses, f/(1 + 2⁻⁵⁰).
func TestCharge(t *testing.T) {
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
		got := Charge(c.f, c.exact)
		want, _ := new(big.Rat).SetString(c.want)
		if got == nil || got.Cmp(want) != 0 {
			t.Errorf("Charge(%v, %q) = %v, want %v", c.f, c.exact, got, want)
		}
		// never below the loss of a release calibrated at f
		loss := new(big.Rat).SetFloat64(c.f / (1 + math.Pow(2, -50)))
		if got.Cmp(loss) < 0 {
			t.Errorf("Charge(%v, %q) = %v below the release's loss %v", c.f, c.exact, got, loss)
		}
	}
}

// A bound shows rounded up and a remainder rounded down, each as the
// shortest decimal of its float: 3/10 as 0.3 both ways, 1/3 above and
// below. The expected decimals are written out, not computed.
func TestUpDown(t *testing.T) {
	if Up(big.NewRat(3, 10)) != 0.3 || Down(big.NewRat(3, 10)) != 0.3 {
		t.Error("0.3 must show as 0.3")
	}
	third := big.NewRat(1, 3)
	if Rat(Up(third)).Cmp(third) < 0 || Rat(Down(third)).Cmp(third) > 0 {
		t.Errorf("1/3 shown as %v / %v", Up(third), Down(third))
	}
	if Up(third) != 0.33333333333333337 || Down(third) != 0.3333333333333333 {
		t.Errorf("1/3 shown as %v / %v, want 0.33333333333333337 / 0.3333333333333333", Up(third), Down(third))
	}
	if got := (Guarantee{Epsilon: big.NewRat(5, 9), Rule: "mqm-sequential", Theorem: "[SC17] Thm III.7"}).String(); got != "ε = 0.555556 by mqm-sequential ([SC17] Thm III.7)" {
		t.Errorf("String() = %q", got)
	}
	if g := None(); g.Float() != 0 || g.Rule != "none" || (Guarantee{}).Float() != 0 {
		t.Errorf("None() = %v", g)
	}
}
