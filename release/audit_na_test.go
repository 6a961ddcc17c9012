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

// zeroSource makes the Laplace sampler draw no noise (every uniform is
// the smallest, so the geometric magnitude is 0 and its sign +): the
// release then prints its query's answer, rounded to the noise grid.
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

// naAuditLayout is the audit's data: series a with rows at hours 0, 1, 3,
// 4 (no row at hour 2: a missing reading the chain runs through) and
// series b with rows at hours 0, 1, 2. In the enumerated chain a takes
// positions 0..4 (position 2 has no row) and b positions 5..7, b starting
// afresh (the series are independent chains of the class).
var naAuditLayout = []struct {
	series string
	hour   int
	pos    int
}{{"a", 0, 0}, {"a", 1, 1}, {"a", 3, 3}, {"a", 4, 4}, {"b", 0, 5}, {"b", 1, 6}, {"b", 2, 7}}

// naAuditWindows are the positions of each 2-hour window (pooled over the
// series): [0h, 2h) a0 a1 b0 b1, [2h, 4h) a3 b2, [4h, 6h) a4.
var naAuditWindows = [][]int{{0, 1, 5, 6}, {3, 7}, {4}}

// The lemma of docs/math.md §4.8 ("missing values") by enumeration, for
// what TestMissingValuesByBruteForce leaves out: two series (independent
// chains of one class, each with its own value-dependent missingness, one
// of them missing every value in some trials), a time without a row inside
// a series, the relative frequencies (counts over the public number of
// rows N: integer coordinates with noise of scale N·b), the whole-data
// histogram as well as joint windows, and fixed starts with zeros in both
// orders. The sizes and scales the release prints must not depend on which
// values are missing (every file of the trial, including one whose series
// b is all NA and one with no value at all, gives the same), the answer
// without noise must be the query's definition (counts of known values;
// relative: over N rows; mean: an unknown value at the midpoint), and the
// exact loss over every secret of the augmented chain Y = (X, missing) —
// at every position, the one without a row too — must be at most ε. At
// 0.8 of the scales some trial loses more than ε, for every query and
// both layouts, so the check can fail.
func TestAuditNATwoSeriesByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(2025, 48))
	lv, err := reading.ParseLevels("0:4:2") // level values 1 and 3, midpoint 2
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lv.Values, []float64{1, 3}) {
		t.Fatalf("level values %v", lv.Values)
	}
	value := []int{1, 3}
	const mid = 2
	states := lv.Names()
	const k, T = 2, 8
	opts := reading.CSVOptions{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: lv, Step: 3600}
	worstLow := map[string]float64{}
	for trial := range 9 {
		P := randomKernel(rng, k, false)
		init, q := markov.InitStationary, []float64(nil)
		switch trial % 3 {
		case 1:
			init, q = markov.InitGiven, []float64{1, 0}
		case 2:
			init, q = markov.InitGiven, []float64{0, 1}
		}
		ch, err := markov.New(states, P, init, q)
		if err != nil {
			t.Fatal(err)
		}
		q0, _ := ch.Initial()
		class, _ := markov.NewClass(states, ch)
		// P(missing | X = x), per series; b misses every value in trials 4, 7
		pmA := []float64{0.5 * rng.Float64(), 0.1 + 0.4*rng.Float64()}
		pmB := []float64{0.1 + 0.4*rng.Float64(), 0.6 * rng.Float64()}
		switch trial {
		case 3:
			pmA, pmB = []float64{0, 0.9}, []float64{0.9, 0}
		case 4, 7:
			pmB = []float64{1, 1}
		}
		aug := func(pm []float64, x, m int) float64 {
			if m == 1 {
				return pm[x]
			}
			return 1 - pm[x]
		}
		// Y = (X, M) on 2k states, y = 2x + m
		qy := func(pm []float64) []float64 {
			out := make([]float64, 2*k)
			for y := range out {
				out[y] = q0[y/2] * aug(pm, y/2, y%2)
			}
			return out
		}
		py := func(pm []float64) [][]float64 {
			out := make([][]float64, 2*k)
			for y := range out {
				out[y] = make([]float64, 2*k)
				for y2 := range out[y] {
					out[y][y2] = P[y/2][y2/2] * aug(pm, y2/2, y2%2)
				}
			}
			return out
		}
		restart := make([][]float64, 2*k) // b is a new chain: independent of a
		for y := range restart {
			restart[y] = qy(pmB)
		}
		steps := [][][]float64{py(pmA), py(pmA), py(pmA), py(pmA), restart, py(pmB), py(pmB)}
		chain := brute.Chain{Q: qy(pmA), Steps: steps, T: T}

		// the release's sizes and scales, and its answers without noise,
		// on files with the same rows and different values
		type shape struct {
			Observations, Missing, Sequences int
			Scales                           []float64 // per-bin scales: histogram, then windows
			WindowSizes                      []int
		}
		var want map[string]shape
		for rep := range 5 {
			vals := make([]string, len(naAuditLayout))
			for i, r := range naAuditLayout {
				switch {
				case rep == 0:
					vals[i] = []string{"0.5", "2.5", "3.9"}[rng.IntN(3)]
				case rep == 1 && r.series == "b", rep == 2:
					vals[i] = []string{"NA", "?", "", "NaN"}[rng.IntN(4)]
				default:
					vals[i] = []string{"0.5", "2.5", "NA", "", "nan"}[rng.IntN(5)]
				}
			}
			var f strings.Builder
			f.WriteString("s,t,v\n")
			for i, r := range naAuditLayout {
				fmt.Fprintf(&f, "%s,%d,%s\n", r.series, r.hour*3600, vals[i])
			}
			// the query's definition on these values (-1: missing)
			level := make([]int, len(vals))
			for i, v := range vals {
				switch v {
				case "0.5":
					level[i] = 0
				case "2.5", "3.9":
					level[i] = 1
				default:
					level[i] = -1
				}
			}
			define := func(query string, idx []int) []float64 {
				c := make([]float64, k)
				s := 0.0
				for _, i := range idx {
					if level[i] >= 0 {
						c[level[i]]++
						s += float64(value[level[i]])
					} else {
						s += mid
					}
				}
				n := float64(len(idx))
				switch query {
				case "relative":
					return []float64{c[0] / n, c[1] / n}
				case "mean":
					return []float64{s / n}
				}
				return c
			}
			all := make([]int, len(naAuditLayout))
			for i := range all {
				all[i] = i
			}
			byPos := map[int]int{}
			for i, r := range naAuditLayout {
				byPos[r.pos] = i
			}
			got := map[string]shape{}
			for _, query := range []string{"counts", "relative", "mean"} {
				d, err := reading.ReadData(strings.NewReader(f.String()), "na.csv", opts)
				if err != nil {
					t.Fatal(err)
				}
				o := Options{Epsilon: 1, Method: mechanism.Exact, Query: query, Source: zeroSource{}}
				r, err := Histogram(d, class, false, o)
				if err != nil {
					t.Fatal(err)
				}
				sh := shape{Observations: r.Observations, Missing: r.Missing, Sequences: r.Sequences, Scales: []float64{r.PerBinScale}}
				checkAnswer(t, fmt.Sprintf("trial %d file %d %s, whole data", trial, rep, query), r, define(query, all))
				wr, err := releaseWindows(d, class, false, o, 2*time.Hour, time.UTC)
				if err != nil {
					t.Fatal(err)
				}
				if len(wr.Windows) != len(naAuditWindows) {
					t.Fatalf("trial %d: %d windows, want %d", trial, len(wr.Windows), len(naAuditWindows))
				}
				for j, w := range wr.Windows {
					sh.Scales = append(sh.Scales, w.PerBinScale)
					sh.WindowSizes = append(sh.WindowSizes, w.Observations, w.Missing, w.Sequences)
					var idx []int
					for _, p := range naAuditWindows[j] {
						idx = append(idx, byPos[p])
					}
					checkAnswer(t, fmt.Sprintf("trial %d file %d %s, window %d", trial, rep, query, j), w.Report, define(query, idx))
				}
				got[query] = sh
			}
			if want == nil {
				want = got
				if w := want["counts"]; w.Observations != 7 || w.Missing != 1 || w.Sequences != 2 || !reflect.DeepEqual(w.WindowSizes, []int{4, 0, 2, 2, 0, 2, 1, 0, 1}) {
					t.Fatalf("7 rows in 2 series, one missing step in a, read as %+v", w)
				}
			} else if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d: the sizes or scales depend on which values are missing (file %d):\n%+v\nagainst\n%+v\n%s", trial, rep, got, want, f.String())
			}
		}

		// the exact loss at the scales released
		coords := func(query string, pos []int) func(y []int) []int {
			return func(y []int) []int {
				if query == "mean" { // the sum of the values: an integer
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
				c := make([]int, k) // counts of known values
				for _, p := range pos {
					if y[p]%2 == 0 {
						c[y[p]/2]++
					}
				}
				return c
			}
		}
		observed := []int{0, 1, 3, 4, 5, 6, 7}
		for _, query := range []string{"counts", "relative", "mean"} {
			sh := want[query]
			// the scale on the integer coordinates: counts as released;
			// relative frequencies and the mean are divided by the public
			// number of rows n, so their noise is n times the scale there
			onInts := func(b float64, n int) float64 {
				if query == "counts" {
					return b
				}
				return b * float64(n)
			}
			for _, which := range []string{"whole", "windows"} {
				for _, f := range []float64{1, 0.8} {
					var rels []brute.Release
					if which == "whole" {
						rels = []brute.Release{{Scale: f * onInts(sh.Scales[0], len(observed)), Coords: coords(query, observed)}}
					} else {
						for j, pos := range naAuditWindows {
							rels = append(rels, brute.Release{Scale: f * onInts(sh.Scales[1+j], len(pos)), Coords: coords(query, pos)})
						}
					}
					loss, at, a, a2, err := brute.Loss(chain, rels)
					if err != nil {
						t.Fatal(err)
					}
					if f < 1 {
						key := query + " " + which
						worstLow[key] = max(worstLow[key], loss)
						continue
					}
					if loss > 1+1e-9 || math.IsNaN(loss) {
						t.Errorf("trial %d (%v %v, P %v, missing a %v b %v) %s %s: loss %.9g > ε = 1 at Y_%d = %d vs %d (scales %v)",
							trial, init, q0, P, pmA, pmB, query, which, loss, at+1, a, a2, sh.Scales)
					}
				}
			}
		}
	}
	t.Logf("worst loss at 0.8 of the scales: %v", worstLow)
	for key, l := range worstLow {
		if l <= 1 || math.IsNaN(l) {
			t.Errorf("%s: at 0.8 of the scales no trial lost more than ε (worst %.4g): the check cannot fail", key, l)
		}
	}
}

// checkAnswer compares a release drawn without noise (zeroSource) with
// the query's definition: equal up to the noise grid.
func checkAnswer(t *testing.T, what string, r *Report, want []float64) {
	t.Helper()
	var got []float64
	if r.Mean != nil {
		got = []float64{*r.Mean}
	}
	for _, b := range r.Histogram {
		got = append(got, b.Value)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: answer %v, want %v", what, got, want)
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			t.Errorf("%s: answer %v, the definition gives %v", what, got, want)
			return
		}
	}
}
