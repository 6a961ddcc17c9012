package checks

import (
	"math"
	"math/big"
	"testing"
)

func TestChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"ε = 1", Epsilon(1), true},
		{"ε = 0", Epsilon(0), false},
		{"ε < 0", Epsilon(-1), false},
		{"ε NaN", Epsilon(math.NaN()), false},
		{"ε +Inf", Epsilon(math.Inf(1)), false},
		{"spent 0", EpsilonSpent(0), true},
		{"spent NaN", EpsilonSpent(math.NaN()), false},
		{"p = 1", Probability("p", 1), true},
		{"p > 1", Probability("p", 1.5), false},
		{"p NaN", Probability("p", math.NaN()), false},
		{"δ = 0", Delta(big.NewRat(0, 1)), true},
		{"δ = 1", Delta(big.NewRat(1, 1)), false},
		{"δ nil", Delta(nil), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if (c.err == nil) != c.ok {
				t.Fatalf("error %v, want ok = %v", c.err, c.ok)
			}
		})
	}
}
