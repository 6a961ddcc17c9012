package release

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// audit2: joint windows of the mean level value (numeric readings,
// levels with unequal, non-monotone values), a missing value at a window
// edge, two series (the second later and shorter), by enumeration: the
// mean of window j is (Σ values)/N_j with Lap(b_j), i.e. the integer sum
// of values with Lap(b_j·N_j).
func TestAudit2JointWindowsMean(t *testing.T) {
	for _, tc := range []struct {
		P    [][]float64
		init markov.InitKind
		q    []float64
	}{
		{[][]float64{{0.02, 0.96, 0.02}, {0.02, 0.02, 0.96}, {0.96, 0.02, 0.02}}, markov.InitStationary, nil},
		{[][]float64{{0.9, 0.1, 0}, {0, 0.9, 0.1}, {0.1, 0, 0.9}}, markov.InitGiven, []float64{1, 0, 0}},
		{[][]float64{{0.5, 0.5, 0}, {0, 0, 1}, {1, 0, 0}}, markov.InitAny, nil},
		{[][]float64{{0.98, 0.01, 0.01}, {0.01, 0.98, 0.01}, {0.01, 0.01, 0.98}}, markov.InitStationary, nil},
	} {
		lv, err := reading.ParseLevels("0:3:3")
		if err != nil {
			t.Fatal(err)
		}
		vals := []float64{0, 5, 1}
		lv.Values = vals
		states := lv.Names()
		ch, err := markov.New(states, tc.P, tc.init, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		class, _ := markov.NewClass(states, ch)
		starts := [][]float64{tc.q}
		switch tc.init {
		case markov.InitStationary:
			pi, _ := ch.Initial()
			starts = [][]float64{pi}
		case markov.InitAny:
			starts = [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
		}
		// a: hours 0..3, value missing at hour 2; b: hours 2..3
		var b strings.Builder
		b.WriteString("s,t,v\n")
		for i, v := range []string{"0.5", "1.5", "NA", "2.5"} {
			fmt.Fprintf(&b, "a,%d,%s\n", i*3600, v)
		}
		fmt.Fprintf(&b, "b,%d,2.5\nb,%d,0.5\n", 2*3600, 3*3600)
		d, err := reading.ReadData(strings.NewReader(b.String()), "m.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: lv, Step: 3600})
		if err != nil {
			t.Fatal(err)
		}
		wr, err := releaseWindows(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Query: "mean"}, 2*time.Hour, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		// positions: a 0..3 (2 missing), b 4..5 (hours 2, 3)
		wins := [][]int{{0, 1}, {3, 4, 5}}
		if len(wr.Windows) != 2 {
			t.Fatalf("%d windows", len(wr.Windows))
		}
		var rels []brute.Release
		for j, pos := range wins {
			pos := pos
			rels = append(rels, brute.Release{Scale: wr.Windows[j].PerBinScale * float64(len(pos)), Coords: func(x []int) []int {
				s := 0
				for _, p := range pos {
					s += int(vals[x[p]])
				}
				return []int{s}
			}})
		}
		for _, q0 := range starts {
			steps := make([][][]float64, 5)
			for i := range steps {
				steps[i] = tc.P
			}
			steps[3] = [][]float64{q0, q0, q0}
			loss, at, a, a2, err := brute.Loss(brute.Chain{Q: q0, P: tc.P, Steps: steps, T: 6}, rels)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("P %v %v start %v: loss %.4f (calibration %s)", tc.P, tc.init, q0, loss, wr.Windows[0].Calibration.Method)
			if loss > 1+1e-9 {
				t.Errorf("P %v %v start %v: mean windows lose %.6g > ε = 1 at %d (%d vs %d)", tc.P, tc.init, q0, loss, at, a, a2)
			}
		}
	}
}
