package release

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/query"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// profileCase is one small profile release checked by enumeration: a
// chain of span steps of the given width (seconds) from start (Unix
// seconds), the readings at the steps not missing; with two series the
// second starts a fresh chain after the first (an independent series).
type profileCase struct {
	kind    string
	query   string // "": counts
	k       int
	step    int64
	start   int64
	span    int
	missing []int
	series2 int // readings of a second series (0: none), right after the first
	zone    string
}

// cellName is the cell of a time by package time's calendar, written
// here without the code under test: the wall-clock hour and weekday in
// loc.
func cellName(kind string, sec int64, loc *time.Location) string {
	tm := time.Unix(sec, 0).In(loc)
	day := tm.Weekday().String()[:3]
	switch kind {
	case "hour-of-day":
		return fmt.Sprintf("%02d", tm.Hour())
	case "day-of-week":
		return day
	}
	return fmt.Sprintf("%s %02d", day, tm.Hour())
}

// Profiles (docs/math.md §4.15) are ε-Pufferfish all together: the exact
// loss of every cell's answer at the scales the release computed, by
// enumerating every sequence of the chain (internal/brute, which knows
// nothing of profiles: a cell is the count histogram of its positions),
// is at most ε — for counts, relative frequencies and means; 2 to 4
// states; stationary, fixed (with zeros) and "any" starts; cells pooling
// readings 8, 12, 24 and 84 hours apart from several starting hours;
// missing readings; two series; and the repeated hour where daylight
// saving turns the clocks back. The cells are computed here from package
// time, and the release must put the same number of readings in each;
// every cell of the kind is released, with or without readings.
func TestProfileByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 12))
	cases := []profileCase{
		{kind: "hour-of-day", k: 2, step: 8 * 3600, start: 0, span: 7},
		{kind: "hour-of-day", query: "relative", k: 2, step: 8 * 3600, start: 5 * 3600, span: 7, missing: []int{3}},
		{kind: "hour-of-day", query: "mean", k: 3, step: 12 * 3600, start: 13 * 3600, span: 6},
		{kind: "hour-of-day", k: 4, step: 12 * 3600, start: 7 * 3600, span: 5, missing: []int{1}},
		{kind: "day-of-week", query: "relative", k: 2, step: 24 * 3600, start: 3 * 86400, span: 8},
		{kind: "day-of-week", query: "mean", k: 3, step: 24 * 3600, start: 86400 + 3600, span: 7},
		{kind: "day-of-week", query: "mean", k: 2, step: 24 * 3600, start: 5*86400 + 7200, span: 8, missing: []int{3}},
		{kind: "day-of-week", k: 3, step: 24 * 3600, start: 86400 + 3600, span: 6, missing: []int{2}},
		{kind: "week-hour", k: 2, step: 84 * 3600, start: 0, span: 6},
		{kind: "hour-of-day", k: 2, step: 12 * 3600, start: 0, span: 4, series2: 3},
		// 04:30–07:00 UTC on 2026-11-01: 01:00–01:59 New York time comes
		// twice (EDT, then EST); both passes are cell 01
		{kind: "hour-of-day", k: 2, step: 1800, start: 1793507400, span: 6, zone: "America/New_York"},
	}
	for i, c := range cases {
		loc := time.UTC
		if c.zone != "" {
			var err error
			if loc, err = time.LoadLocation(c.zone); err != nil {
				t.Skip("no time zone database:", err)
			}
		}
		q := c.query
		if q == "" {
			q = "counts"
		}
		k := c.k
		P := randomKernel(rng, k, i%3 == 1)
		init, q0 := markov.InitKind(markov.InitStationary), []float64(nil)
		switch i % 3 {
		case 1:
			init, q0 = markov.InitGiven, make([]float64, k)
			q0[k-1] = 1
		case 2:
			init = markov.InitAny
		}
		lv, err := reading.ParseLevels(fmt.Sprintf("0:%d:%d", k, k))
		if err != nil {
			t.Fatal(err)
		}
		values := make([]float64, k) // integer level values, unequal and not monotone
		for j := range values {
			values[j] = float64((j * 3) % (k + 1))
		}
		lv.Values = values
		states := lv.Names()
		ch, err := markov.New(states, P, init, q0)
		if err != nil {
			t.Fatal(err)
		}
		class, _ := markov.NewClass(states, ch)
		starts := [][]float64{q0}
		switch init {
		case markov.InitStationary:
			pi, _ := ch.Initial()
			starts = [][]float64{pi}
		case markov.InitAny:
			starts = [][]float64{make([]float64, k), make([]float64, k)}
			starts[0][0] = 1
			for j := range starts[1] {
				starts[1][j] = 1 / float64(k)
			}
		}
		skip := map[int]bool{}
		for _, m := range c.missing {
			skip[m] = true
		}
		// positions of the brute chain: the first series' steps, then the
		// second series' readings (a fresh start between them)
		var b strings.Builder
		b.WriteString("s,t,v\n")
		cellsAt := map[string][]int{}
		pos := 0
		// readings drawn from the chain, so that the data is possible
		// under the class (PrepareData refuses impossible data)
		x := k - 1
		if q0 == nil {
			x = rng.IntN(k)
		}
		next := func() {
			u := rng.Float64()
			for y, p := range P[x] {
				if u -= p; u < 0 || y == k-1 {
					if p > 0 {
						x = y
						return
					}
				}
			}
			for y, p := range P[x] {
				if p > 0 {
					x = y
				}
			}
		}
		for j := range c.span {
			if j > 0 {
				next()
			}
			if !skip[j] {
				sec := c.start + int64(j)*c.step
				fmt.Fprintf(&b, "a,%d,%g\n", sec, float64(x)+0.5)
				name := cellName(c.kind, sec, loc)
				cellsAt[name] = append(cellsAt[name], pos)
			}
			pos++
		}
		for j := range c.series2 {
			if j == 0 && q0 != nil {
				x = k - 1
			} else {
				next()
			}
			sec := c.start + int64(j+1)*c.step
			fmt.Fprintf(&b, "b,%d,%g\n", sec, float64(x)+0.5)
			name := cellName(c.kind, sec, loc)
			cellsAt[name] = append(cellsAt[name], pos)
			pos++
		}
		T := pos
		d, err := reading.ReadData(strings.NewReader(b.String()), "p.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: lv, Step: float64(c.step)})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"hour-of-day": 24, "day-of-week": 7, "week-hour": 168}[c.kind]
		if q != "counts" && len(cellsAt) < want {
			// a cell without readings has no relative frequencies or
			// mean: refused, naming the cell; the cells are checked as
			// counts (the same theorem)
			p, err := PrepareData(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Query: q, Profile: c.kind}, 0, loc)
			if err == nil || !strings.Contains(err.Error(), "cell ") {
				t.Fatalf("case %d: %s profile with empty cells: %v, %v", i, q, p, err)
			}
			q = "counts"
		}
		p, err := PrepareData(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Query: q, Profile: c.kind}, 0, loc)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		out, err := p.Draw()
		if err != nil {
			t.Fatal(err)
		}
		pr := out.(*ProfileReport)
		if len(pr.Cells) != want {
			t.Fatalf("case %d: %d cells, want %d", i, len(pr.Cells), want)
		}
		if pr.Total.Float() != 1 || p.Record.Epsilon != 1 || p.Record.Profile != c.kind {
			t.Fatalf("case %d: total %v, record ε %v profile %q", i, pr.Total.Float(), p.Record.Epsilon, p.Record.Profile)
		}
		// the scales of each valid bound on its own: the Markov Quilt
		// Mechanism's σ and the leakage bound's; the release samples the
		// smaller
		scales := map[string][]brute.Release{}
		cal := pr.Cells[0].Calibration
		for _, cell := range pr.Cells {
			at := cellsAt[cell.Cell]
			if cell.Observations != len(at) || cell.Query != q {
				t.Fatalf("case %d: cell %s has %d readings of %s, want %d of %s", i, cell.Cell, cell.Observations, cell.Query, len(at), q)
			}
			if p.Record.Sigma != UsedSigma(cell.Report) {
				t.Fatalf("case %d: record σ %v, cell's %v", i, p.Record.Sigma, UsedSigma(cell.Report))
			}
			if len(at) == 0 {
				continue // noise alone: no reading moves it
			}
			used := cal.MQM
			if cal.TPL > 0 {
				used = min(used, cal.TPL)
			}
			if UsedSigma(cell.Report) != used || cell.PerBinScale != noiseScale(used, cell.Lipschitz) {
				t.Fatalf("case %d: cell %s sampled at %v with σ %v, not the smaller bound's σ %v", i, cell.Cell, cell.PerBinScale, UsedSigma(cell.Report), used)
			}
			scales["mqm"] = append(scales["mqm"], profileCoords(q, k, at, values, noiseScale(cal.MQM, cell.Lipschitz)))
			if cal.TPL > 0 {
				scales["tpl"] = append(scales["tpl"], profileCoords(q, k, at, values, noiseScale(cal.TPL, cell.Lipschitz)))
			}
		}
		for _, s0 := range starts {
			chain := brute.Chain{Q: s0, P: P, T: T}
			if c.series2 > 0 {
				chain.Steps = make([][][]float64, T-1)
				for j := range chain.Steps {
					chain.Steps[j] = P
				}
				fresh := make([][]float64, k) // the second series starts afresh
				for j := range fresh {
					fresh[j] = s0
				}
				chain.Steps[c.span-1] = fresh
			}
			for _, bound := range []string{"mqm", "tpl"} { // the sampled scale is one of them
				if scales[bound] == nil {
					continue
				}
				loss, at, a, a2, err := brute.Loss(chain, scales[bound])
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("case %d (%s, %s, k %d, %v start %v): %s loss %.6f (calibration %s)", i, c.kind, q, k, init, s0, bound, loss, cal.Method)
				if loss > 1+1e-9 {
					t.Errorf("case %d (%s %s, k %d, %v start %v, missing %v): %s scales lose %.9g > ε = 1 at X_%d = %d vs %d", i, c.kind, q, k, init, s0, c.missing, bound, loss, at+1, a, a2)
				}
			}
		}
	}
}

