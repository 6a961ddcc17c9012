package hmm

import (
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

func parseR(s string) (*big.Rat, error) { return ratexpr.Eval(s, nil) }

func TestParseAxis(t *testing.T) {
	for _, c := range []struct {
		spec string
		n    int
		err  string
	}{
		{"p=1/10:1/2:1/10", 5, ""},
		{"q = 0:1:1/4", 5, ""},
		{"p=0:1:1/20000", 0, "more than 10001"},
		{"p=1:0:1", 0, "HI ≥ LO"},
		{"p=0:1:0", 0, "STEP > 0"},
		{"=0:1:1", 0, "want name="},
		{"p=0:1", 0, "want name="},
	} {
		t.Run(c.spec, func(t *testing.T) {
			ax, err := ParseAxis(c.spec, parseR)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || len(ax.Values) != c.n {
				t.Fatalf("%v values, %v", len(ax.Values), err)
			}
		})
	}
}

// Sweep uses the same strategy as check: exact and auto agree point by
// point, and the float enclosure contains every exact loss.
func TestSweepArithmetics(t *testing.T) {
	fh, err := os.Open("../examples/flu_hmm.json")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	file, err := parseFile(fh, "flu_hmm.json")
	if err != nil {
		t.Fatal(err)
	}
	ax, _ := ParseAxis("p=1/10:1/2:1/10", parseR)
	eps, _ := ParseEpsilon("ln(2)")
	exact, err := Sweep(Options{}, file, "flu", []Axis{ax}, 4, ExactArithmetic, eps)
	if err != nil {
		t.Fatal(err)
	}
	float, err := Sweep(Options{}, file, "flu", []Axis{ax}, 4, FloatArithmetic, eps)
	if err != nil {
		t.Fatal(err)
	}
	auto, err := Sweep(Options{}, file, "flu", []Axis{ax}, 4, AutoArithmetic, eps)
	if err != nil {
		t.Fatal(err)
	}
	if len(exact) != 5 || len(float) != 5 || len(auto) != 5 {
		t.Fatalf("%d/%d/%d points", len(exact), len(float), len(auto))
	}
	for i := range exact {
		e, f := exact[i].Exact, float[i].Float
		if e == nil || f == nil || e.Loss < f.LossLo || e.Loss > f.LossHi {
			t.Fatalf("point %d: exact %+v, float %+v", i, e, f)
		}
		if auto[i].Verdict != exact[i].Verdict || exact[i].Verdict != Violated {
			t.Fatalf("point %d: auto %s, exact %s", i, auto[i].Verdict, exact[i].Verdict)
		}
	}
	if _, err := Sweep(Options{}, file, "flu", nil, 4, ExactArithmetic, eps); err == nil {
		t.Fatal("sweep without axes accepted")
	}
	if _, err := ParseArithmetic("fast"); err == nil {
		t.Fatal("arithmetic fast accepted")
	}
}
