package epsilon

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
)

// Every spelling reads to the value computed here independently (math.Log
// and the decimal), and the enclosure of e^ε contains math.Exp of it.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		in    string
		value float64
		exact bool
	}{
		{"0.5", 0.5, false},
		{"1/2", 0.5, false},
		{" 2 ", 2, false},
		{"1e-3", 0.001, false},
		{"700", 700, false},
		{"ln(2)", math.Ln2, true},
		{"ln(3/2)", math.Log(1.5), true},
		{"ln(1.5)", math.Log(1.5), true},
	} {
		e, err := Parse(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if math.Abs(e.Value-c.value) > 1e-15*c.value || e.Exact() != c.exact {
			t.Errorf("%q: %v exact %v, want %v exact %v", c.in, e.Value, e.Exact(), c.value, c.exact)
		}
		if c.value < 700 {
			lo, _ := e.Lo.Float64()
			hi, _ := e.Hi.Float64()
			if w := math.Exp(c.value); !(lo <= w*(1+1e-14) && hi >= w*(1-1e-14)) {
				t.Errorf("%q: e^ε enclosure [%v, %v] misses %v", c.in, lo, hi, w)
			}
		}
		if !c.exact && (e.Rat == nil || e.Rat.Cmp(new(big.Rat).SetFloat64(c.value)) != 0 && c.in != "1e-3") {
			t.Errorf("%q: rational ε %v", c.in, e.Rat)
		}
	}
	if e, _ := Parse("1e-3"); e.Rat.Cmp(big.NewRat(1, 1000)) != 0 {
		t.Errorf("1e-3 kept as %v, want exactly 1/1000", e.Rat)
	}
	for _, bad := range []string{"", "0", "-1", "701", "ln(1)", "ln(1/2)", "ln(x)", "abc", "NaN", "1e400", "1e-400", "ln(1e400)", "ln(2"} {
		if e, err := Parse(bad); err == nil {
			t.Errorf("%q accepted as %v", bad, e.Value)
		} else if !strings.Contains(err.Error(), "epsilon") {
			t.Errorf("%q: error %q does not name epsilon", bad, err)
		}
	}
}

// JSON numbers and JSON strings read as Parse reads their text; other
// JSON values are refused.
func TestParseJSON(t *testing.T) {
	for _, c := range []struct{ raw, text string }{
		{`0.5`, "0.5"}, {`"0.5"`, "0.5"}, {`"1/2"`, "1/2"}, {`"ln(2)"`, "ln(2)"}, {` 2 `, "2"}, {`1e-3`, "1e-3"}, {`"ln(3/2)"`, "ln(3/2)"},
	} {
		got, err := ParseJSON(json.RawMessage(c.raw))
		want, werr := Parse(c.text)
		if err != nil || werr != nil || got.Value != want.Value || got.Lo.Cmp(want.Lo) != 0 || got.Hi.Cmp(want.Hi) != 0 {
			t.Errorf("%s: %v %v, want %v %v", c.raw, got.Value, err, want.Value, werr)
		}
	}
	for _, bad := range []string{``, `null`, `true`, `[1]`, `{"e": 1}`, `"NaN"`, `-1`, `0`, `1e400`, `"ln(1)"`, `"x"`, `"\u0000"`, `"1`} {
		if e, err := ParseJSON(json.RawMessage(bad)); err == nil {
			t.Errorf("%s accepted as %v", bad, e.Value)
		}
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`1`, `"ln(2)"`, `"1/3"`, `0.5`, `"ln(1e9)"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseJSON(json.RawMessage(s))
		if err == nil && !(e.Value > 0 && e.Value <= 700 && e.Lo.Cmp(e.Hi) <= 0) {
			t.Fatalf("%q accepted as ε = %v, e^ε in [%v, %v]", s, e.Value, e.Lo, e.Hi)
		}
	})
}
