package release

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// Window is one calendar window's release.
type Window struct {
	Start string `json:"start"` // RFC 3339, in the window's time zone
	End   string `json:"end"`   // exclusive
	*Report
}

// Total is the guarantee of a set of releases on one dataset, from the
// composition rules over every series' chain.
type Total struct {
	guarantee.Guarantee
	Why string
}

type totalJSON struct {
	Epsilon float64 `json:"epsilon"`
	Rule    string  `json:"rule"`
	Theorem string  `json:"theorem"`
	Why     string  `json:"why,omitempty"`
}

// MarshalJSON writes {"epsilon" (rounded up), "rule", "theorem", "why"}.
func (t Total) MarshalJSON() ([]byte, error) {
	return json.Marshal(totalJSON{t.Float(), t.Rule, t.Theorem, t.Why})
}

// UnmarshalJSON reads what MarshalJSON writes, ε as the float's decimal
// (guarantee.Rat: never below the printed bound).
func (t *Total) UnmarshalJSON(data []byte) error {
	var j totalJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*t = Total{Guarantee: guarantee.Guarantee{Epsilon: guarantee.Rat(j.Epsilon), Rule: j.Rule, Theorem: j.Theorem}, Why: j.Why}
	return nil
}

// WindowedReport is a release per calendar window and the total guarantee
// of all of them.
type WindowedReport struct {
	Width   string   `json:"window"`
	Zone    string   `json:"time_zone"`
	Windows []Window `json:"windows"`
	Total   Total    `json:"total"`
	// Record is the whole run as one release for the ledger: every
	// window's segments (disjoint segments of each series' chain).
	Record *record.Release `json:"-"`
}

// releaseWindows releases one histogram per calendar window of the given width
// (aligned to the Unix epoch in loc's wall-clock time, so 24h windows are
// local days). By default every window is calibrated jointly with σ of
// each series' whole chain, so all windows together are ε-Pufferfish
// (docs/math.md §4.8; total rule "mqm-joint"). With opts.PerWindow each
// window is a segment of its series' chain calibrated there (§4.7), and
// the total composes every window of every series with package compose:
// windows of one series are disjoint segments of one chain (the parallel
// rule, with the influence across the gaps), series are independent (the
// worst series). The data must have times.
func releaseWindows(data *reading.Data, class *markov.Class, fitted bool, opts Options, width time.Duration, loc *time.Location) (*WindowedReport, error) {
	wr, draw, err := planWindows(data, class, fitted, opts, width, loc)
	if err != nil {
		return nil, err
	}
	return wr, draw()
}

// jointRule is the total rule of windows calibrated jointly by the Markov
// Quilt Mechanism, tplJointRule by the temporal leakage bound.
const (
	jointRule    = "mqm-joint"
	tplJointRule = "tpl-joint"
)

// jointTheorem names the theorem behind a joint total for a method.
func jointTheorem(m mechanism.Name) string {
	switch m {
	case mechanism.Exact, mechanism.Approx:
		return "[SWC17] Thm 4.3 for the vector of every window's histogram (docs/math.md §4.8)"
	case mechanism.GroupDP:
		return "group privacy over each whole series, for the vector of every window's histogram"
	case mechanism.GK16:
		return "[GK] for the vector of every window's histogram, ε-DP per reading"
	}
	return "ε-DP per reading for the vector of every window's histogram (no protection against correlation)"
}

