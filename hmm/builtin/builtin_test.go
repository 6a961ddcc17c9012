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
	}{{"magic", p}, {"noisy-max", Params{Queries: 13, Returns: "index", Neighbours: "one", Alpha: p.Alpha}}, {"noisy-max", Params{Queries: 3, Returns: "max", Neighbours: "one", Alpha: p.Alpha}}} {
		if _, err := Load(bad.name, bad.p); err == nil {
			t.Errorf("%s %+v accepted", bad.name, bad.p)
		}
	}
}
