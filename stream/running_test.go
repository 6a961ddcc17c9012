package stream

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// runningCase is one small running stream: a series of T hourly steps
// (missing: steps without a row) cut into windows of width hours, appended
// in two files, the second closing every window.
type runningCase struct {
	P       [][]float64
	initial string
	T       int
	width   int
	missing []int
}

// run appends the case's readings (values from rng) to a running stream at
// ε and returns, for every node drawn, the positions (0-based steps) of
// its readings and its per-bin scale.
func (c runningCase) run(t *testing.T, eps float64, rng *rand.Rand) (*Settings, [][]int, []float64, []Window) {
	t.Helper()
	k := len(c.P)
	states := make([]string, k)
	for i := range states {
		states[i] = fmt.Sprint(i)
	}
	sj, _ := json.Marshal(states)
	class, err := markov.ParseClass(strings.NewReader(fmt.Sprintf(`{"states": %s, "chains": [{"transition": %s, "initial": %s}]}`, sj, jsonMatrix(c.P), c.initial)), "class")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Declare(reading.Spec{States: strings.Join(states, ","), Step: 3600, SeriesCol: "s", TimeCol: "t", StateCol: "state"}, fmt.Sprintf("%dh", c.width), eps, mechanism.Exact, "counts", class)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunning(); err != nil {
		t.Fatal(err)
	}
	skip := map[int]bool{}
	for _, m := range c.missing {
		skip[m] = true
	}
	var files [2]strings.Builder
	for i := range files {
		files[i].WriteString("s,t,state\n")
	}
	for p := range c.T {
		if !skip[p] {
			fmt.Fprintf(&files[p*2/c.T], "a,%d,%d\n", p*3600, rng.IntN(k))
		}
	}
	st := s.NewState()
	var got []Released
	for i := range files {
		var close *float64
		if i == 1 {
			x := float64(c.T+c.width) * 3600
			close = &x
		}
		next, rel, err := s.Append(st, strings.NewReader(files[i].String()), fmt.Sprint("f", i), close)
		if err != nil {
			t.Fatal(err)
		}
		st, got = next, append(got, rel...)
	}
	// the windows with readings, in order, and the positions in each
	var windows [][]int
	var index []int64
	for p := range c.T {
		if skip[p] {
			continue
		}
		k := int64(p / c.width)
		if len(index) == 0 || index[len(index)-1] != k {
			index = append(index, k)
			windows = append(windows, nil)
		}
		windows[len(windows)-1] = append(windows[len(windows)-1], p)
	}
	if len(got) != len(windows) {
		t.Fatalf("%d windows released, want %d", len(got), len(windows))
	}
	var pos [][]int
	var scales []float64
	var wins []Window
	for i, r := range got {
		run := r.Window.Running
		if r.Index != index[i] || run == nil || run.Windows != int64(i+1) {
			t.Fatalf("window %d: index %d running %+v", i, r.Index, run)
		}
		var ps []int
		for w := run.From; w <= run.Windows; w++ {
			ps = append(ps, windows[w-1]...)
		}
		pos, scales, wins = append(pos, ps), append(scales, r.Window.PerBinScale), append(wins, r.Window)
		// the total's estimate is its own: the noisy total projected onto
		// the histograms of the readings so far (states from CSV: every
		// reading has a value), not the node's (docs/math.md §4.14)
		n, y := float64(run.Observations), []float64{}
		for _, b := range run.Total {
			y = append(y, b.Value)
		}
		want, _ := release.ConsistentCounts(y, n, true)
		sum := 0.0
		for j, b := range run.Total {
			if b.Estimate == nil || *b.Estimate != want[j] || *b.Estimate < 0 {
				t.Fatalf("window %d: total %v, estimate %v, want %v", i, y, b.Estimate, want)
			}
			sum += *b.Estimate
		}
		if math.Abs(sum-n) > 1e-9*max(1, n) {
			t.Fatalf("window %d: the total's estimate sums to %v, not the %v readings", i, sum, n)
		}
	}
	return s, pos, scales, wins
}

