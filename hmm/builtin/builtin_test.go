package builtin

import (
	"math/big"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/hmm"
)

func TestLoadEveryBuiltin(t *testing.T) {
	p := Params{Queries: 3, Returns: "index", Neighbours: "one", Alpha: big.NewRat(1, 2), Range: 2,
		Keep: big.NewRat(3, 4), P1: big.NewRat(1, 5), P2: big.NewRat(2, 5), AlphaThreshold: big.NewRat(1, 2), Threshold: 1, Cutoff: 2}
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			b, err := Load(name, p)
			if err == nil {
				err = b.Materialise()
			}
			if err != nil || b.Model == nil || len(b.Secrets) == 0 || b.DefaultLength < 1 || b.Description == "" {
				t.Fatalf("%+v %v", b, err)
			}
			if _, err := hmm.Loss(b.Model, b.Secrets, b.DefaultLength); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, bad := range []struct {
		name string
		p    Params
	}{{"magic", p}, {"noisy-max", Params{Queries: 30, Range: 2, Returns: "index", Neighbours: "one", Alpha: p.Alpha}}, {"noisy-max", Params{Queries: 3, Returns: "max", Neighbours: "one", Alpha: p.Alpha}}} {
		if _, err := Load(bad.name, bad.p); err == nil {
			t.Errorf("%s %+v accepted", bad.name, bad.p)
		}
	}
}

// A DP built-in at length 1 answers from the streaming solver exactly as
// its materialised model does, verdict included.
func TestStreamingEqualsModel(t *testing.T) {
	p := Params{Queries: 4, Returns: "index", Neighbours: "any", Alpha: big.NewRat(1, 2), Range: 2, Keep: big.NewRat(3, 4)}
	eps, _ := hmm.ParseEpsilon("ln(4)")
	for _, name := range []string{"noisy-max", "geometric", "rr"} {
		b, err := Load(name, p)
		if err != nil {
			t.Fatal(err)
		}
		stream, err := b.Evaluate(1, hmm.ExactArithmetic, &eps)
		if err != nil {
			t.Fatal(err)
		}
		if b.Model != nil {
			t.Fatal("length 1 built the model")
		}
		if err := b.Materialise(); err != nil {
			t.Fatal(err)
		}
		want, err := hmm.Evaluate(b.Model, b.Secrets, 1, hmm.ExactArithmetic, &eps)
		if err != nil {
			t.Fatal(err)
		}
		if stream.Verdict != want.Verdict || stream.Exact.Ratio.Cmp(want.Exact.Ratio) != 0 || stream.Exact.Secret != want.Exact.Secret || stream.Exact.Explored != want.Exact.Explored {
			t.Fatalf("%s: streaming %s %v %s %d, model %s %v %s %d", name, stream.Verdict, stream.Exact.Ratio, stream.Exact.Secret, stream.Exact.Explored,
				want.Verdict, want.Exact.Ratio, want.Exact.Secret, want.Exact.Explored)
		}
	}
}
