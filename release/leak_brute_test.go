package release

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/tpl/exact"
)

// A whole-series release (no window, no profile) calibrated by the
// temporal leakage bound (docs/math.md §8.6: the histogram is event-level
// DP per reading at the per-bin scale b) loses at most ε, by enumeration
// of every sequence and the exact output densities at the grid points
// where the supremum is attained (§8.8; internal/brute), for one series
// and for series pooled in one histogram (§8.7, tpl/exact). On these
// sticky chains the bound is tight: at 0.9·b the exact loss is over ε, so
// a calibration 10% too small fails here.
func TestWholeSeriesLeakageByBruteForce(t *testing.T) {
	for _, tc := range []struct {
		P    [][]float64
		init markov.InitKind
		q    []float64
		T    int
	}{
		{[][]float64{{0.9, 0.1}, {0.1, 0.9}}, markov.InitStationary, nil, 4},
		{[][]float64{{0.8, 0.2}, {0.1, 0.9}}, markov.InitStationary, nil, 6},
		{[][]float64{{0.98, 0.02}, {0.05, 0.95}}, markov.InitGiven, []float64{0.3, 0.7}, 5},
		{[][]float64{{0.9, 0.05, 0.05}, {0.05, 0.9, 0.05}, {0.05, 0.05, 0.9}}, markov.InitStationary, nil, 4},
		{[][]float64{{0.85, 0.1, 0.05}, {0.05, 0.9, 0.05}, {0.1, 0.05, 0.85}}, markov.InitGiven, []float64{1, 0, 0}, 4},
	} {
		for _, eps := range []float64{0.5, 2} {
			k := len(tc.P)
			states := []string{"a", "b", "c"}[:k]
			ch, err := markov.New(states, tc.P, tc.init, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			class, _ := markov.NewClass(states, ch)
			q0, _ := ch.Initial()
			name := fmt.Sprintf("P=%v %v T=%d ε=%g", tc.P, tc.init, tc.T, eps)
			// one series of T readings
			var b strings.Builder
			for i := range tc.T {
				fmt.Fprintf(&b, "%s\n", states[i%k])
			}
			d, err := reading.ReadData(strings.NewReader(b.String()), "x", reading.CSVOptions{States: states})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Histogram(d, class, false, Options{Epsilon: eps, Method: mechanism.Exact})
			if err != nil {
				t.Fatal(err)
			}
			c := r.Calibration
			if c == nil || c.Method != calibratedTPL || r.Sigma != c.TPL || r.Sigma >= c.MQM || r.PerBinScale != 2*r.Sigma || r.Record.Mechanism != mechanism.Pufferfish || r.Record.Sigma != r.Sigma {
				t.Fatalf("%s: σ %v, per-bin %v, calibration %+v, record %+v: want the leakage bound's σ, below MQM's", name, r.Sigma, r.PerBinScale, c, r.Record)
			}
			pos := make([]int, tc.T)
			for i := range pos {
				pos[i] = i
			}
			at := func(scale float64) float64 {
				loss, _, _, _, err := brute.Loss(brute.Chain{Q: q0, P: tc.P, T: tc.T}, []brute.Release{brute.Counts(k, pos, scale)})
				if err != nil {
					t.Fatal(err)
				}
				return loss
			}
			if loss := at(r.PerBinScale); loss > eps*(1+1e-9) {
				t.Errorf("%s: per-bin %v loses %v > ε", name, r.PerBinScale, loss)
			}
			if loss := at(0.9 * r.PerBinScale); loss <= eps {
				t.Errorf("%s: 0.9 × per-bin %v loses %v ≤ ε: the check does not bite", name, r.PerBinScale, loss)
			}
			// a second series two steps shorter, pooled in the same
			// histogram: no more than the worst single series (§8.7)
			if k == 3 {
				continue // k^(2T) joint sequences: kept to two states
			}
			b.Reset()
			b.WriteString("s,t,state\n")
			for i := range tc.T {
				fmt.Fprintf(&b, "x,%d,%s\n", i, states[i%k])
			}
			for i := range tc.T - 2 {
				fmt.Fprintf(&b, "y,%d,%s\n", i, states[(i+1)%k])
			}
			d2, err := reading.ReadData(strings.NewReader(b.String()), "xy", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", StateCol: "state", States: states})
			if err != nil {
				t.Fatal(err)
			}
			r2, err := Histogram(d2, class, false, Options{Epsilon: eps, Method: mechanism.Exact})
			if err != nil {
				t.Fatal(err)
			}
			if r2.Calibration == nil || r2.Calibration.Method != calibratedTPL || r2.PerBinScale != r.PerBinScale {
				t.Fatalf("%s, two series: per-bin %v, calibration %+v: want the longest series' %v", name, r2.PerBinScale, r2.Calibration, r.PerBinScale)
			}
			short := make([]bool, tc.T)
			short[tc.T-1], short[tc.T-2] = true, true
			loss, err := exact.Loss([]exact.Series{{P: tc.P, Q: q0}, {P: tc.P, Q: q0, Missing: short}}, []int{tc.T}, r2.PerBinScale)
			if err != nil {
				t.Fatal(err)
			}
			if loss > eps*(1+1e-9) {
				t.Errorf("%s, two series pooled: per-bin %v loses %v > ε", name, r2.PerBinScale, loss)
			}
		}
	}
}