// The theorem of docs/math.md §4.12 against the definition: every node a
// running stream draws, together, loses at most ε by exact enumeration
// (internal/brute: every sequence, grid supremum over the outputs) — two to
// four states, windows of one to three steps, steps without a reading,
// several starts (the stream's σ holds for any) — and on a chain of
// independent readings, where every bound is tight (σ = 1/ε and a reading
// in every node of its epoch moves each by 2), the nodes at 0.98 of their
// scales lose more than ε.
func TestRunningByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	for _, c := range []runningCase{
		{[][]float64{{0.8, 0.2}, {0.1, 0.9}}, `"stationary"`, 6, 1, nil},
		{[][]float64{{0.2, 0.8}, {0.7, 0.3}}, `"any"`, 7, 1, []int{3}},
		{[][]float64{{0.9, 0.1}, {0.2, 0.8}}, `[1, 0]`, 9, 2, []int{2}},
		{[][]float64{{0.6, 0.3, 0.1}, {0.1, 0.6, 0.3}, {0.3, 0.1, 0.6}}, `"any"`, 4, 1, nil},
		{[][]float64{{0.5, 0.2, 0.3}, {0.1, 0.8, 0.1}, {0.3, 0.3, 0.4}}, `[0, 1, 0]`, 6, 2, []int{1}},
		{[][]float64{{0.7, 0.1, 0.1, 0.1}, {0.1, 0.7, 0.1, 0.1}, {0.1, 0.1, 0.7, 0.1}, {0.2, 0.2, 0.2, 0.4}}, `"stationary"`, 4, 2, nil},
		{[][]float64{{0.4, 0.2, 0.2, 0.2}, {0.25, 0.25, 0.25, 0.25}, {0.1, 0.1, 0.1, 0.7}, {0.3, 0.3, 0.2, 0.2}}, `"any"`, 4, 1, []int{1}},
	} {
		k := len(c.P)
		for _, eps := range []float64{0.5, 1} {
			_, pos, scales, _ := c.run(t, eps, rng)
			starts := [][]float64{make([]float64, k), make([]float64, k), make([]float64, k)}
			starts[0][0], starts[1][k-1] = 1, 1
			for i := range starts[2] {
				starts[2][i] = float64(i+1) / float64(k*(k+1)/2)
			}
			var rels []brute.Release
			for i := range pos {
				rels = append(rels, brute.Counts(k, pos[i], scales[i]))
			}
			for _, q := range starts {
				loss, at, a, b, err := brute.Loss(brute.Chain{Q: q, P: c.P, T: c.T}, rels)
				if err != nil {
					t.Fatal(err)
				}
				if loss > eps+1e-9 {
					t.Errorf("P %v width %d missing %v ε %g start %v: the nodes lose %.9g > ε (X_%d = %d vs %d)", c.P, c.width, c.missing, eps, q, loss, at+1, a, b)
				}
			}
		}
	}
	// tight: independent readings, 6 steps of one hour (nodes 1, 2, 2–3,
	// 4, 4–5, 6: step 4 is in two nodes of scale 2σ·2)
	for _, c := range []runningCase{
		{[][]float64{{0.5, 0.5}, {0.5, 0.5}}, `"stationary"`, 6, 1, nil},
		{[][]float64{{0.5, 0.5}, {0.5, 0.5}}, `"stationary"`, 8, 2, []int{5}},
	} {
		_, pos, scales, _ := c.run(t, 1, rng)
		for _, f := range []float64{1, 0.98} {
			var rels []brute.Release
			for i := range pos {
				rels = append(rels, brute.Counts(2, pos[i], f*scales[i]))
			}
			loss, _, _, _, err := brute.Loss(brute.Chain{Q: []float64{0.5, 0.5}, P: c.P, T: c.T}, rels)
			if err != nil {
				t.Fatal(err)
			}
			if f == 1 && loss > 1+1e-9 || f < 1 && loss <= 1 {
				t.Errorf("independent readings, width %d, %g of the scales: loss %.9g", c.width, f, loss)
			}
		}
	}
}

// Every node's scale is σ·2(⌊log₂ t⌋+1) (σ the stream's, the smaller
// bound), every total is the sum of the nodes its binary expansion names
// (checked against the nodes as drawn), and its variance is docs/math.md
// §4.12's 2·Σ b² over those nodes, within (4/3)h³ of one window's and
// h² in standard deviation.
func TestRunningTotalsAreSumsOfNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 2))
	c := runningCase{[][]float64{{0.8, 0.2}, {0.1, 0.9}}, `"stationary"`, 40, 1, []int{7, 8}}
	s, _, _, wins := c.run(t, 1, rng)
	class, _ := markov.ParseClass(strings.NewReader(string(s.Class)), "class")
	sigma := release.UsedSigma(s.base(class))
	one := noise.Sampled(noise.ScaleFor(sigma, 2), 2, 2)
	window := 2 * one * one
	for i, w := range wins {
		tt := int64(i + 1)
		K := bits.Len64(uint64(tt)) - 1
		h := K + 1
		if w.Lipschitz != float64(2*h) || w.PerBinScale != noise.ScaleFor(sigma, float64(2*h)) {
			t.Fatalf("t = %d: Lipschitz %g scale %g, want %d and σ·%d", tt, w.Lipschitz, w.PerBinScale, 2*h, 2*h)
		}
		// the nodes the total sums: the roots of epochs < K, then the
		// blocks of u's binary expansion
		u := tt - 1<<K + 1
		var ends []int64
		for k := range K {
			ends = append(ends, 1<<(k+1)-1)
		}
		for l := K; l >= 0; l-- {
			if u>>l&1 == 1 {
				ends = append(ends, 1<<K-1+(u>>l)<<l)
			}
		}
		r := w.Running
		if r.Nodes != len(ends) {
			t.Fatalf("t = %d: %d nodes, want %d", tt, r.Nodes, len(ends))
		}
		var variance float64
		for j := range r.Total {
			sum := 0.0
			for _, e := range ends {
				sum += wins[e-1].Histogram[j].Value
			}
			if math.Abs(sum-r.Total[j].Value) > 1e-9*max(1, math.Abs(sum)) {
				t.Fatalf("t = %d bin %d: total %g, nodes sum to %g", tt, j, r.Total[j].Value, sum)
			}
		}
		for _, e := range ends {
			variance += 2 * wins[e-1].NoiseScale * wins[e-1].NoiseScale
		}
		if math.Abs(variance-r.Variance) > 1e-12*variance {
			t.Fatalf("t = %d: variance %g, want %g", tt, r.Variance, variance)
		}
		// Var S_t / V₁ = Σ_{k≤K} k² + ν(u) h² ≤ (4/3) h³ (up to the noise's snapping)
		want := float64(K*(K+1)*(2*K+1)/6 + bits.OnesCount64(uint64(u))*h*h)
		if ratio := r.Variance / window; math.Abs(ratio-want) > 1e-6*want || ratio > 4.0/3*float64(h*h*h)*(1+1e-6) || math.Sqrt(ratio) > float64(h*h)*(1+1e-6) {
			t.Fatalf("t = %d: variance %g windows', want %g", tt, ratio, want)
		}
	}
	if len(wins) != 38 {
		t.Fatalf("%d totals", len(wins))
	}
}

