package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// transitions is the oracle's own count (no code shared with Count): the
// k×k cells, row-major, of pairs of observed positions p, p+1.
func transitions(k int, observed []bool) func(x []int) []int {
	return func(x []int) []int {
		c := make([]int, k*k)
		for p := 1; p < len(x); p++ {
			if observed[p-1] && observed[p] {
				c[x[p-1]*k+x[p]]++
			}
		}
		return c
	}
}

// series writes one series of T hourly steps (missing: steps without a
// row) with values from rng, and reads it back.
func series(t *testing.T, k, T int, missing []int, rng *rand.Rand) (*reading.Data, []bool) {
	t.Helper()
	observed := make([]bool, T)
	var b strings.Builder
	b.WriteString("s,t,state\n")
	for p := range T {
		observed[p] = true
		for _, m := range missing {
			if m == p {
				observed[p] = false
			}
		}
		if observed[p] {
			fmt.Fprintf(&b, "a,%d,%d\n", p*3600, rng.IntN(k))
		}
	}
	states := make([]string, k)
	for i := range states {
		states[i] = fmt.Sprint(i)
	}
	data, err := reading.ReadData(strings.NewReader(b.String()), "d.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", StateCol: "state", States: states, Step: 3600})
	if err != nil {
		t.Fatal(err)
	}
	return data, observed
}

func class(t *testing.T, P [][]float64, initial string) *markov.Class {
	t.Helper()
	states := make([]string, len(P))
	for i := range states {
		states[i] = fmt.Sprint(i)
	}
	sj, _ := json.Marshal(states)
	pj, _ := json.Marshal(P)
	c, err := markov.ParseClass(strings.NewReader(fmt.Sprintf(`{"states": %s, "chains": [{"transition": %s, "initial": %s}]}`, sj, pj, initial)), "class")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The theorem of docs/math.md §4.13 against the definition: the noisy
// transition counts at the calibrated per-cell scale (the smaller of the
// two bounds, L = 4) lose at most ε by exact enumeration (internal/brute:
// every sequence, grid supremum), for two to four states, several lengths
// and starts, and steps without a reading; and where the bound is tight —
// independent readings that almost surely sit in a third state on both
// sides of the secret, so one change moves four cells — at 0.98 of the
// scale the loss exceeds ε.
func TestTransitionsByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 3))
	for _, c := range []struct {
		P       [][]float64
		initial string
		starts  [][]float64
		T       int
		missing []int
	}{
		{[][]float64{{0.8, 0.2}, {0.1, 0.9}}, `"stationary"`, [][]float64{{1.0 / 3, 2.0 / 3}}, 6, nil},
		{[][]float64{{0.2, 0.8}, {0.7, 0.3}}, `"any"`, [][]float64{{1, 0}, {0, 1}, {0.5, 0.5}}, 6, []int{2}},
		{[][]float64{{0.9, 0.1}, {0.2, 0.8}}, `[1, 0]`, [][]float64{{1, 0}}, 7, []int{4}},
		{[][]float64{{0.6, 0.3, 0.1}, {0.1, 0.6, 0.3}, {0.3, 0.1, 0.6}}, `"any"`, [][]float64{{1, 0, 0}, {0.2, 0.3, 0.5}}, 4, nil},
		{[][]float64{{0.5, 0.2, 0.3}, {0.1, 0.8, 0.1}, {0.3, 0.3, 0.4}}, `[0, 1, 0]`, [][]float64{{0, 1, 0}}, 5, []int{1}},
		{[][]float64{{0.7, 0.1, 0.1, 0.1}, {0.1, 0.7, 0.1, 0.1}, {0.1, 0.1, 0.7, 0.1}, {0.2, 0.2, 0.2, 0.4}}, `"any"`, [][]float64{{1, 0, 0, 0}, {0.1, 0.2, 0.3, 0.4}}, 2, nil},
		{[][]float64{{0.4, 0.2, 0.2, 0.2}, {0.25, 0.25, 0.25, 0.25}, {0.1, 0.1, 0.1, 0.7}, {0.3, 0.3, 0.2, 0.2}}, `[0, 0, 0, 1]`, [][]float64{{0, 0, 0, 1}}, 3, []int{0}},
	} {
		k := len(c.P)
		cl := class(t, c.P, c.initial)
		for _, eps := range []float64{0.5, 1} {
			data, observed := series(t, k, c.T, c.missing, rng)
			r, err := release.CalibrateJoint(data, cl, false, release.Options{Epsilon: eps, Method: mechanism.Exact}, Query, Lipschitz, k*k)
			if err != nil {
				t.Fatal(err)
			}
			if r.Lipschitz != 4 || r.PerBinScale < 4*release.UsedSigma(r)*(1-1e-15) {
				t.Fatalf("L %g, scale %g for σ %g", r.Lipschitz, r.PerBinScale, release.UsedSigma(r))
			}
			starts := c.starts
			if c.initial == `"stationary"` {
				pi, _ := cl.Chains[0].Initial()
				starts = [][]float64{pi}
			}
			for _, q := range starts {
				loss, at, a, b, err := brute.Loss(brute.Chain{Q: q, P: c.P, T: c.T}, []brute.Release{{Coords: transitions(k, observed), Scale: r.PerBinScale}})
				if err != nil {
					t.Fatal(err)
				}
				if loss > eps+1e-9 {
					t.Errorf("P %v missing %v ε %g start %v (%s): loss %.9g > ε (X_%d = %d vs %d)", c.P, c.missing, eps, q, r.Calibration.Method, loss, at+1, a, b)
				}
			}
		}
	}
	// tight: independent readings, state 2 with probability 0.999
	row := []float64{0.0005, 0.0005, 0.999}
	P := [][]float64{row, row, row}
	data, observed := series(t, 3, 3, nil, rng)
	r, err := release.CalibrateJoint(data, class(t, P, `"stationary"`), false, release.Options{Epsilon: 1, Method: mechanism.Exact}, Query, Lipschitz, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []float64{1, 0.98} {
		loss, _, _, _, err := brute.Loss(brute.Chain{Q: row, P: P, T: 3}, []brute.Release{{Coords: transitions(3, observed), Scale: f * r.PerBinScale}})
		if err != nil {
			t.Fatal(err)
		}
		if f == 1 && loss > 1+1e-9 || f < 1 && loss <= 1 {
			t.Errorf("independent readings, %g of the scale %g: loss %.9g", f, r.PerBinScale, loss)
		}
	}
}

