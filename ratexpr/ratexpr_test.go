package ratexpr

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	p := map[string]*big.Rat{"p1": big.NewRat(1, 5)}
	for expr, want := range map[string]string{"1/6": "1/6", "0.25": "1/4", "2*p1*(1-p1)": "8/25", "-(1/2) + 1": "1/2", "1e-2": "1/100", "p1/2": "1/10"} {
		v, err := Eval(expr, p)
		if err != nil || v.RatString() != want {
			t.Errorf("%q = %v (%v), want %s", expr, v, err, want)
		}
	}
	for _, bad := range []string{"", "1/0", "(1", "x", "1 2", "1/"} {
		if _, err := Eval(bad, p); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestJSON(t *testing.T) {
	// A JSON number is the decimal it spells, not the nearest float64.
	for raw, want := range map[string]string{`0.1`: "1/10", `"1/3"`: "1/3", `1e-3`: "1/1000", `"1-1/5"`: "4/5"} {
		v, err := JSON(json.RawMessage(raw), nil)
		if err != nil || v.RatString() != want {
			t.Errorf("%s = %v (%v), want %s", raw, v, err, want)
		}
	}
	if _, err := JSON(json.RawMessage(`true`), nil); err == nil {
		t.Error("true accepted")
	}
}

func TestEvalRefusesHugeNumbers(t *testing.T) {
	for _, in := range []string{"1e-1000000", "2E+5000", strings.Repeat("1", MaxLiteral+1), strings.Repeat("1+", MaxExpr)} {
		if _, err := Eval(in, nil); err == nil {
			t.Errorf("%.20q…: accepted", in)
		}
	}
	if v, err := Eval("1e-300", nil); err != nil || v.Sign() <= 0 {
		t.Fatalf("1e-300: %v %v", v, err)
	}
}
