package stream

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// audit2: everything a stream releases (appends that split windows, a
// series joining later, a missing value at a window edge, a final close),
// by exact enumeration over the two series concatenated (the junction's
// kernel draws the second series' start afresh), for several starts of
// each series, against the stream's ε.
func TestAudit2StreamByBruteForce(t *testing.T) {
	for _, tc := range []struct {
		P     string
		init  string
		query string
	}{
		{`[[0.8, 0.2], [0.1, 0.9]]`, `[1, 0]`, "counts"},
		{`[[0.97, 0.03], [0.02, 0.98]]`, `"stationary"`, "counts"},
		{`[[0.05, 0.95], [0.95, 0.05]]`, `"any"`, "relative"},
		{`[[0.6, 0.4], [1, 0]]`, `[0, 1]`, "relative"},
		{`[[0.97, 0.03], [0.02, 0.98]]`, `[1, 0]`, "relative"},
	} {
		class, err := markov.ParseClass(strings.NewReader(`{"states": ["0", "1"], "chains": [{"transition": `+tc.P+`, "initial": `+tc.init+`}]}`), "class")
		if err != nil {
			t.Fatal(err)
		}
		P := class.Chains[0].P
		for _, eps := range []float64{0.5, 1} {
			s, err := Declare(reading.Spec{States: "0,1", Step: 3600, SeriesCol: "s", TimeCol: "t", StateCol: "state"}, "2h", eps, mechanism.Exact, tc.query, class)
			if err != nil {
				t.Fatal(err)
			}
			// series a at hours 0..4 (value missing at hour 3), b at hours 3..5
			appends := []string{
				"s,t,state\na,0,0\na,3600,1\na,7200,1\n",
				"s,t,state\nb,10800,0\n",
				"s,t,state\na,14400,0\nb,14400,1\nb,18000,1\n",
			}
			st := s.NewState()
			var got []Released
			for i, body := range appends {
				var next State
				var rel []Released
				var err error
				if i == len(appends)-1 {
					c := 6 * 3600.0
					next, rel, err = s.Append(st, strings.NewReader(body), fmt.Sprint("f", i), &c)
				} else {
					next, rel, err = s.Append(st, strings.NewReader(body), fmt.Sprint("f", i), nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				st = next
				got = append(got, rel...)
			}
			// positions: a hours 0..4 → 0..4 (3 missing), b hours 3..5 → 5..7
			hours := []int{0, 1, 2, 3, 4, 3, 4, 5}
			miss := map[int]bool{3: true}
			var rels []brute.Release
			for _, w := range got {
				var pos []int
				for p, h := range hours {
					if !miss[p] && int64(h/2) == w.Index {
						pos = append(pos, p)
					}
				}
				sc := w.Window.PerBinScale
				if tc.query == "relative" {
					sc *= float64(len(pos))
				}
				rels = append(rels, brute.Counts(2, pos, sc))
			}
			if len(got) != 3 {
				t.Fatalf("%d windows released, want 3", len(got))
			}
			cands := [][]float64{{1, 0}, {0, 1}, {0.5, 0.5}}
			if pi, err := class.Chains[0].Initial(); err == nil {
				cands = append(cands, pi)
			}
			for _, qa := range cands {
				for _, qb := range cands {
					steps := make([][][]float64, 7)
					for i := range steps {
						steps[i] = P
					}
					steps[4] = [][]float64{qb, qb}
					loss, at, a, a2, err := brute.Loss(brute.Chain{Q: qa, P: P, Steps: steps, T: 8}, rels)
					if err != nil {
						t.Fatal(err)
					}
					if loss > eps+1e-9 {
						t.Errorf("P %s init %s %s ε %g starts %v %v: loss %.6g > ε at %d (%d vs %d); calibration %s", tc.P, tc.init, tc.query, eps, qa, qb, loss, at, a, a2, got[0].Window.Calibration.Method)
					}
				}
			}
			t.Logf("P %s init %s %s ε %g: calibration %s σ %g", tc.P, tc.init, tc.query, eps, got[0].Window.Calibration.Method, got[0].Window.Sigma)
		}
	}
}