// Count is the oracle's count on data with steps without a row and
// missing values (which break transitions too).
func TestCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 4))
	for range 20 {
		T := 30
		var b strings.Builder
		b.WriteString("s,t,v\n")
		var want [3][3]float64
		wantPairs := 0 // rows one step apart, whatever their values
		for _, s := range []string{"a", "b"} {
			prev, row := -1, false
			for p := range T {
				if rng.IntN(6) == 0 { // no row
					prev, row = -1, false
					continue
				}
				if row {
					wantPairs++
				}
				row = true
				if rng.IntN(8) == 0 { // a missing value
					fmt.Fprintf(&b, "%s,%d,NA\n", s, p)
					prev = -1
					continue
				}
				v := rng.IntN(3)
				fmt.Fprintf(&b, "%s,%d,%g\n", s, p, float64(v)+0.5)
				if prev >= 0 {
					want[prev][v]++
				}
				prev = v
			}
		}
		opts, err := reading.Spec{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: "0:3:3", Step: 1}.CSV()
		if err != nil {
			t.Fatal(err)
		}
		data, err := reading.ReadData(strings.NewReader(b.String()), "d.csv", opts)
		if err != nil {
			t.Fatal(err)
		}
		if n := Pairs(data); n != wantPairs {
			t.Fatalf("Pairs %d, want %d", n, wantPairs)
		}
		got := Count(data)
		for i := range want {
			for j := range want[i] {
				if got[i][j] != want[i][j] {
					t.Fatalf("cell %d→%d: %g, want %g\n%s", i, j, got[i][j], want[i][j], b.String())
				}
			}
		}
	}
}

// Simplex is the Euclidean projection: its output is on the simplex and
// no point of a fine grid on the simplex is nearer to the input.
func TestSimplexIsTheProjection(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 5))
	for range 200 {
		v := []float64{rng.NormFloat64(), rng.NormFloat64() * 2, rng.NormFloat64() + 0.5}
		p := Simplex(v)
		sum, d := 0.0, 0.0
		for i := range p {
			if p[i] < 0 {
				t.Fatalf("%v → %v", v, p)
			}
			sum += p[i]
			d += (p[i] - v[i]) * (p[i] - v[i])
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("%v → %v sums to %g", v, p, sum)
		}
		const n = 200
		for i := 0; i <= n; i++ {
			for j := 0; i+j <= n; j++ {
				q := []float64{float64(i) / n, float64(j) / n, float64(n-i-j) / n}
				e := 0.0
				for l := range q {
					e += (q[l] - v[l]) * (q[l] - v[l])
				}
				if e < d-1e-12 {
					t.Fatalf("%v → %v at %g, but %v is at %g", v, p, d, q, e)
				}
			}
		}
	}
}