// planWindows is Windows up to the noise (see plan).
func planWindows(data *reading.Data, class *markov.Class, fitted bool, opts Options, width time.Duration, loc *time.Location) (*WindowedReport, func() error, error) {
	if data.Times == nil {
		return nil, nil, errors.New("windows need a time column")
	}
	if width < time.Second {
		return nil, nil, fmt.Errorf("window %v: want at least a second", width)
	}
	if loc == nil {
		loc = time.UTC
	}
	w := width.Seconds()
	index := func(t float64) int64 { return WindowOf(t, width, loc) }
	// A series' readings in one window, by index. Wall-clock windows are
	// not monotone in time where daylight saving turns the clocks back
	// (the hour 01:00–02:00 comes twice), so a window may get readings
	// of a series before and after another window's: they are one part of
	// that series' chain (the readings between are missing for it), never
	// two independent series.
	type part struct {
		s   int
		idx []int
	}
	byWindow := map[int64][]*part{}
	var order []int64
	for s, ts := range data.Times {
		mine := map[int64]*part{}
		for j, t := range ts {
			k := index(t)
			p := mine[k]
			if p == nil {
				if _, seen := byWindow[k]; !seen {
					order = append(order, k)
				}
				p = &part{s: s}
				mine[k] = p
				byWindow[k] = append(byWindow[k], p)
			}
			p.idx = append(p.idx, j)
		}
	}
	slices.Sort(order)
	if len(order) == 0 {
		return nil, nil, errors.New("no observations to release")
	}
	subs := make([]*reading.Data, len(order))
	for i, k := range order {
		if err := opts.ctxErr(); err != nil {
			return nil, nil, err
		}
		sub := &reading.Data{States: data.States, Levels: data.Levels, Step: data.Step, StepSource: data.StepSource, NullValues: data.NullValues}
		for _, p := range byWindow[k] {
			full := data.Observation(p.s)
			first := obsTime(full, p.idx[0])
			off := make([]int, len(p.idx))
			seq := make([]int, len(p.idx))
			times := make([]float64, len(p.idx))
			for j, r := range p.idx {
				off[j] = obsTime(full, r) - first
				seq[j] = data.Seqs[p.s][r]
				times[j] = data.Times[p.s][r]
			}
			sub.Seqs = append(sub.Seqs, seq)
			sub.Series = append(sub.Series, data.Series[p.s])
			sub.Offsets = append(sub.Offsets, off)
			sub.Starts = append(sub.Starts, first)
			sub.Times = append(sub.Times, times)
		}
		subs[i] = sub
	}
	cache := opts.Cache
	if cache == nil {
		cache = NewScaleCache()
	}
	if !opts.PerWindow {
		sums := make([]*reading.Summary, len(subs))
		for i, sub := range subs {
			sums[i] = sub.Summary()
		}
		out, quilts, draw, err := planJoint(data.Summary(), sums, order, class, fitted, opts, cache, width, loc)
		if err != nil {
			return nil, nil, err
		}
		// the record: one release of a vector query on each series'
		// whole segment, calibrated with that series' σ
		out.Record = newRecord(out.Windows[0].Report, opts, class, segmentsOf(data, quilts))
		return out, draw, nil
	}
	out := &WindowedReport{Width: width.String(), Zone: loc.String()}
	var recs []*record.Release
	var draws []func() error
	for i, k := range order {
		r, draw, err := plan(subs[i], class, fitted, opts, cache, true)
		if err != nil {
			return nil, nil, fmt.Errorf("window %s: %w", windowStart(k, w, loc), err)
		}
		out.Windows = append(out.Windows, Window{Start: windowStart(k, w, loc), End: windowStart(k+1, w, loc), Report: r})
		recs = append(recs, r.Record)
		draws = append(draws, draw)
	}
	v, err := compose.RecordsContext(opts.context(), class, recs)
	if cerr := opts.ctxErr(); cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, err
	}
	out.Total = Total{Guarantee: v.Guarantee}
	out.Record = &record.Release{Mechanism: opts.Method, Epsilon: opts.Epsilon, EpsilonExact: opts.exactText(), Class: class.Hash(), Query: recs[0].Query, Sigma: recs[0].Sigma}
	for _, r := range recs {
		out.Record.Segments = append(out.Record.Segments, r.Segments...)
		// a reading lies in one window: the union is DP per reading at the
		// smallest σ
		out.Record.Sigma = min(out.Record.Sigma, r.Sigma)
	}
	return out, drawAll(draws), nil
}