// noiseScale is σ·L rounded up, as the release samples.
func noiseScale(sigma, l float64) float64 {
	p := sigma * l
	if math.FMA(sigma, l, -p) > 0 {
		p = math.Nextafter(p, math.Inf(1))
	}
	return p
}

// profileCoords is one cell's answer for the oracle with the per-bin
// scale b the release sampled: counts with Lap(b); relative frequencies,
// counts/N with Lap(b), are the counts with Lap(b·N); the mean, (Σ
// values)/N with Lap(b), is the integer sum of level values with
// Lap(b·N).
func profileCoords(q string, k int, at []int, values []float64, b float64) brute.Release {
	n := float64(len(at))
	switch q {
	case "counts":
		return brute.Counts(k, at, b)
	case "relative":
		return brute.Counts(k, at, b*n)
	}
	return brute.Release{Scale: b * n, Coords: func(x []int) []int {
		s := 0
		for _, p := range at {
			s += int(values[x[p]])
		}
		return []int{s}
	}}
}

// Where the bound is tight — independent readings, where both bounds
// price one reading at exactly ε — the oracle's loss of a profile at the
// calibrated scale is ε, and at 0.98 of the scale it exceeds ε: the
// check above can fail, and the calibration wastes no noise there. Seven
// days and one more, so no day-of-week cell is empty, for every query.
func TestProfileTightByBruteForce(t *testing.T) {
	const k, span = 2, 8
	P := [][]float64{{0.3, 0.7}, {0.3, 0.7}}
	lv, err := reading.ParseLevels("0:2:2")
	if err != nil {
		t.Fatal(err)
	}
	values := []float64{0, 1}
	lv.Values = values
	states := lv.Names()
	ch, err := markov.New(states, P, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	class, _ := markov.NewClass(states, ch)
	pi, _ := ch.Initial()
	var b strings.Builder
	b.WriteString("t,v\n")
	cellsAt := map[string][]int{}
	for j := range span {
		sec := int64(j) * 86400
		fmt.Fprintf(&b, "%d,%g\n", sec, float64(j%k)+0.5)
		name := cellName("day-of-week", sec, time.UTC)
		cellsAt[name] = append(cellsAt[name], j)
	}
	d, err := reading.ReadData(strings.NewReader(b.String()), "iid.csv", reading.CSVOptions{TimeCol: "t", ValueCol: "v", Levels: lv, Step: 86400})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"counts", "relative", "mean"} {
		p, err := PrepareData(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Query: q, Profile: "day-of-week"}, 0, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.Draw()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []float64{1, 0.98} {
			var rels []brute.Release
			for _, cell := range out.(*ProfileReport).Cells {
				rels = append(rels, profileCoords(q, k, cellsAt[cell.Cell], values, f*cell.PerBinScale))
			}
			loss, _, _, _, err := brute.Loss(brute.Chain{Q: pi, P: P, T: span}, rels)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s at %g of the scale: loss %.9f", q, f, loss)
			if f == 1 && (loss > 1+1e-9 || loss < 1-1e-6) {
				t.Errorf("%s: loss %.9g at the calibrated scale, want ε = 1 (tight)", q, loss)
			}
			if f < 1 && loss <= 1 {
				t.Errorf("%s: loss %.9g at %g of the scale, want > ε = 1", q, loss, f)
			}
		}
	}
}

