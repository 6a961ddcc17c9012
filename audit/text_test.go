package audit

import (
	"bytes"
	"testing"
)

func TestReportText(t *testing.T) {
	r := Report{Method: "exact", Epsilon: 1, Length: 3, Sigma: 2.5, PerBinScale: 5, EffectiveScale: 5.5, Verdict: "holds", Loss: 0.75, Ratio: "17/8",
		Secret: "x2 = a vs x2 = b", Output: []string{"1", "2"}, States: 12, Explored: 40}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "verdict  holds: exact release at ε = 1, chain length 3\nσ        2.5 (per bin 5, sampled at 5.5)\nloss     0.75 (ratio 17/8, exact)\nwitness  x2 = a vs x2 = b, noisy histogram [1 2]\nmodel    12 hidden states, 40 sequences explored\n"
	if b.String() != want {
		t.Fatalf("\n%s\nwant\n%s", b.String(), want)
	}
}
