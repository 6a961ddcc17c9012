package release

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// A row whose value is missing is a reading of unknown value (docs/math.md
// §4.8, "missing values"): two files that differ only in values — one of
// them NA — give the same sizes, σ, noise scales and windows, through
// ReadData and the streaming ReadSummary. (Regression: one NA changed
// "missing" 0 → 1, "observations" 4 → 3 and σ, so the exact number of NA
// rows was printed.)
func TestMissingValuesNotRevealed(t *testing.T) {
	lv, err := reading.ParseLevels("0:3:3")
	if err != nil {
		t.Fatal(err)
	}
	states := lv.Names()
	ch, err := markov.New(states, [][]float64{{0.8, 0.1, 0.1}, {0.1, 0.8, 0.1}, {0.1, 0.1, 0.8}}, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	class, _ := markov.NewClass(states, ch)
	file := func(v string) string {
		return "s,t,v\na,0,1.0\na,3600," + v + "\na,7200,2.5\na,10800,0.2\nb,0,NA\nb,3600,?\n"
	}
	opts := reading.CSVOptions{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: lv}
	type view struct {
		Missing, Observations, Sequences int
		Sigma, NoiseScale, Lipschitz     float64
		Windows                          []float64
		Patterns                         []string
	}
	look := func(v string) view {
		var out view
		for _, query := range []string{"counts", "relative", "mean"} {
			d, err := reading.ReadData(strings.NewReader(file(v)), "na.csv", opts)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Histogram(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Query: query})
			if err != nil {
				t.Fatal(err)
			}
			out.Missing, out.Observations, out.Sequences = r.Missing, r.Observations, r.Sequences
			out.Sigma, out.NoiseScale, out.Lipschitz = r.Sigma, out.NoiseScale+r.NoiseScale, out.Lipschitz+r.Lipschitz
			wr, err := releaseWindows(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Query: query}, 2*time.Hour, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range wr.Windows {
				out.Windows = append(out.Windows, w.PerBinScale, float64(w.Observations), float64(w.Missing))
			}
		}
		sum, pats, err := reading.ReadSummary(strings.NewReader(file(v)), "na.csv", opts)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Observations != out.Observations || sum.Missing != out.Missing {
			t.Errorf("%s: ReadSummary has %d readings, %d missing; ReadData %d, %d", v, sum.Observations, sum.Missing, out.Observations, out.Missing)
		}
		for _, p := range pats {
			out.Patterns = append(out.Patterns, p.Series+" "+reading.PatternKey(p.Observation))
		}
		return out
	}
	a, b := look("1.7"), look("NA")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("one NA changes the report:\n value: %+v\n NA:    %+v", a, b)
	}
	if a.Observations != 6 || a.Missing != 0 || a.Sequences != 2 {
		t.Errorf("6 rows in 2 series without gaps read as %d readings, %d missing, %d series", a.Observations, a.Missing, a.Sequences)
	}
}

