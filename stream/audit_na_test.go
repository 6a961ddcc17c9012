package stream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// The lemma of docs/math.md §4.8 ("missing values") on the streaming path:
// numeric readings appended in three files (windows closed by an append,
// by a later append and by a close), with missing values anywhere — a
// whole window's, a whole series' — give windows whose sizes and scales do
// not depend on which values are missing, and whose exact loss, by
// enumeration of the augmented chain Y = (X, missing) with value-dependent
// missingness over the two series concatenated (the junction's kernel
// draws the second series' start afresh), is at most ε for every start of
// either series (the stream's σ holds for any start, §4.9), for counts,
// relative frequencies (integer counts with noise N times the scale) and
// the mean (the sum, an unknown value at the midpoint). At 0.8 of the
// scales the loss exceeds ε for every query, so the check can fail.
func TestAuditNAStreamByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(48, 2025))
	const k = 2
	value := []int{1, 3} // levels 0:4:2: values 1 and 3, midpoint 2
	const mid = 2
	// series a at hours 0..4, b at hours 3..5: positions 0..4 and 5..7
	type row struct {
		series string
		hour   int
		pos    int
	}
	appends := [][]row{
		{{"a", 0, 0}, {"a", 1, 1}, {"a", 2, 2}},
		{{"a", 3, 3}, {"b", 3, 5}},
		{{"a", 4, 4}, {"b", 4, 6}, {"b", 5, 7}},
	}
	windows := [][]int{{0, 1}, {2, 3, 5}, {4, 6, 7}} // 2-hour windows
	worstLow := map[string]float64{}
	for trial, P := range [][][]float64{
		{{0.7, 0.3}, {0.4, 0.6}},
		{{0.2, 0.8}, {0.75, 0.25}},
		{{0.9, 0.1}, {0.15, 0.85}},
	} {
		class, err := markov.ParseClass(strings.NewReader(fmt.Sprintf(`{"states": ["0", "1"], "chains": [{"transition": %v, "initial": [1, 0]}]}`, jsonMatrix(P))), "class")
		if err != nil {
			t.Fatal(err)
		}
		for _, query := range []string{"counts", "relative", "mean"} {
			s, err := Declare(reading.Spec{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: "0:4:2", Step: 3600}, "2h", 1, mechanism.Exact, query, class)
			if err != nil {
				t.Fatal(err)
			}
			// the windows' shapes on files with the same rows and other values
			type shape struct {
				Index                            int64
				Observations, Missing, Sequences int
				Scale, Lipschitz                 float64
			}
			var want []shape
			for rep := range 5 {
				st := s.NewState()
				var got []shape
				for i, rows := range appends {
					var b strings.Builder
					b.WriteString("s,t,v\n")
					for _, r := range rows {
						v := []string{"0.5", "2.5", "NA", "", "?"}[rng.IntN(5)]
						switch {
						case rep == 0:
							v = []string{"0.5", "2.5"}[rng.IntN(2)]
						case rep == 1 && r.series == "b", rep == 2 && r.hour >= 2 && r.hour < 4, rep == 3:
							v = []string{"NA", "", "?", "NaN"}[rng.IntN(4)]
						}
						fmt.Fprintf(&b, "%s,%d,%s\n", r.series, r.hour*3600, v)
					}
					var c *float64
					if i == len(appends)-1 {
						end := 6 * 3600.0
						c = &end
					}
					next, rel, err := s.Append(st, strings.NewReader(b.String()), fmt.Sprint("f", i), c)
					if err != nil {
						t.Fatal(err)
					}
					st = next
					for _, w := range rel {
						got = append(got, shape{w.Index, w.Window.Observations, w.Window.Missing, w.Window.Sequences, w.Window.PerBinScale, w.Window.Lipschitz})
					}
				}
				if want == nil {
					want = got
				} else if !reflect.DeepEqual(got, want) {
					t.Fatalf("trial %d %s: the windows depend on which values are missing:\n%+v\nagainst\n%+v", trial, query, got, want)
				}
			}
			if len(want) != 3 || want[0].Observations != 2 || want[1].Observations != 3 || want[2].Observations != 3 || want[1].Sequences != 2 {
				t.Fatalf("trial %d %s: windows %+v, want 3 of 2, 3, 3 rows", trial, query, want)
			}
			for _, f := range []float64{1, 0.8} {
				var rels []brute.Release
				for j, pos := range windows {
					sc := f * want[j].Scale
					if query != "counts" {
						sc *= float64(len(pos)) // relative and mean: over the window's rows
					}
					rels = append(rels, brute.Release{Scale: sc, Coords: func(y []int) []int {
						if query == "mean" {
							s := 0
							for _, p := range pos {
								if y[p]%2 == 1 {
									s += mid
								} else {
									s += value[y[p]/2]
								}
							}
							return []int{s}
						}
						c := make([]int, k)
						for _, p := range pos {
							if y[p]%2 == 0 {
								c[y[p]/2]++
							}
						}
						return c
					}})
				}
				for _, pm := range [][2][]float64{
					{{0.3, 0.05}, {0.1, 0.6}},
					{{0, 0.9}, {1, 1}}, // b misses every value
				} {
					yk := func(pm []float64) [][]float64 {
						out := make([][]float64, 2*k)
						for y := range out {
							out[y] = make([]float64, 2*k)
							for y2 := range out[y] {
								w := 1 - pm[y2/2]
								if y2%2 == 1 {
									w = pm[y2/2]
								}
								out[y][y2] = P[y/2][y2/2] * w
							}
						}
						return out
					}
					yq := func(q, pm []float64) []float64 {
						out := make([]float64, 2*k)
						for y := range out {
							w := 1 - pm[y/2]
							if y%2 == 1 {
								w = pm[y/2]
							}
							out[y] = q[y/2] * w
						}
						return out
					}
					for _, qa := range [][]float64{{1, 0}, {0, 1}} {
						for _, qb := range [][]float64{{1, 0}, {0.3, 0.7}} {
							pa, pb := yk(pm[0]), yk(pm[1])
							jb := yq(qb, pm[1])
							steps := [][][]float64{pa, pa, pa, pa, {jb, jb, jb, jb}, pb, pb}
							loss, at, a, a2, err := brute.Loss(brute.Chain{Q: yq(qa, pm[0]), Steps: steps, T: 8}, rels)
							if err != nil {
								t.Fatal(err)
							}
							if f < 1 {
								key := fmt.Sprint(query, " at ", f)
								worstLow[key] = max(worstLow[key], loss)
								continue
							}
							if loss > 1+1e-9 || math.IsNaN(loss) {
								t.Errorf("trial %d %s, missing %v, starts %v %v: loss %.9g > ε = 1 at Y_%d = %d vs %d (windows %+v)", trial, query, pm, qa, qb, loss, at+1, a, a2, want)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("worst loss below the scales: %v", worstLow)
	for _, query := range []string{"counts", "relative", "mean"} {
		if l := worstLow[query+" at 0.8"]; l <= 1 || math.IsNaN(l) {
			t.Errorf("%s: at 0.8 of the scales no trial lost more than ε (%v): the check cannot fail", query, worstLow)
		}
	}
}

func jsonMatrix(P [][]float64) string {
	var rows []string
	for _, r := range P {
		var c []string
		for _, v := range r {
			c = append(c, fmt.Sprint(v))
		}
		rows = append(rows, "["+strings.Join(c, ", ")+"]")
	}
	return "[" + strings.Join(rows, ", ") + "]"
}
