package release

import (
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// audit2: day files of one chain with a fixed start (zeros in q), placed
// at their origin, released one by one (plain, joint windows, or mixed),
// composed as the ledger does; the exact loss of every release together
// on the one chain against the total.
func TestAudit2DayFilesWithOrigin(t *testing.T) {
	states := []string{"0", "1"}
	days := [][2]int{{0, 2}, {2, 2}, {4, 3}} // from, n (hours)
	const T = 7
	for _, P := range [][][]float64{
		{{0.8, 0.2}, {0.1, 0.9}},
		{{0.97, 0.03}, {0.02, 0.98}},
		{{0.6, 0.4}, {1, 0}},
		{{0.05, 0.95}, {0.95, 0.05}},
		{{0, 1}, {1, 0}},
	} {
		for _, q := range [][]float64{{1, 0}, {0, 1}} {
			ch, err := markov.New(states, P, markov.InitGiven, q)
			if err != nil {
				t.Fatal(err)
			}
			class, _ := markov.NewClass(states, ch)
			origin := 0.0
			for mode := range 3 { // 0 plain, 1 windows of 1h, 2 alternate
				opts := Options{Epsilon: 1, Method: mechanism.Exact}
				var recs []*record.Release
				var rels []brute.Release
				for i, dd := range days {
					d, err := atOrigin(audit2Data(t, states, dd[0], dd[1], -1), origin)
					if err != nil {
						t.Fatal(err)
					}
					if mode == 1 || (mode == 2 && i%2 == 0) {
						wr, err := releaseWindows(d, class, false, opts, time.Hour, time.UTC)
						if err != nil {
							t.Fatal(err)
						}
						recs = append(recs, wr.Record)
						for j, w := range wr.Windows {
							rels = append(rels, brute.Counts(2, []int{dd[0] + j}, w.PerBinScale))
						}
						continue
					}
					r, err := Histogram(d, class, false, opts)
					if err != nil {
						t.Fatal(err)
					}
					recs = append(recs, r.Record)
					var pos []int
					for j := range dd[1] {
						pos = append(pos, dd[0]+j)
					}
					rels = append(rels, brute.Counts(2, pos, r.PerBinScale))
				}
				v, err := compose.Records(class, recs)
				if err != nil {
					t.Logf("P %v q %v mode %d: compose: %v", P, q, mode, err)
					continue
				}
				loss, at, a, a2, err := brute.Loss(brute.Chain{Q: q, P: P, T: T}, rels)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("P %v q %v mode %d: loss %.4f total %.4f (%s)", P, q, mode, loss, v.Float(), v.Rule)
				if loss > v.Float()+1e-9 {
					t.Errorf("P %v q %v mode %d: loss %.6g > ledger total %.6g (%s) at %d (%d vs %d)", P, q, mode, loss, v.Float(), v.Rule, at, a, a2)
				}
			}
		}
	}
}