// Project gives a stochastic matrix (uniform rows where the noisy total
// is not positive), and Stationary a law with π·P = π, for irreducible,
// reducible and periodic chains.
func TestProjectAndStationary(t *testing.T) {
	p := Project([][]float64{{5, -1, 2}, {-3, -4, 1}, {0, 10, 0}})
	if fmt.Sprint(p[1]) != fmt.Sprint([]float64{1.0 / 3, 1.0 / 3, 1.0 / 3}) || p[0][1] != 0 || p[2][1] != 1 {
		t.Fatalf("%v", p)
	}
	for _, P := range [][][]float64{p, {{0, 1}, {1, 0}}, {{1, 0, 0}, {0.5, 0.5, 0}, {0, 0, 1}}, {{0.9, 0.1}, {0.3, 0.7}}} {
		pi := Stationary(P)
		for j := range P {
			s := 0.0
			for i := range P {
				s += pi[i] * P[i][j]
			}
			if math.Abs(s-pi[j]) > 1e-9 {
				t.Fatalf("P %v: π %v is not stationary", P, pi)
			}
		}
	}
}

// A synthetic series has its input's name, rows and times, a drawn value
// at every row (none missing), and the chain's transition frequencies.
func TestSampleKeepsThePattern(t *testing.T) {
	in := "s,t,v\na,0,0.5\na,1,NA\na,3,1.5\nb,5,1.5\nb,6,0.5\n"
	opts, err := reading.Spec{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: "0:2:2", Step: 1}.CSV()
	if err != nil {
		t.Fatal(err)
	}
	opts.KeepTimes = true
	data, err := reading.ReadData(strings.NewReader(in), "d.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	P := [][]float64{{0.9, 0.1}, {0.2, 0.8}}
	syn, err := Sample(P, Stationary(P), data, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	syn.WriteCSV(&b, "s", "t", "state")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{"1,0,", "1,1,", "1,3,", "2,5,", "2,6,"}
	if len(lines) != 6 {
		t.Fatalf("%s", b.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i+1], w) || strings.HasSuffix(lines[i+1], "NA") {
			t.Fatalf("row %d: %q, want %s<state>", i, lines[i+1], w)
		}
	}
	// frequencies over a long series
	long := &reading.Data{States: []string{"0", "1"}, Seqs: [][]int{make([]int, 200000)}, Series: []string{""}}
	syn, _ = Sample(P, Stationary(P), long, rand.New(rand.NewPCG(3, 4)))
	var n [2][2]float64
	for t := 1; t < len(syn.Seqs[0]); t++ {
		n[syn.Seqs[0][t-1]][syn.Seqs[0][t]]++
	}
	for i := range n {
		if f := n[i][0] / (n[i][0] + n[i][1]); math.Abs(f-P[i][0]) > 0.01 {
			t.Fatalf("row %d: %g, want %g", i, f, P[i][0])
		}
	}
}

// The released transition counts carry their estimate: the noisy cells
// projected onto the non-negative k² histograms of the pattern's pairs of
// rows one step apart (states from CSV: every value known, so the sum is
// that number; docs/math.md §4.14).
func TestTransitionEstimate(t *testing.T) {
	opts, _ := reading.Spec{SeriesCol: "s", TimeCol: "t", StateCol: "v", States: "x,y"}.CSV()
	data, err := reading.ReadData(strings.NewReader("s,t,v\na,0,x\na,1,x\na,2,y\na,4,y\na,5,x\nb,0,y\nb,1,y\n"), "d.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	class, _ := markov.ParseClass(strings.NewReader(`{"states": ["x", "y"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"}]}`), "c")
	p, out, err := Prepare(data, class, false, release.Options{Epsilon: 1, Method: mechanism.Exact})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Draw(); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, b := range out.Histogram {
		if b.Estimate == nil || *b.Estimate < 0 {
			t.Fatalf("bin %+v: estimate missing or negative", b)
		}
		sum += *b.Estimate
	}
	if math.Abs(sum-4) > 1e-9 { // a0–a1, a1–a2, a4–a5, b0–b1
		t.Fatalf("the estimates sum to %v, want the 4 pairs", sum)
	}
	var text strings.Builder
	out.WriteText(&text)
	if !strings.Contains(text.String(), "summing to the 4 pairs of rows one step apart") {
		t.Fatalf("the note does not say what the estimate sums to:\n%s", text.String())
	}
}
