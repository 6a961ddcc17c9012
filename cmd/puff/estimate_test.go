package main

import (
	"math"
	"strings"
	"testing"
)

// puff release prints every bin's estimate beside its noisy value (JSON)
// and in an estimate column (text), with the sentence saying what it is;
// on the built-in example (states from CSV: every reading has a value)
// the estimates are non-negative and sum to the readings, as the README's
// example shows (docs/math.md §4.14).
func TestReleaseEstimate(t *testing.T) {
	v := runJSON(t, "release", "--json")
	sum := 0.0
	for _, b := range v["histogram"].([]any) {
		e, ok := b.(map[string]any)["estimate"].(float64)
		if !ok || e < 0 {
			t.Fatalf("bin %v: estimate missing or negative", b)
		}
		sum += e
	}
	if n := v["observations"].(float64); math.Abs(sum-n) > 1e-9*n {
		t.Fatalf("estimates sum to %v, the readings are %v", sum, n)
	}
	out, err := run("release")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "state  private counts  estimate\n") || !strings.Contains(out, "can be negative") || !strings.Contains(out, "summing to the 4770 readings") {
		t.Fatalf("the text report has no estimate column or note:\n%s", out)
	}
}
