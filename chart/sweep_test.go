package chart

import (
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/hmm"
)

// Sweep draws one axis as a curve and two as a region, to the file named.
func TestSweep(t *testing.T) {
	file, err := hmm.ReadFile("../examples/flu_hmm.json")
	if err != nil {
		t.Fatal(err)
	}
	eps, err := hmm.ParseEpsilon("ln(2)")
	if err != nil {
		t.Fatal(err)
	}
	rat := func(s string) (*big.Rat, error) { r, _ := new(big.Rat).SetString(s); return r, nil }
	p, err := hmm.ParseAxis("p=1/10:1/2:1/5", rat)
	if err != nil {
		t.Fatal(err)
	}
	points, err := hmm.Sweep(hmm.Options{}, file, "flu", []hmm.Axis{p}, 2, hmm.ExactArithmetic, eps)
	if err != nil {
		t.Fatal(err)
	}
	res := hmm.SweepResultOf(points, []hmm.Axis{p}, 2, eps)
	if got := res.Axes(); len(got) != 1 || got[0] != "p" {
		t.Fatalf("axes %v", got)
	}
	out := filepath.Join(t.TempDir(), "sweep.svg")
	if err := Sweep(out, res, eps.Value); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("no plot: %v", err)
	}
	if err := Sweep(filepath.Join(t.TempDir(), "sweep.txt"), res, eps.Value); err == nil {
		t.Fatal("a .txt plot was drawn")
	}
}