// planJoint calibrates windows jointly (docs/math.md §4.8): σ is the
// maximum over the observation patterns of the whole series (whole), and
// window i (summary wins[i], calendar index keys[i]) gets Laplace noise of
// scale σ·L_i on every bin, L_i its own Lipschitz constant. The total is
// the method's ε, by rule jointRule.
func planJoint(whole *reading.Summary, wins []*reading.Summary, keys []int64, class *markov.Class, fitted bool, opts Options, cache *ScaleCache, width time.Duration, loc *time.Location) (*WindowedReport, map[string]*mqm.Quilt, func() error, error) {
	base, quilts, err := jointBase(whole, class, fitted, opts, cache)
	if err != nil {
		return nil, nil, nil, err
	}
	w := width.Seconds()
	out := &WindowedReport{Width: width.String(), Zone: loc.String()}
	draws := make([]func() error, len(wins))
	for i, sum := range wins {
		if err := opts.ctxErr(); err != nil {
			return nil, nil, nil, err
		}
		var r *Report
		if r, draws[i], err = fixedSigma(base, sum, class, fitted, opts); err != nil {
			return nil, nil, nil, fmt.Errorf("window %s: %w", windowStart(keys[i], w, loc), err)
		}
		out.Windows = append(out.Windows, Window{Start: windowStart(keys[i], w, loc), End: windowStart(keys[i]+1, w, loc), Report: r})
	}
	out.Total = jointTotal(base, opts)
	return out, quilts, drawAll(draws), nil
}

// jointBase is the calibration every group of a joint release shares
// (windows, §4.8; profile cells, §4.15): σ the maximum over the
// observation patterns of the whole series (whole), or the leakage
// bound's when smaller, with the active quilts.
func jointBase(whole *reading.Summary, class *markov.Class, fitted bool, opts Options, cache *ScaleCache) (*Report, map[string]*mqm.Quilt, error) {
	base, quilts, err := calibrate(whole, class, fitted, opts, cache)
	if err != nil {
		return nil, nil, err
	}
	T := 0
	for _, p := range whole.Patterns {
		T = max(T, p.Observation.End())
	}
	if err := chooseCalibration(opts.Context, base, calibrated(class, opts), T, opts.Epsilon, opts.Limits, cache); err != nil {
		return nil, nil, err
	}
	return base, quilts, nil
}

// jointTotal is the total guarantee of a joint release calibrated like
// base: the method's ε, by rule jointRule (tplJointRule when the leakage
// bound set the noise).
func jointTotal(base *Report, opts Options) Total {
	t := Total{Guarantee: guarantee.Guarantee{Epsilon: guarantee.Charge(opts.Epsilon, opts.exactText()), Rule: jointRule, Theorem: jointTheorem(opts.Method)}}
	switch {
	case base.tpl > 0:
		t.Rule, t.Theorem = tplJointRule, base.Calibration.Theorem
	case !opts.Method.MQM():
		t.Rule = "joint"
	}
	return t
}

// fixedSigma is the report of one window whose σ, guarantee and scales
// are base's (a joint calibration), with draw.
func fixedSigma(base *Report, sum *reading.Summary, class *markov.Class, fitted bool, opts Options) (*Report, func() error, error) {
	r := &Report{Method: base.Method, Epsilon: base.Epsilon, Class: base.Class, Guarantee: base.Guarantee,
		Sigma: base.Sigma, Scales: base.Scales, Noise: base.Noise, TimeStep: base.TimeStep,
		Calibration: base.Calibration, tpl: base.tpl,
		Sequences: sum.Sequences, Observations: sum.Observations, Missing: sum.Missing,
		MinLength: sum.MinLength, MaxLength: sum.MaxLength, Warnings: slices.Clone(base.Warnings)}
	draw, err := finish(r, sum, class, fitted, opts)
	if err != nil {
		return nil, nil, err
	}
	return r, draw, nil
}

// StreamBase is the calibration every window of a stream shares: σ from
// scale (the supremum over lengths, docs/math.md §4.9), with its
// guarantee, or the leakage bound's σ (StreamLeakage, for every length)
// when it is smaller.
func StreamBase(class *markov.Class, opts Options, scale *Scale, leak Leakage) *Report {
	r := &Report{Method: opts.Method, Epsilon: opts.Epsilon, Class: Summarize(class, false), Guarantee: scale.Guarantee,
		Sigma: *scale.Sigma, Scales: []*Scale{scale}, Noise: noiseText}
	choose(r, leak)
	return r
}