// The lemma of docs/math.md §4.8 ("missing values") by enumeration: a
// chain X whose value at each step is recorded or missing with a
// probability that depends on the value (the augmented chain Y = (X, M)
// on 2k states), released through joint windows as counts and as the mean
// (a missing value at the midpoint of the level values), at the scales
// the release computes for the pattern of rows. The exact loss over every
// pair of secrets of Y — which covers X_t = a against X_t = b, and even
// whether the value was recorded — is at most ε; at 0.8 of the scales it
// exceeds ε for some trial, so the check can fail.
func TestMissingValuesByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 11))
	lv, err := reading.ParseLevels("0:4:2") // level values 1 and 3, midpoint 2
	if err != nil {
		t.Fatal(err)
	}
	if lv.Values[0] != 1 || lv.Values[1] != 3 {
		t.Fatalf("level values %v", lv.Values)
	}
	states := lv.Names()
	const k, T = 2, 6
	worstLow := 0.0
	for trial := range 8 {
		P := randomKernel(rng, k, false)
		init, q := markov.InitStationary, []float64(nil)
		if trial%2 == 1 {
			init, q = markov.InitGiven, []float64{1, 0}
		}
		ch, err := markov.New(states, P, init, q)
		if err != nil {
			t.Fatal(err)
		}
		q0, _ := ch.Initial()
		class, _ := markov.NewClass(states, ch)
		// missingness depends on the value: pm[x] = P(missing | X = x)
		pm := []float64{0.1 + 0.3*rng.Float64(), 0.5 * rng.Float64()}
		Y := make([][]float64, 2*k)
		QY := make([]float64, 2*k)
		for y := range Y {
			x, m := y/2, y%2
			w := 1 - pm[x]
			if m == 1 {
				w = pm[x]
			}
			QY[y] = q0[x] * w
			Y[y] = make([]float64, 2*k)
			for y2 := range Y[y] {
				x2, m2 := y2/2, y2%2
				w2 := 1 - pm[x2]
				if m2 == 1 {
					w2 = pm[x2]
				}
				Y[y][y2] = P[x][x2] * w2
			}
		}
		width := 2 + trial%2
		// the release's scales for the pattern of T rows, whatever the
		// values and which of them are missing
		var scales map[string][]float64
		for rep := range 3 {
			var b strings.Builder
			b.WriteString("s,t,v\n")
			for i := range T {
				// rep 0: no value missing; reps 1 and 2: missing at
				// different rows (rep*3 ≡ 0 mod 3 made every file the same)
				v := []string{"0.5", "2.5", "NA"}[(i+rep+trial)%3]
				if rep == 0 {
					v = []string{"0.5", "2.5"}[(i+trial)%2]
				}
				fmt.Fprintf(&b, "a,%d,%s\n", i*3600, v)
			}
			d, err := reading.ReadData(strings.NewReader(b.String()), "m.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: lv, Step: 3600})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]float64{}
			for _, query := range []string{"counts", "mean"} {
				wr, err := releaseWindows(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Query: query}, time.Duration(width)*time.Hour, time.UTC)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range wr.Windows {
					s := w.PerBinScale
					if query == "mean" {
						s *= float64(w.Observations) // the sum's scale
					}
					got[query] = append(got[query], s)
				}
			}
			if scales != nil && !reflect.DeepEqual(scales, got) {
				t.Fatalf("trial %d: the scales depend on the values: %v against %v", trial, scales, got)
			}
			scales = got
		}
		var widths []int
		for left := T; left > 0; left -= width {
			widths = append(widths, min(width, left))
		}
		for _, query := range []string{"counts", "mean"} {
			for _, f := range []float64{1, 0.8} {
				var rels []brute.Release
				from := 0
				for j, w := range widths {
					lo, hi := from, from+w
					from = hi
					rels = append(rels, brute.Release{Scale: f * scales[query][j], Coords: func(y []int) []int {
						if query == "mean" {
							s := 0
							for p := lo; p < hi; p++ {
								if y[p]%2 == 1 {
									s += 2 // the midpoint of the level values
								} else {
									s += []int{1, 3}[y[p]/2]
								}
							}
							return []int{s}
						}
						c := make([]int, k)
						for p := lo; p < hi; p++ {
							if y[p]%2 == 0 {
								c[y[p]/2]++
							}
						}
						return c
					}})
				}
				loss, at, a, a2, err := brute.Loss(brute.Chain{Q: QY, P: Y, T: T}, rels)
				if err != nil {
					t.Fatal(err)
				}
				if f < 1 {
					worstLow = max(worstLow, loss)
					continue
				}
				if loss > 1+1e-9 {
					t.Errorf("trial %d (%v, P %v, missing %v, widths %v, %s): loss %.9g > ε = 1 at Y_%d = %d vs %d, scales %v",
						trial, init, P, pm, widths, query, loss, at+1, a, a2, scales[query])
				}
			}
		}
	}
	t.Logf("worst loss at 0.8 of the scales: %.4g", worstLow)
	if worstLow <= 1 || math.IsNaN(worstLow) {
		t.Errorf("at 0.8 of the scales no trial lost more than ε (worst %.4g): the check cannot fail", worstLow)
	}
}