// A profile prepared from summaries, as a pipeline builds them (each
// series' readings per cell, CellOf and CellPattern), is the profile of
// the data: the same report byte for byte with the same noise, and the
// same ledger record once the series are named.
func TestPrepareProfileSummaries(t *testing.T) {
	r, name, err := OpenData("../examples/stream/day1.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	class, err := markov.ReadClassFile("../examples/stream/class.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := reading.ReadData(r, name, reading.CSVOptions{SeriesCol: "meter", TimeCol: "time", StateCol: "state", States: class.States})
	if err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	for _, kind := range []string{"hour-of-day", "day-of-week", "week-hour"} {
		opts := func() Options {
			return Options{Epsilon: 0.5, Method: mechanism.Exact, Profile: kind, Source: rand.NewChaCha8([32]byte{3})}
		}
		p1, err := PrepareData(d, class, false, opts(), 0, loc)
		if err != nil {
			t.Fatal(err)
		}
		prof, _ := query.ParseProfile(kind)
		cells := map[int]*reading.Summary{}
		for s, ts := range d.Times {
			per := map[int][]int{}
			for j, tt := range ts {
				c := CellOf(prof, tt, loc)
				per[c] = append(per[c], d.Seqs[s][j])
			}
			for c, sq := range per {
				if cells[c] == nil {
					cells[c] = d.EmptySummary() // Complete as a pipeline sets it
				}
				if err := cells[c].AddSeries(sq, CellPattern(len(sq))); err != nil {
					t.Fatal(err)
				}
			}
		}
		p2, err := PrepareProfileSummaries(d.Summary(), cells, class, false, opts(), loc)
		if err != nil {
			t.Fatal(err)
		}
		// a pipeline's profile is refused over the state limit, as a release is
		tight := opts()
		tight.Limits.MaxStates = len(class.States) - 1
		if _, err := PrepareProfileSummaries(d.Summary(), cells, class, false, tight, loc); err == nil || !strings.Contains(err.Error(), "max-states") {
			t.Fatalf("over --max-states: %v", err)
		}
		if err := p2.RecordSeries(patternsOf(d)); err != nil {
			t.Fatal(err)
		}
		var outs [2]string
		for i, p := range []*Pending{p1, p2} {
			o, err := p.Draw()
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := WriteJSON(&b, o); err != nil {
				t.Fatal(err)
			}
			rec, _ := json.Marshal(p.Record)
			outs[i] = b.String() + string(rec)
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: from the data and from summaries differ:\n%s\n%s", kind, outs[0][:400], outs[1][:400])
		}
		if !strings.Contains(outs[0], `"profile":"`+kind+`"`) {
			t.Errorf("%s: the record does not name the profile", kind)
		}
	}
}

// A profile of categorical readings, where no value can be missing, has
// each cell's estimate on Σ = the cell's readings (1 for relative
// frequencies), as windows have theirs (issue 39: the cells were
// projected onto Σ ≤ N and summed to 0–2.5 of 3 readings).
func TestProfileEstimateSumsToTheCellsReadings(t *testing.T) {
	r, name, err := OpenData("../examples/stream/day1.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	class, err := markov.ReadClassFile("../examples/stream/class.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := reading.ReadData(r, name, reading.CSVOptions{SeriesCol: "meter", TimeCol: "time", StateCol: "state", States: class.States})
	if err != nil {
		t.Fatal(err)
	}
	if d.NullValues {
		t.Fatal("categorical CSV: no value can be missing")
	}
	for _, q := range []string{"counts", "relative"} {
		for seed := range byte(4) {
			opts := Options{Epsilon: 0.5, Method: mechanism.Exact, Profile: "hour-of-day", Query: q, Source: rand.NewChaCha8([32]byte{seed})}
			p, err := PrepareData(d, class, false, opts, 0, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			o, err := p.Draw()
			if err != nil {
				t.Fatal(err)
			}
			pr, ok := o.(*ProfileReport)
			if !ok {
				t.Fatalf("%T, want a profile", o)
			}
			for _, c := range pr.Cells {
				want := float64(c.Observations)
				if q == "relative" {
					want = 1
				}
				sum := 0.0
				for _, b := range c.Histogram {
					sum += *b.Estimate
				}
				if c.Observations > 0 && math.Abs(sum-want) > 1e-9*max(1, want) {
					t.Errorf("%s, seed %d, cell %s: the estimate sums to %g, want %g", q, seed, c.Cell, sum, want)
				}
			}
		}
	}
}