// RecordedMechanism is how the ledger records a release calibrated like
// base: its method, or "pufferfish" when the leakage bound set the noise.
func RecordedMechanism(base *Report) mechanism.Name { return base.recordedMechanism() }

// UsedSigma is the noise multiplier windows calibrated like base are drawn
// with (the smaller of the two bounds).
func UsedSigma(base *Report) float64 { return base.usedSigma() }

// ReleaseWindow releases calendar window k of a stream from its summary
// with base's σ (StreamBase), drawing its noise once.
func ReleaseWindow(base *Report, sum *reading.Summary, class *markov.Class, opts Options, k int64, width time.Duration, loc *time.Location) (Window, error) {
	if loc == nil {
		loc = time.UTC
	}
	r, draw, err := fixedSigma(base, sum, class, false, opts)
	if err == nil {
		err = draw()
	}
	w := width.Seconds()
	if err != nil {
		return Window{}, fmt.Errorf("window %s: %w", windowStart(k, w, loc), err)
	}
	return Window{Start: windowStart(k, w, loc), End: windowStart(k+1, w, loc), Report: r}, nil
}

func drawAll(draws []func() error) func() error {
	return func() error {
		for _, d := range draws {
			if err := d(); err != nil {
				return err
			}
		}
		return nil
	}
}

// obsTime is the chain time of reading j (0-based) of an observation.
func obsTime(ob interface{ Time(int) int }, j int) int { return ob.Time(j + 1) }

// WindowOf is the calendar window of a time t (seconds): the floor of its
// wall-clock seconds in loc over the width, so 24h windows are local days.
func WindowOf(t float64, width time.Duration, loc *time.Location) int64 {
	if loc == nil {
		loc = time.UTC
	}
	tt := reading.TimeAt(t).In(loc) // not UnixNano: it wraps outside 1678–2262 (times.go)
	_, off := tt.Zone()
	return int64(math.Floor((t + float64(off)) / width.Seconds()))
}

// WindowBounds is calendar window k's start and (exclusive) end, RFC 3339
// in loc.
func WindowBounds(k int64, width time.Duration, loc *time.Location) (string, string) {
	if loc == nil {
		loc = time.UTC
	}
	return windowStart(k, width.Seconds(), loc), windowStart(k+1, width.Seconds(), loc)
}

func windowStart(k int64, w float64, loc *time.Location) string {
	// wall-clock seconds k·w in loc: find the instant with that wall clock
	wall := time.Unix(int64(float64(k)*w), 0).UTC()
	t := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, loc)
	return t.Format(time.RFC3339)
}

// WriteText prints every window's histogram and the total guarantee.
func (wr *WindowedReport) WriteText(out io.Writer, extra ...[2]string) error {
	for _, w := range wr.Windows {
		fmt.Fprintf(out, "== window %s – %s\n", w.Start, w.End)
		if err := w.Report.WriteText(out); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	if _, err := fmt.Fprintf(out, "total over %d windows (%s, %s): ε = %.6g by %s (%s)\n", len(wr.Windows), wr.Width, wr.Zone, wr.Total.Float(), wr.Total.Rule, wr.Total.Theorem); err != nil {
		return err
	}
	for _, e := range extra {
		if _, err := fmt.Fprintf(out, "%s: %s\n", e[0], e[1]); err != nil {
			return err
		}
	}
	return nil
}

// WindowPart is one series' readings in one window, as a pipeline sees
// it: the window, the part's observation pattern (chain times of its
// readings, so a later window starts later in the chain) and its
// readings.
type WindowPart struct {
	Window int64
	Seq    []int
	Ob     mqm.Observation
}

// SplitWindows cuts one assembled series (reading.AssembleSeries: readings, their
// times in seconds and chain times) into its calendar windows, as Windows
// does.
func SplitWindows(seq []int, times []float64, ob mqm.Observation, width time.Duration, loc *time.Location) ([]WindowPart, error) {
	if len(seq) != len(times) || len(seq) != ob.Len {
		return nil, errors.New("release: readings, times and observation differ in length")
	}
	if width < time.Second {
		return nil, fmt.Errorf("window %v: want at least a second", width)
	}
	// one part per window, even where daylight saving makes wall-clock
	// windows come back (Windows)
	var out []WindowPart
	at := map[int64]int{}
	var cts [][]int
	for j := range seq {
		k := WindowOf(times[j], width, loc)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, WindowPart{Window: k})
			cts = append(cts, nil)
		}
		out[i].Seq = append(out[i].Seq, seq[j])
		cts[i] = append(cts[i], ob.Time(j+1))
	}
	for i := range out {
		part, err := mqm.At(cts[i])
		if err != nil {
			return nil, err
		}
		out[i].Ob = part
	}
	return out, nil
}

