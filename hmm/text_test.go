package hmm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestReportText(t *testing.T) {
	loss := 0.6931471805599453
	l := LossReport{Model: "rr", Length: 2, Loss: &loss, Ratio: "2/1", Arithmetic: "exact",
		Witness: Witness{Observations: []string{"1", "0"}, Secret: "x = 1 vs x = 0", Larger: "x = 1"}, Explored: 6}
	var b bytes.Buffer
	if err := l.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "model       rr\nlengths     1..2\nloss        0.6931471806 (ratio 2/1)\narithmetic  exact\nwitness     1 0 under x = 1 vs x = 0 (larger under x = 1)\nexplored    6 sequences\n"
	if b.String() != want {
		t.Fatalf("loss:\n%s\nwant\n%s", b.String(), want)
	}
	eps, err := ParseEpsilon("ln(2)")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCheckReport(Holds, eps, l)
	b.Reset()
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if got := strings.SplitN(b.String(), "\n", 2)[0]; got != "verdict     holds: ln(2)-Pufferfish privacy for sequences of lengths 1..2" {
		t.Fatalf("check: %q", got)
	}
	raw, _ := json.Marshal(c)
	var m map[string]any
	json.Unmarshal(raw, &m)
	for _, k := range []string{"verdict", "epsilon", "epsilon_exact", "epsilon_value", "exp_epsilon_low", "exp_epsilon_high", "model", "length", "loss", "ratio", "witness", "explored", "arithmetic"} {
		if _, ok := m[k]; !ok {
			t.Errorf("check JSON: no %q", k)
		}
	}
	if m["exp_epsilon_low"] != "2.00000000000000000000" || m["epsilon_exact"] != true {
		t.Errorf("e^ε of ln(2): %v, exact %v", m["exp_epsilon_low"], m["epsilon_exact"])
	}
}
