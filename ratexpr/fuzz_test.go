package ratexpr

import (
	"math/big"
	"testing"
)

// FuzzEval: no expression makes Eval panic or run away.
func FuzzEval(f *testing.F) {
	for _, s := range []string{"1/6", "0.25", "2*p*(1-p)", "-(1e-3)/7", "((1", "1e-1000000", "p/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = Eval(s, map[string]*big.Rat{"p": big.NewRat(1, 3)})
	})
}