// Signature is the windows of one series (segment by segment, with the
// pattern key of each part) and how many series share it: what the total
// guarantee of a windowed release needs from a pipeline.
type Signature struct {
	Parts  []SignaturePart
	Series int
}

// SignaturePart is one window of a series: its chain segment and pattern.
type SignaturePart struct {
	Window      int64
	First, Last int
	Pattern     string // PatternKey of the part
}

// PrepareWindowSummaries is PrepareSummary per calendar window (the
// summaries by window index), as Windows does on data: jointly calibrated
// with σ of the whole series' patterns (whole: the summary of every whole
// series, only its patterns are read), or, with opts.PerWindow, each
// window on its own with the total guarantee of all windows from the
// series' signatures (compose.Records, series being independent: one
// representative chain per distinct signature).
func PrepareWindowSummaries(whole *reading.Summary, wins map[int64]*reading.Summary, sigs []Signature, class *markov.Class, fitted bool, opts Options, width time.Duration, loc *time.Location) (*Pending, error) {
	if loc == nil {
		loc = time.UTC
	}
	if len(wins) == 0 {
		return nil, errors.New("no observations to release")
	}
	var order []int64
	for k := range wins {
		order = append(order, k)
	}
	slices.Sort(order)
	if !opts.PerWindow {
		list := make([]*reading.Summary, len(order))
		for i, k := range order {
			list[i] = wins[k]
		}
		out, quilts, draw, err := planJoint(whole, list, order, class, fitted, opts, NewScaleCache(), width, loc)
		if err != nil {
			return nil, err
		}
		return &Pending{Class: class, out: out, draw: draw, opts: opts, quilts: nonNil(quilts)}, nil
	}
	w := width.Seconds()
	out := &WindowedReport{Width: width.String(), Zone: loc.String()}
	cache := NewScaleCache()
	quilts := map[int64]map[string]*mqm.Quilt{}
	var draws []func() error
	for _, k := range order {
		r, q, draw, err := planSummary(wins[k], class, fitted, opts, cache, true)
		if err != nil {
			return nil, fmt.Errorf("window %s: %w", windowStart(k, w, loc), err)
		}
		quilts[k] = q
		draws = append(draws, draw)
		out.Windows = append(out.Windows, Window{Start: windowStart(k, w, loc), End: windowStart(k+1, w, loc), Report: r})
	}
	var recs []*record.Release
	query := out.Windows[0].Report.Query
	for i, sg := range sigs {
		rec := &record.Release{Mechanism: opts.Method, Epsilon: opts.Epsilon, EpsilonExact: opts.exactText(), Class: class.Hash(), Query: query}
		for _, p := range sg.Parts {
			rec.Segments = append(rec.Segments, record.Segment{Series: fmt.Sprint("signature ", i), First: p.First, Last: p.Last,
				Readings: 0, Quilt: quilts[p.Window][p.Pattern]})
		}
		recs = append(recs, rec)
	}
	v, err := compose.RecordsContext(opts.context(), class, recs)
	if cerr := opts.ctxErr(); cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	out.Total = Total{Guarantee: v.Guarantee}
	return &Pending{Class: class, out: out, draw: drawAll(draws)}, nil
}
