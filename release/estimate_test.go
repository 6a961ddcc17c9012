package release

import (
	"encoding/json"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// steer is a noise.Source that makes the snapped Laplace sampler draw the
// grid multiples it is told, one per noisy value in the order values are
// drawn: it replays the sampler's bisection (noise.Laplace's geometric
// and sign) and answers each uniform draw with the word that goes toward
// the target. Targets are set after planning (aim), when the scales are
// known. Should the sampler change, the released values are not those
// aimed at, which every test using steer checks first.
type steer struct{ words []uint64 }

func (s *steer) Uint64() uint64 {
	if len(s.words) == 0 {
		panic("steer: more draws than aimed at")
	}
	w := s.words[0]
	s.words = s.words[1:]
	return w
}

// aim queues the words that make Add(x, b, unit) return y, for each value.
func (s *steer) aim(t *testing.T, xs, ys []float64, b, unit float64) {
	t.Helper()
	g := noise.Granularity(b)
	lambda := g / noise.EffectiveScale(b, unit)
	for i, y := range ys {
		kf := (y - math.Round(xs[i]/g)*g) / g
		if kf != math.Trunc(kf) || math.Abs(kf) > 1<<52 {
			t.Fatalf("target %v is not on the grid %v from %v", y, g, xs[i])
		}
		k := int64(kf)
		G := max(k, -k) + 1
		s.words = append(s.words, 0) // not the truncation at MaxInt64
		lo, hi := int64(0), int64(math.MaxInt64)
		for hi-lo > 1 {
			span := float64(hi - lo)
			step := int64(math.Floor(-math.Log(0.5*(1+math.Exp(-lambda*span))) / lambda))
			mid := lo + max(1, min(step, hi-lo-1))
			if G <= mid {
				s.words, hi = append(s.words, 0), mid // uniform ≈ 0: lower half
			} else {
				s.words, lo = append(s.words, math.MaxUint64), mid // uniform ≈ 1: upper half
			}
		}
		if k < 0 {
			s.words = append(s.words, 1) // sign: negative
		} else {
			s.words = append(s.words, 0)
		}
	}
}

// releaseSteered releases data (windows of width, or one histogram for 0)
// with every noisy value steered to targets[window][bin]; counts are each
// window's true answer as the release's query sees it (the caller's
// knowledge of its own test data).
func releaseSteered(t *testing.T, data *reading.Data, class *markov.Class, query string, width time.Duration, counts, targets [][]float64) Output {
	t.Helper()
	src := &steer{}
	p, err := PrepareData(data, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Query: query, Source: src}, width, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	var reps []*Report
	switch out := p.out.(type) {
	case *Report:
		reps = []*Report{out}
	case *WindowedReport:
		for _, w := range out.Windows {
			reps = append(reps, w.Report)
		}
	}
	if len(reps) != len(targets) {
		t.Fatalf("%d reports, %d targets", len(reps), len(targets))
	}
	for i, r := range reps {
		src.aim(t, counts[i], targets[i], r.PerBinScale, noise.Unit(r.Lipschitz, len(counts[i])))
	}
	out, err := p.Draw()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reps {
		var got []float64
		if r.Mean != nil {
			got = []float64{*r.Mean}
		}
		for _, b := range r.Histogram {
			got = append(got, b.Value)
		}
		if !slices.Equal(got, targets[i]) {
			t.Fatalf("window %d: released %v, aimed at %v: the sampler changed, update steer", i, got, targets[i])
		}
	}
	return out
}

// estimates is every estimate printed in a release's JSON (each window's
// bins, or the mean estimate), as printed.
func estimates(t *testing.T, o Output) string {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Histogram    []map[string]any `json:"histogram"`
		MeanEstimate *float64         `json:"mean_estimate"`
		Windows      []struct {
			Histogram    []map[string]any `json:"histogram"`
			MeanEstimate *float64         `json:"mean_estimate"`
		} `json:"windows"`
	}
	json.Unmarshal(b, &m)
	var out []any
	for _, bin := range m.Histogram {
		out = append(out, bin["estimate"])
	}
	if m.MeanEstimate != nil {
		out = append(out, *m.MeanEstimate)
	}
	for _, w := range m.Windows {
		for _, bin := range w.Histogram {
			out = append(out, bin["estimate"])
		}
		if w.MeanEstimate != nil {
			out = append(out, *w.MeanEstimate)
		}
	}
	s, _ := json.Marshal(out)
	if len(out) == 0 || strings.Contains(string(s), "null") {
		t.Fatalf("a release without its estimates: %s", s)
	}
	return string(s)
}

