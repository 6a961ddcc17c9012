package release

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/record"
)

func audit2Data(t *testing.T, states []string, from, n, miss int) *reading.Data {
	t.Helper()
	var b strings.Builder
	b.WriteString("s,t,state\n")
	for i := range n {
		if from+i == miss {
			continue
		}
		fmt.Fprintf(&b, "a,%d,%d\n", (from+i)*3600, i%len(states))
	}
	d, err := reading.ReadData(strings.NewReader(b.String()), "w.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", StateCol: "state", States: states, Step: 3600})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// audit2: a joint-window release, a plain release and a second windowing
// on the same series, composed by compose.Records (the ledger's total);
// the exact loss of all three together must not exceed the total.
func TestAudit2ComposeJointPlainWindows(t *testing.T) {
	if os.Getenv("PUFF_LONG_TESTS") == "" {
		t.Skip("about a minute of enumeration: set PUFF_LONG_TESTS=1")
	}
	states := []string{"0", "1"}
	for _, P := range [][][]float64{
		{{0.8, 0.2}, {0.1, 0.9}},
		{{0.05, 0.95}, {0.95, 0.05}},
		{{0.97, 0.03}, {0.02, 0.98}},
		{{0.6, 0.4}, {1, 0}},
	} {
		for _, init := range []markov.InitKind{markov.InitStationary, markov.InitGiven, markov.InitAny} {
			var q []float64
			if init == markov.InitGiven {
				q = []float64{1, 0}
			}
			ch, err := markov.New(states, P, init, q)
			if err != nil {
				t.Fatal(err)
			}
			class, _ := markov.NewClass(states, ch)
			starts := [][]float64{q}
			switch init {
			case markov.InitStationary:
				pi, _ := ch.Initial()
				starts = [][]float64{pi}
			case markov.InitAny:
				starts = [][]float64{{1, 0}, {0, 1}, {0.5, 0.5}}
			}
			const T = 6
			d := audit2Data(t, states, 0, T, 2)
			opts := Options{Epsilon: 1, Method: mechanism.Exact, UnknownStart: true}
			w2, err := releaseWindows(d, class, false, opts, 2*time.Hour, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := Histogram(d, class, false, opts)
			if err != nil {
				t.Fatal(err)
			}
			w3, err := releaseWindows(d, class, false, opts, 3*time.Hour, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			recs := []*record.Release{w2.Record, plain.Record, w3.Record}
			v, err := compose.Records(class, recs)
			if err != nil {
				t.Logf("P %v %v: compose: %v", P, init, err)
				continue
			}
			var rels []brute.Release
			rels = append(rels, brute.Windows(2, T, []int{2, 2, 2}, []int{2}, []float64{w2.Windows[0].PerBinScale, w2.Windows[1].PerBinScale, w2.Windows[2].PerBinScale})...)
			rels = append(rels, brute.Windows(2, T, []int{6}, []int{2}, []float64{plain.PerBinScale})...)
			rels = append(rels, brute.Windows(2, T, []int{3, 3}, []int{2}, []float64{w3.Windows[0].PerBinScale, w3.Windows[1].PerBinScale})...)
			for _, q0 := range starts {
				loss, at, a, a2, err := brute.Loss(brute.Chain{Q: q0, P: P, T: T}, rels)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("P %v %v start %v: loss %.4f total %.4f (%s; mechs %s %s %s, σ %g %g %g)", P, init, q0, loss, v.Float(), v.Rule,
					w2.Record.Mechanism, plain.Record.Mechanism, w3.Record.Mechanism, w2.Record.Sigma, plain.Record.Sigma, w3.Record.Sigma)
				if loss > v.Float()+1e-9 {
					t.Errorf("P %v %v start %v: loss %.6g > ledger total %.6g (%s) at %d (%d vs %d)", P, init, q0, loss, v.Float(), v.Rule, at, a, a2)
				}
			}
		}
	}
}

// audit2: day files of one chain with a fixed start q = (1, 0), released
// one by one without an origin (UnknownStart, as a recorded release is),
// composed by compose.Records; the exact loss of both days together on
// the one chain must not exceed the total.
func TestAudit2DayFilesNoOrigin(t *testing.T) {
	states := []string{"0", "1"}
	for _, P := range [][][]float64{
		{{0.8, 0.2}, {0.1, 0.9}},
		{{0.97, 0.03}, {0.02, 0.98}},
		{{0.6, 0.4}, {1, 0}},
		{{0.05, 0.95}, {0.95, 0.05}},
	} {
		q := []float64{1, 0}
		ch, err := markov.New(states, P, markov.InitGiven, q)
		if err != nil {
			t.Fatal(err)
		}
		class, _ := markov.NewClass(states, ch)
		const day = 3
		opts := Options{Epsilon: 1, Method: mechanism.Exact, UnknownStart: true}
		d1 := audit2Data(t, states, 0, day, -1)
		d2 := audit2Data(t, states, day, day, -1)
		for _, windowed := range []bool{false, true} {
			var recs []*record.Release
			var rels []brute.Release
			for i, d := range []*reading.Data{d1, d2} {
				if windowed {
					wr, err := releaseWindows(d, class, false, opts, time.Hour, time.UTC)
					if err != nil {
						t.Fatal(err)
					}
					recs = append(recs, wr.Record)
					for j, w := range wr.Windows {
						rels = append(rels, brute.Counts(2, []int{i*day + j}, w.PerBinScale))
					}
					continue
				}
				r, err := Histogram(d, class, false, opts)
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r.Record)
				pos := []int{i * day, i*day + 1, i*day + 2}
				rels = append(rels, brute.Counts(2, pos, r.PerBinScale))
			}
			v, err := compose.Records(class, recs)
			if err != nil {
				t.Logf("P %v: compose: %v", P, err)
				continue
			}
			loss, at, a, a2, err := brute.Loss(brute.Chain{Q: q, P: P, T: 2 * day}, rels)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("P %v windowed %v: loss %.4f total %.4f (%s) segs %v %v", P, windowed, loss, v.Float(), v.Rule, recs[0].Segments, recs[1].Segments)
			if loss > v.Float()+1e-9 {
				t.Errorf("P %v windowed %v: loss %.6g > ledger total %.6g (%s) at %d (%d vs %d)", P, windowed, loss, v.Float(), v.Rule, at, a, a2)
			}
		}
	}
}