// A running stream refuses queries other than counts.
func TestRunningCountsOnly(t *testing.T) {
	for _, q := range []string{"relative", "mean"} {
		s, err := Declare(reading.Spec{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: "0:4:2", Step: 3600}, "1h", 1, mechanism.Exact, q, testClass(t, `"stationary"`))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetRunning(); err != ErrRunningQuery {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Two series in the same windows (the second joining an hour later):
// every node a running stream draws, by exact enumeration over the two
// series concatenated (the junction's kernel draws the second series'
// start afresh), loses at most ε for every start of either series.
func TestRunningTwoSeriesByBruteForce(t *testing.T) {
	for _, c := range []struct {
		P       string
		initial string
	}{
		{`[[0.8, 0.2], [0.1, 0.9]]`, `"stationary"`},
		{`[[0.3, 0.7], [0.6, 0.4]]`, `"any"`},
		{`[[0.9, 0.1], [0.5, 0.5]]`, `[0, 1]`},
	} {
		class, err := markov.ParseClass(strings.NewReader(`{"states": ["0", "1"], "chains": [{"transition": `+c.P+`, "initial": `+c.initial+`}]}`), "class")
		if err != nil {
			t.Fatal(err)
		}
		P := class.Chains[0].P
		s, err := Declare(reading.Spec{States: "0,1", Step: 3600, SeriesCol: "s", TimeCol: "t", StateCol: "state"}, "1h", 1, mechanism.Exact, "counts", class)
		if err == nil {
			err = s.SetRunning()
		}
		if err != nil {
			t.Fatal(err)
		}
		// a at hours 0..3 (positions 0..3), b at hours 1..3 (positions 4..6)
		st, rel, err := s.Append(s.NewState(), strings.NewReader("s,t,state\na,0,0\na,3600,1\nb,3600,1\na,7200,1\nb,7200,0\n"), "f1", nil)
		if err != nil {
			t.Fatal(err)
		}
		closeAt := 4 * 3600.0
		_, more, err := s.Append(st, strings.NewReader("s,t,state\na,10800,0\nb,10800,1\n"), "f2", &closeAt)
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, more...)
		windows := [][]int{{0}, {1, 4}, {2, 5}, {3, 6}}
		if len(rel) != 4 {
			t.Fatalf("%d totals", len(rel))
		}
		var rels []brute.Release
		for _, r := range rel {
			var pos []int
			for w := r.Window.Running.From; w <= r.Window.Running.Windows; w++ {
				pos = append(pos, windows[w-1]...)
			}
			rels = append(rels, brute.Counts(2, pos, r.Window.PerBinScale))
		}
		starts := [][]float64{{1, 0}, {0, 1}, {0.3, 0.7}}
		for _, qa := range starts {
			for _, qb := range starts {
				steps := [][][]float64{P, P, P, {qb, qb}, P, P}
				loss, at, a, b, err := brute.Loss(brute.Chain{Q: qa, P: P, Steps: steps, T: 7}, rels)
				if err != nil {
					t.Fatal(err)
				}
				if loss > 1+1e-9 {
					t.Errorf("P %s starts %v %v: the nodes lose %.9g > ε = 1 (position %d: %d vs %d)", c.P, qa, qb, loss, at, a, b)
				}
			}
		}
	}
}