func mustRead(t *testing.T, csv string, opts reading.CSVOptions) *reading.Data {
	t.Helper()
	d, err := reading.ReadData(strings.NewReader(csv), "x.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The estimate reads only what is published and public: two datasets with
// the same observation pattern and different values — one numeric with a
// missing value, so its counts sum to less than its readings, a total a
// leaky estimate would use — released with noise steered to the same
// noisy values give byte-identical estimates, for one histogram, joint
// windows, relative frequencies and the mean (docs/math.md §4.14). It
// fails if the estimate reads the true counts, their sum or the number of
// missing values.
func TestEstimateReadsOnlyPublic(t *testing.T) {
	ch, _ := markov.New([]string{"a", "b", "c"}, [][]float64{{0.8, 0.1, 0.1}, {0.2, 0.7, 0.1}, {0.1, 0.2, 0.7}}, markov.InitStationary, nil)
	states, _ := markov.NewClass(ch.States, ch)
	// two windows of one hour: 4 and 3 readings
	catA := "series,time,state\ns,0,a\ns,600,a\ns,1200,b\ns,1800,a\ns,3600,c\ns,4200,c\ns,4800,c\n"
	catB := "series,time,state\ns,0,b\ns,600,c\ns,1200,c\ns,1800,c\ns,3600,a\ns,4200,b\ns,4800,a\n"
	opts := reading.CSVOptions{SeriesCol: "series", TimeCol: "time", StateCol: "state", States: []string{"a", "b", "c"}}
	numOpts := reading.CSVOptions{SeriesCol: "series", TimeCol: "time", ValueCol: "v"}
	numOpts.Levels, _ = reading.ParseLevels("0:3:3")
	lch, _ := markov.New(numOpts.Levels.Names(), [][]float64{{0.8, 0.1, 0.1}, {0.2, 0.7, 0.1}, {0.1, 0.2, 0.7}}, markov.InitStationary, nil)
	levels, _ := markov.NewClass(lch.States, lch)
	numA := "series,time,v\ns,0,0.5\ns,600,0.5\ns,1200,1.5\ns,1800,0.5\ns,3600,2.5\ns,4200,2.5\ns,4800,2.5\n"
	numB := "series,time,v\ns,0,NA\ns,600,2.5\ns,1200,2.5\ns,1800,2.5\ns,3600,0.5\ns,4200,NA\ns,4800,0.5\n"
	for _, tc := range []struct {
		name             string
		a, b             string
		opts             reading.CSVOptions
		class            *markov.Class
		query            string
		width            time.Duration
		countsA, countsB [][]float64
		targets          [][]float64
	}{
		{"counts", catA, catB, opts, states, "counts", 0, [][]float64{{3, 1, 3}}, [][]float64{{2, 2, 3}},
			[][]float64{{-40, 9, 31}}},
		{"windows", catA, catB, opts, states, "counts", time.Hour, [][]float64{{3, 1, 0}, {0, 0, 3}}, [][]float64{{0, 1, 3}, {2, 1, 0}},
			[][]float64{{-12, 30, 2}, {1, 1, 1}}},
		{"numeric windows", numA, numB, numOpts, levels, "counts", time.Hour, [][]float64{{3, 1, 0}, {0, 0, 3}}, [][]float64{{0, 0, 3}, {2, 0, 0}},
			[][]float64{{-12, 30, 2}, {1, 1, -5}}},
		{"relative", catA, catB, opts, states, "relative", 0, [][]float64{{3. / 7, 1. / 7, 3. / 7}}, [][]float64{{2. / 7, 2. / 7, 3. / 7}},
			[][]float64{{-1.5, 0.25, 2}}},
		{"mean", numA, numB, numOpts, levels, "mean", 0, [][]float64{{(0.5*3 + 1.5 + 2.5*3) / 7}}, [][]float64{{(1.5 + 2.5*3 + 0.5*2 + 1.5) / 7}},
			[][]float64{{-3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := releaseSteered(t, mustRead(t, tc.a, tc.opts), tc.class, tc.query, tc.width, tc.countsA, tc.targets)
			b := releaseSteered(t, mustRead(t, tc.b, tc.opts), tc.class, tc.query, tc.width, tc.countsB, tc.targets)
			ea, eb := estimates(t, a), estimates(t, b)
			if ea != eb {
				t.Fatalf("same noisy values and public sizes, different estimates:\n%s\n%s", ea, eb)
			}
			if tc.query == "mean" {
				if ea != "[0.5]" {
					t.Fatalf("mean −3 with levels valued 0.5..2.5: estimate %s, want [0.5], the lowest level value", ea)
				}
				return
			}
			checkPrinted(t, a)
		})
	}
}

// projection is the Euclidean projection of y onto {c ≥ 0, Σ c = n}, or
// {c ≥ 0, Σ c ≤ n} with atMost, computed independently of package
// estimate: τ ≥ 0 (atMost) or any τ by bisection on the decreasing
// Σ max(y_i − τ, 0).
func projection(y []float64, n float64, atMost bool) []float64 {
	f := func(tau float64) float64 {
		s := 0.0
		for _, v := range y {
			s += max(v-tau, 0)
		}
		return s - n
	}
	lo, hi := slices.Min(y)-n-1, slices.Max(y)
	if atMost {
		if f(0) <= 0 {
			lo, hi = 0, 0
		} else {
			lo = 0
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if f(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	c := make([]float64, len(y))
	for i, v := range y {
		c[i] = max(v-(lo+hi)/2, 0)
	}
	return c
}

// checkPrinted recomputes every window's estimate from its printed JSON
// alone — the noisy values, the number of readings, the query and whether
// the readings are numeric (a bin has a range) — and compares.
func checkPrinted(t *testing.T, o Output) {
	t.Helper()
	b, _ := json.Marshal(o)
	type rep struct {
		Query        string `json:"query"`
		Observations int    `json:"observations"`
		Histogram    []Bin  `json:"histogram"`
	}
	var m struct {
		rep
		Windows []rep `json:"windows"`
	}
	json.Unmarshal(b, &m)
	reps := m.Windows
	if reps == nil {
		reps = []rep{m.rep}
	}
	for i, r := range reps {
		n := float64(r.Observations)
		if r.Query == "relative" {
			n = 1
		}
		var y []float64
		for _, bin := range r.Histogram {
			y = append(y, bin.Value)
		}
		want := projection(y, n, r.Histogram[0].Range != "")
		sum := 0.0
		for j, bin := range r.Histogram {
			if math.Abs(*bin.Estimate-want[j]) > 1e-9*(1+n) {
				t.Fatalf("window %d: estimate %v, the projection of the printed values %v", i, *bin.Estimate, want)
			}
			sum += *bin.Estimate
		}
		if r.Histogram[0].Range == "" && math.Abs(sum-n) > 1e-9*(1+n) {
			t.Fatalf("window %d: estimates sum to %v, not the %v readings", i, sum, n)
		}
	}
}

// The estimate is post-processing (docs/math.md §4.14): drawing it changes
// neither the ledger's record nor the guarantee. The record a ledger
// charges is the same before and after the draw, the composed charge is
// the ε asked for, and the printed report differs from the same draw's
// without estimates in the estimates only.
func TestEstimateIsFree(t *testing.T) {
	ch, _ := markov.New([]string{"a", "b"}, [][]float64{{0.8, 0.2}, {0.3, 0.7}}, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	csv := "series,time,state\ns,0,a\ns,600,a\ns,1200,b\ns,3600,b\nt,0,a\nt,3600,b\n"
	opts := reading.CSVOptions{SeriesCol: "series", TimeCol: "time", StateCol: "state", States: []string{"a", "b"}}
	for _, width := range []time.Duration{0, time.Hour} {
		p, err := PrepareData(mustRead(t, csv, opts), class, false, Options{Epsilon: 0.5, Method: mechanism.Exact, Source: noise.Seeded(3)}, width, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := json.Marshal(p.Record)
		out, err := p.Draw()
		if err != nil {
			t.Fatal(err)
		}
		after, _ := json.Marshal(p.Record)
		if string(before) != string(after) {
			t.Fatalf("the draw changed the record:\n%s\n%s", before, after)
		}
		v, err := compose.Records(class, []*record.Release{p.Record})
		if err != nil || v.Float() != 0.5 {
			t.Fatalf("charge %v (%v), want 0.5", v.Float(), err)
		}
		// the same draw without the estimates: only "estimate" fields go
		with, _ := json.Marshal(out)
		var reps []*Report
		switch o := out.(type) {
		case *Report:
			reps = []*Report{o}
		case *WindowedReport:
			for _, w := range o.Windows {
				reps = append(reps, w.Report)
			}
		}
		for _, r := range reps {
			for i := range r.Histogram {
				r.Histogram[i].Estimate = nil
			}
		}
		without, _ := json.Marshal(out)
		var a, b any
		json.Unmarshal(with, &a)
		json.Unmarshal(without, &b)
		if !equalBut(a, b, "estimate") {
			t.Fatalf("the estimate changed more than its own fields:\n%s\n%s", with, without)
		}
		checkPrinted(t, &jsonOutput{with})
	}
}

// equalBut compares decoded JSON, ignoring the key skip wherever a side has it.
func equalBut(a, b any, skip string) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range x {
			if k == skip {
				continue
			}
			if !equalBut(v, y[k], skip) {
				return false
			}
		}
		for k := range y {
			if _, ok := x[k]; !ok && k != skip {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalBut(x[i], y[i], skip) {
				return false
			}
		}
		return true
	}
	return a == b
}

// jsonOutput is printed JSON as an Output for checkPrinted.
type jsonOutput struct{ b []byte }

func (j *jsonOutput) MarshalJSON() ([]byte, error)            { return j.b, nil }
func (j *jsonOutput) WriteText(io.Writer, ...[2]string) error { return nil }
