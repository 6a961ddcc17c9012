// Package puffbeam is puff release as an Apache Beam pipeline, for
// populations whose readings do not fit one machine. The distributed part
// is counting: each file's rows are read with the core's parser
// (reading.ReadRows), grouped by series, ordered by time and placed on the
// data's time grid (reading.AssembleSeries, with the step the smallest
// positive difference over every series, as puff release's default), and
// summarised: readings per state and the multiset of observation patterns
// (reading.Summary). σ depends on the data only through those patterns,
// so it is computed once, on a single element, by the core (mqm via
// release.PrepareSummary), and the noise is drawn once per bin with the
// core's secure sampler. The report is puff release --json's, with the
// same σ, sizes and lengths; only the noise differs. With a ledger
// (Config.Ledger) or a compose log (Config.Log) the release stage records
// the release through release/commit, as puff release --ledger and --log
// do: budget checked before any noise is drawn, the record (puff
// release's for the same series, written by the core from each series'
// pattern: release.Pending.RecordSeries) and the noisy result committed
// together, a retried stage replaying the recorded release.
package puffbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/query"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Config is one release: the data flags of puff release (as a Spec), the
// class (JSON), ε, method and query, where the report goes and where the
// release is recorded. It is plain data (Beam serializes it to every
// worker): ε's exact rational travels as its string.
type Config struct {
	Input   string // glob
	Spec    reading.Spec
	Class   string // class JSON (the --class file's content)
	Epsilon float64
	// EpsilonRat is ε as the exact rational the user wrote ("5/9",
	// epsilon.Epsilon.Rat's RatString; "" for ln(r)): the ledger charges
	// it exactly (release.Options.EpsilonRat), the noise is calibrated at
	// Epsilon, its nearest float.
	EpsilonRat string
	Method     string
	Query      string
	Output     string // path of the JSON report
	Warning    string // a warning for the report (e.g. --gap has no effect)
	// Fit estimates one chain (stationary start) from the transition
	// counts the pipeline adds up, instead of Class, over the declared
	// states (Spec.States, or the levels), as puff release --fit.
	Fit       bool
	Smoothing float64
	// Window > 0 releases one histogram per calendar window of this width
	// (in Spec.TZ), with the total guarantee, as puff release --window.
	Window time.Duration
	// Profile, when set, releases the query for every cell of a profile
	// (hour-of-day, day-of-week or week-hour, in Spec.TZ) pooled over all
	// days, as puff release --profile (docs/math.md §4.15).
	Profile string
	// Ledger, when set, records the release in this privacy-budget
	// ledger (a SQLite file or a postgres:// URL, ledger.Open) under
	// Dataset, as puff release --ledger: the budget is checked before any
	// noise is drawn, and the record and the noisy result are committed
	// in one transaction (commit.Release). The release stage opens it: on
	// a distributed runner its workers must reach it (PostgreSQL).
	Ledger  string
	Dataset string
	// Log, when set, appends the release to this compose log file, as
	// puff release --log (Dataset names it there; default: the input's
	// name).
	Log string
	// RunID names the run (Build sets a random one when it is empty). A
	// retried release stage has the same RunID: the ledger's idempotency
	// key, so the retry returns the release recorded by the first attempt
	// instead of drawing fresh noise (which could be averaged away).
	RunID string
}

// states are the histogram's bins: the class's, or with Fit the declared
// states or levels.
func (c Config) states() ([]string, error) {
	if !c.Fit {
		class, err := markov.ParseClass(strings.NewReader(c.Class), "class")
		if err != nil {
			return nil, err
		}
		return class.States, nil
	}
	if c.Class != "" {
		return nil, fmt.Errorf("give a class or fit one, not both")
	}
	opts, err := c.Spec.CSV()
	if err != nil {
		return nil, err
	}
	switch {
	case opts.Levels != nil:
		return opts.Levels.Names(), nil
	case opts.States != nil:
		return opts.States, nil
	}
	return nil, fmt.Errorf("fitting needs the declared states (--states a,b,c): the histogram's bins must be declared, not read off the data")
}

func init() {
	register.DoFn4x1[context.Context, fileio.ReadableFile, func(string, chunk), func(reading.RowStats), error](&readFn{})
	register.Emitter2[string, chunk]()
	register.Emitter1[reading.RowStats]()
	register.Function3x0(stepFn)
	register.Iter1[chunk]()
	register.Emitter1[float64]()
	register.DoFn5x1[string, func(*chunk) bool, float64, func(Partial), func(string, string), error](&assembleFn{})
	register.Emitter2[string, string]()
	register.Iter2[string, string]()
	register.Emitter1[Partial]()
	register.Combiner3[Acc, Partial, Acc](&summaryFn{})
	register.Combiner3[float64, float64, float64](&minFn{})
	register.Combiner3[reading.RowStats, reading.RowStats, reading.RowStats](&statsFn{})
	register.DoFn5x1[context.Context, Acc, float64, reading.RowStats, func(*string, *string) bool, error](&reportFn{})
	register.DoFn7x1[string, func(*chunk) bool, float64, func(int64, Partial), func(string), func(Partial), func(string, string), error](&windowFn{})
	register.Emitter2[int64, Partial]()
	register.Emitter1[string]()
	register.DoFn8x1[context.Context, []byte, float64, reading.RowStats, Acc, func(*int64, *Acc) bool, func(*string, *int) bool, func(*string, *string) bool, error](&windowReportFn{})
	register.DoFn6x1[string, func(*chunk) bool, float64, func(int64, Partial), func(Partial), func(string, string), error](&profileFn{})
	register.DoFn7x1[context.Context, []byte, float64, reading.RowStats, Acc, func(*int64, *Acc) bool, func(*string, *string) bool, error](&profileReportFn{})
	register.Function1x2(withOne)
	register.Combiner1[int](&countFn{})
	beam.RegisterCoder(reflect.TypeOf((*chunk)(nil)).Elem(), encodeChunk, decodeChunk)
	beam.RegisterType(reflect.TypeOf((*reading.RowStats)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Partial)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Acc)(nil)).Elem())
}

// Build adds the release to the pipeline.
func Build(s beam.Scope, cfg Config) (err error) {
	defer func() {
		// Beam's construction panics on, e.g., an unregistered file system
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	states, err := cfg.states()
	if err != nil {
		return err
	}
	if _, err := cfg.Spec.CSV(); err != nil {
		return err
	}
	if _, err := cfg.options(); err != nil {
		return err
	}
	if err := cfg.checkRecording(); err != nil {
		return err
	}
	if cfg.Profile != "" {
		if cfg.Window > 0 {
			return fmt.Errorf("give --window or --profile, not both")
		}
		if _, err := query.ParseProfile(cfg.Profile); err != nil {
			return err
		}
	}
	k := len(states)
	files := fileio.ReadMatches(s, fileio.MatchFiles(s, cfg.Input, fileio.MatchEmptyDisallow()))
	rows, stats := beam.ParDo2(s, &readFn{Spec: cfg.Spec, States: states}, files)
	grouped := beam.GroupByKey(s, rows)
	step := beam.Combine(s, &minFn{}, beam.ParDo(s, stepFn, grouped))
	total := beam.Combine(s, &statsFn{}, stats)
	if cfg.Profile != "" {
		cells, whole, segs := beam.ParDo3(s, &profileFn{States: k, Step: cfg.Spec.Step, Profile: cfg.Profile, TZ: cfg.Spec.TZ, Fit: cfg.Fit, Record: cfg.recorded()}, grouped, beam.SideInput{Input: step})
		perCell := beam.CombinePerKey(s, &summaryFn{States: k}, cells)
		wholeSum := beam.Combine(s, &summaryFn{States: k}, whole) // σ from the whole series' patterns; --fit's transitions
		beam.ParDo0(s, &profileReportFn{Cfg: cfg}, beam.Impulse(s), beam.SideInput{Input: step}, beam.SideInput{Input: total},
			beam.SideInput{Input: wholeSum}, beam.SideInput{Input: perCell}, beam.SideInput{Input: segs})
		return nil
	}
	if cfg.Window > 0 {
		parts, sigs, whole, segs := beam.ParDo4(s, &windowFn{States: k, Step: cfg.Spec.Step, Width: cfg.Window, TZ: cfg.Spec.TZ, Fit: cfg.Fit, Record: cfg.recorded()}, grouped, beam.SideInput{Input: step})
		perWindow := beam.CombinePerKey(s, &summaryFn{States: k}, parts)
		sigCounts := beam.CombinePerKey(s, &countFn{}, beam.ParDo(s, withOne, sigs))
		fitted := beam.Combine(s, &summaryFn{States: k}, whole) // --fit: the whole series' transitions
		beam.ParDo0(s, &windowReportFn{Cfg: cfg}, beam.Impulse(s), beam.SideInput{Input: step}, beam.SideInput{Input: total},
			beam.SideInput{Input: fitted}, beam.SideInput{Input: perWindow}, beam.SideInput{Input: sigCounts}, beam.SideInput{Input: segs})
		return nil
	}
	partials, segs := beam.ParDo2(s, &assembleFn{States: k, Step: cfg.Spec.Step, Fit: cfg.Fit, Record: cfg.recorded()}, grouped, beam.SideInput{Input: step})
	sum := beam.Combine(s, &summaryFn{States: k}, partials)
	beam.ParDo0(s, &reportFn{Cfg: cfg}, sum, beam.SideInput{Input: step}, beam.SideInput{Input: total}, beam.SideInput{Input: segs})
	return nil
}

// readFn reads one file's rows (errors name the file and line: a bad row
// fails the pipeline, nothing is dropped silently) and passes them on as
// chunks, one per series and at most maxBuffered rows held at a time.
type readFn struct {
	Spec   reading.Spec
	States []string
}

// maxBuffered is how many rows a reader holds before it passes its chunks
// on: the reader's memory is bounded whatever the file's size.
const maxBuffered = 1 << 18

func (f *readFn) ProcessElement(ctx context.Context, file fileio.ReadableFile, emit func(string, chunk), emitStats func(reading.RowStats)) error {
	opts, err := f.Spec.CSV()
	if err != nil {
		return err
	}
	if opts.Levels == nil {
		opts.States = f.States
	}
	rc, err := file.Open(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", file.Metadata.Path, err)
	}
	defer rc.Close()
	buf := map[string]*chunk{}
	held := 0
	flush := func() {
		for series, c := range buf {
			emit(series, *c)
		}
		clear(buf)
		held = 0
	}
	st, err := reading.ReadRows(rc, file.Metadata.Path, opts, func(r reading.Row) error {
		c := buf[r.Series]
		if c == nil {
			c = &chunk{File: r.File, Unit: f.Spec.TimeUnit}
			buf[r.Series] = c
		}
		c.add(r)
		if held++; held >= maxBuffered {
			flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	flush()
	emitStats(st)
	return nil
}

// stepFn is one series' smallest positive time difference.
func stepFn(series string, chunks func(*chunk) bool, emit func(float64)) {
	emit(reading.SeriesStep(rowsOf(series, collect(chunks), false)))
}

type minFn struct{}

func (minFn) CreateAccumulator() float64             { return math.Inf(1) }
func (minFn) AddInput(a, v float64) float64          { return min(a, v) }
func (minFn) MergeAccumulators(a, b float64) float64 { return min(a, b) }

type statsFn struct{}

func (statsFn) CreateAccumulator() reading.RowStats { return reading.RowStats{} }
func (statsFn) AddInput(a, v reading.RowStats) reading.RowStats {
	return reading.RowStats{Clipped: a.Clipped + v.Clipped, MissingValues: a.MissingValues + v.MissingValues, NullValues: a.NullValues || v.NullValues}
}
func (statsFn) MergeAccumulators(a, b reading.RowStats) reading.RowStats {
	return reading.RowStats{Clipped: a.Clipped + b.Clipped, MissingValues: a.MissingValues + b.MissingValues, NullValues: a.NullValues || b.NullValues}
}

// Partial is one series' contribution to the summary.
type Partial struct {
	Counts  []float64
	Trans   []float64 // with Fit: transition counts (k×k, row-major) between readings one step apart
	Pattern string    // JSON of the observation pattern
	Len     int
	Gaps    int
}

// assembleFn orders and places one series on the grid.
type assembleFn struct {
	States int
	Step   float64 // given step (0: the side input's)
	Fit    bool
	// Record emits each series' name and observation pattern (JSON) for
	// the ledger's record, which names every series it read (O(series)
	// at the release stage, as puff release's record); not without a
	// ledger or log.
	Record bool
}

// gridStep is the step readings are placed on: given, or the data's
// smallest difference (1 when no series has two times: nothing to place).
func gridStep(given, data float64) float64 {
	switch {
	case given > 0:
		return given
	case math.IsInf(data, 1):
		return 1
	}
	return data
}

// assemble collects one series' rows and places them (AssembleSeries).
func assemble(series string, chunks func(*chunk) bool, given, dataStep float64) ([]int, []float64, mqm.Observation, error) {
	cs := collect(chunks)
	step := gridStep(given, dataStep)
	seq, secs, ob, err := reading.AssembleSeries(rowsOf(series, cs, false), step)
	if err != nil {
		// the core names a bad row by its time as written: the same rows
		// again, with every time's text, for that message
		if _, _, _, withTexts := reading.AssembleSeries(rowsOf(series, cs, true), step); withTexts != nil {
			err = withTexts
		}
	}
	return seq, secs, ob, err
}

func (f *assembleFn) ProcessElement(series string, chunks func(*chunk) bool, dataStep float64, emit func(Partial), emitSeg func(string, string)) error {
	seq, _, ob, err := assemble(series, chunks, f.Step, dataStep)
	if err != nil || len(seq) == 0 {
		return err
	}
	p := Partial{Counts: make([]float64, f.States), Len: ob.Len, Gaps: ob.Gaps()}
	for _, v := range seq {
		if v != reading.Unknown { // a reading of unknown value: in the pattern, in no bin
			p.Counts[v]++
		}
	}
	if f.Fit {
		p.Trans = transitions(seq, ob, f.States)
	}
	b, err := json.Marshal(ob)
	if err != nil {
		return err
	}
	p.Pattern = string(b)
	emit(p)
	if f.Record {
		emitSeg(series, p.Pattern)
	}
	return nil
}

// transitions counts a series' transitions: two known readings one step
// apart (Data.Runs), k×k row-major.
func transitions(seq []int, ob mqm.Observation, k int) []float64 {
	t := make([]float64, k*k)
	for j := 1; j < len(seq); j++ {
		if seq[j-1] != reading.Unknown && seq[j] != reading.Unknown && (ob.Times == nil || ob.Times[j]-ob.Times[j-1] == 1) {
			t[seq[j-1]*k+seq[j]]++
		}
	}
	return t
}

// Acc is the summary being combined: readings per state, series per
// observation pattern, sizes.
type Acc struct {
	Counts                                           []float64
	Trans                                            []float64
	Patterns                                         map[string]int
	Sequences, Observations, Missing, MinLen, MaxLen int
}

type summaryFn struct{ States int }

func (f *summaryFn) CreateAccumulator() Acc {
	return Acc{Counts: make([]float64, f.States), Patterns: map[string]int{}}
}

func (f *summaryFn) AddInput(a Acc, p Partial) Acc {
	for i, c := range p.Counts {
		a.Counts[i] += c
	}
	a.Trans = addTo(a.Trans, p.Trans)
	if a.Patterns == nil {
		a.Patterns = map[string]int{}
	}
	a.Patterns[p.Pattern]++
	if a.Sequences == 0 || p.Len < a.MinLen {
		a.MinLen = p.Len
	}
	a.MaxLen = max(a.MaxLen, p.Len)
	a.Sequences++
	a.Observations += p.Len
	a.Missing += p.Gaps
	return a
}

func (f *summaryFn) MergeAccumulators(a, b Acc) Acc {
	if len(a.Counts) == 0 {
		a.Counts = make([]float64, len(b.Counts))
	}
	for i, c := range b.Counts {
		a.Counts[i] += c
	}
	a.Trans = addTo(a.Trans, b.Trans)
	if a.Patterns == nil {
		a.Patterns = map[string]int{}
	}
	for k, n := range b.Patterns {
		a.Patterns[k] += n
	}
	if b.Sequences > 0 && (a.Sequences == 0 || b.MinLen < a.MinLen) {
		a.MinLen = b.MinLen
	}
	a.MaxLen = max(a.MaxLen, b.MaxLen)
	a.Sequences += b.Sequences
	a.Observations += b.Observations
	a.Missing += b.Missing
	return a
}

// addTo adds b to a element-wise (a grows to b's length).
func addTo(a, b []float64) []float64 {
	if len(a) < len(b) {
		a = append(a, make([]float64, len(b)-len(a))...)
	}
	for i, v := range b {
		a[i] += v
	}
	return a
}

// reportFn releases from the combined summary (one element: σ is
// computed once), records it (Config.Ledger, Config.Log) and writes the
// report.
type reportFn struct{ Cfg Config }

func (f *reportFn) ProcessElement(ctx context.Context, a Acc, dataStep float64, st reading.RowStats, segs func(*string, *string) bool) error {
	class, err := f.Cfg.class(a)
	if err != nil {
		return err
	}
	sum, err := a.Summary(class, f.Cfg.Spec, dataStep, st)
	if err != nil {
		return err
	}
	opts, t, closeLedger, err := f.Cfg.recording(ctx)
	if err != nil {
		return err
	}
	defer closeLedger()
	p, err := release.PrepareSummary(sum, class, f.Cfg.Fit, opts)
	if err != nil {
		return err
	}
	return f.Cfg.publish(ctx, p, t, segs)
}

// class is the class Θ: given, or fitted from the summed transition
// counts (one chain, stationary start, as puff release --fit).
func (c Config) class(a Acc) (*markov.Class, error) {
	if !c.Fit {
		return markov.ParseClass(strings.NewReader(c.Class), "class")
	}
	states, err := c.states()
	if err != nil {
		return nil, err
	}
	k := len(states)
	counts := make([][]float64, k)
	for x := range counts {
		counts[x] = make([]float64, k)
		if len(a.Trans) == k*k {
			copy(counts[x], a.Trans[x*k:(x+1)*k])
		}
	}
	ch, err := markov.FitCounts(states, counts, c.Smoothing)
	if err != nil {
		return nil, err
	}
	return markov.NewClass(ch.States, ch)
}

// Summary turns the combined accumulator into the core's summary.
func (a Acc) Summary(class *markov.Class, spec reading.Spec, dataStep float64, st reading.RowStats) (*reading.Summary, error) {
	opts, err := spec.CSV()
	if err != nil {
		return nil, err
	}
	sum := reading.NewSummary(class.States, opts.Levels)
	sum.Step, sum.StepSource = gridStep(spec.Step, dataStep), "given"
	if spec.Step == 0 {
		sum.StepSource = "the smallest difference between consecutive times in the data"
	}
	sum.Clipped, sum.MissingValues = st.Clipped, st.MissingValues
	part := reading.NewSummary(class.States, opts.Levels)
	part.Step = sum.Step
	for key, n := range a.Patterns {
		var ob mqm.Observation
		if err := json.Unmarshal([]byte(key), &ob); err != nil {
			return nil, err
		}
		part.Patterns[reading.PatternKey(ob)] = &reading.Pattern{Observation: ob, Series: n}
	}
	copy(part.Counts, a.Counts)
	part.Sequences, part.Observations, part.Missing, part.MinLength, part.MaxLength = a.Sequences, a.Observations, a.Missing, a.MinLen, a.MaxLen
	if err := sum.Merge(part); err != nil {
		return nil, err
	}
	// every reading has a value unless a file's format can hold one
	// without (docs/math.md §4.14)
	sum.Complete = !st.NullValues
	return sum, nil
}

// windowFn places one series on the grid and cuts it into its calendar
// windows: one partial summary per window, and the series' signature
// (its window segments) for the total guarantee.
type windowFn struct {
	States int
	Step   float64
	Width  time.Duration
	TZ     string
	Fit    bool
	Record bool // emit each series' whole pattern (assembleFn.Record)
}

func (f *windowFn) ProcessElement(series string, chunks func(*chunk) bool, dataStep float64, emit func(int64, Partial), emitSig func(string), emitWhole func(Partial), emitSeg func(string, string)) error {
	seq, secs, ob, err := assemble(series, chunks, f.Step, dataStep)
	if err != nil || len(seq) == 0 {
		return err
	}
	loc, err := location(f.TZ)
	if err != nil {
		return err
	}
	parts, err := release.SplitWindows(seq, secs, ob, f.Width, loc)
	if err != nil {
		return err
	}
	// the fit reads the whole series (puff release --fit --window fits
	// once, before cutting windows); emitted always, so the combined side
	// input exists
	whole := Partial{Counts: make([]float64, f.States), Len: ob.Len, Gaps: ob.Gaps()}
	wb, err := json.Marshal(ob)
	if err != nil {
		return err
	}
	whole.Pattern = string(wb) // joint windows are calibrated on the whole series
	if f.Fit {
		whole.Trans = transitions(seq, ob, f.States)
	}
	emitWhole(whole)
	if f.Record {
		emitSeg(series, whole.Pattern)
	}
	var sig []release.SignaturePart
	for _, p := range parts {
		pt := Partial{Counts: make([]float64, f.States), Len: p.Ob.Len, Gaps: p.Ob.Gaps()}
		for _, v := range p.Seq {
			if v != reading.Unknown {
				pt.Counts[v]++
			}
		}
		b, err := json.Marshal(p.Ob)
		if err != nil {
			return err
		}
		pt.Pattern = string(b)
		emit(p.Window, pt)
		sig = append(sig, release.SignaturePart{Window: p.Window, First: p.Ob.Start, Last: p.Ob.End(), Pattern: reading.PatternKey(p.Ob)})
	}
	b, err := json.Marshal(sig)
	if err != nil {
		return err
	}
	emitSig(string(b))
	return nil
}

func location(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	return time.LoadLocation(tz)
}

func withOne(s string) (string, int) { return s, 1 }

type countFn struct{}

func (countFn) CreateAccumulator() int         { return 0 }
func (countFn) AddInput(a, v int) int          { return a + v }
func (countFn) MergeAccumulators(a, b int) int { return a + b }

// windowReportFn releases every window from its summary and the total
// from the signatures, once, records the whole run as one release
// (Config.Ledger, Config.Log; as puff release --window) and writes the
// report.
type windowReportFn struct{ Cfg Config }

func (f *windowReportFn) ProcessElement(ctx context.Context, _ []byte, dataStep float64, st reading.RowStats, whole Acc, wins func(*int64, *Acc) bool, sigs func(*string, *int) bool, segs func(*string, *string) bool) error {
	class, loc, sums, err := f.Cfg.groups(whole, dataStep, st, wins)
	if err != nil {
		return err
	}
	var list []release.Signature
	var key string
	var n int
	for sigs(&key, &n) {
		var sg release.Signature
		if err := json.Unmarshal([]byte(key), &sg.Parts); err != nil {
			return err
		}
		sg.Series = n
		list = append(list, sg)
	}
	opts, t, closeLedger, err := f.Cfg.recording(ctx)
	if err != nil {
		return err
	}
	defer closeLedger()
	wholeSum, err := whole.Summary(class, f.Cfg.Spec, dataStep, reading.RowStats{})
	if err != nil {
		return err
	}
	p, err := release.PrepareWindowSummaries(wholeSum, sums, list, class, f.Cfg.Fit, opts, f.Cfg.Window, loc)
	if err != nil {
		return err
	}
	return f.Cfg.publish(ctx, p, t, segs)
}

// groups is the class, the time zone and one summary per group (a
// window's or a profile cell's, keyed by its index) of a windowed or
// profile run: per group, as puff release does, no clipped or
// missing-value counts; whether the files can hold missing values (a
// property of their formats) sets the estimate's constraint (docs/math.md
// §4.14).
func (c Config) groups(whole Acc, dataStep float64, st reading.RowStats, next func(*int64, *Acc) bool) (*markov.Class, *time.Location, map[int64]*reading.Summary, error) {
	class, err := c.class(whole)
	if err != nil {
		return nil, nil, nil, err
	}
	loc, err := location(c.Spec.TZ)
	if err != nil {
		return nil, nil, nil, err
	}
	sums := map[int64]*reading.Summary{}
	var k int64
	var a Acc
	for next(&k, &a) {
		sum, err := a.Summary(class, c.Spec, dataStep, reading.RowStats{NullValues: st.NullValues})
		if err != nil {
			return nil, nil, nil, err
		}
		sums[k] = sum
		a = Acc{}
	}
	return class, loc, sums, nil
}

// profileFn places one series on the grid and puts each reading in its
// profile cell (release.CellOf): one partial summary per cell the series
// has readings in, and the whole series' pattern, which sets σ for every
// cell (docs/math.md §4.15).
type profileFn struct {
	States  int
	Step    float64
	Profile string
	TZ      string
	Fit     bool
	Record  bool // emit each series' whole pattern (assembleFn.Record)
}

func (f *profileFn) ProcessElement(series string, chunks func(*chunk) bool, dataStep float64, emit func(int64, Partial), emitWhole func(Partial), emitSeg func(string, string)) error {
	seq, secs, ob, err := assemble(series, chunks, f.Step, dataStep)
	if err != nil || len(seq) == 0 {
		return err
	}
	loc, err := location(f.TZ)
	if err != nil {
		return err
	}
	prof, err := query.ParseProfile(f.Profile)
	if err != nil {
		return err
	}
	if secs == nil {
		return fmt.Errorf("a profile needs a time column (the cells are hours and days of the readings' times)")
	}
	whole := Partial{Counts: make([]float64, f.States), Len: ob.Len, Gaps: ob.Gaps()}
	wb, err := json.Marshal(ob)
	if err != nil {
		return err
	}
	whole.Pattern = string(wb)
	if f.Fit {
		whole.Trans = transitions(seq, ob, f.States)
	}
	emitWhole(whole)
	if f.Record {
		emitSeg(series, whole.Pattern)
	}
	cells := map[int]*Partial{}
	for j, v := range seq {
		c := release.CellOf(prof, secs[j], loc)
		pt := cells[c]
		if pt == nil {
			pt = &Partial{Counts: make([]float64, f.States)}
			cells[c] = pt
		}
		if v != reading.Unknown {
			pt.Counts[v]++
		}
		pt.Len++
	}
	for c, pt := range cells {
		b, err := json.Marshal(release.CellPattern(pt.Len))
		if err != nil {
			return err
		}
		pt.Pattern = string(b)
		emit(int64(c), *pt)
	}
	return nil
}

// profileReportFn releases every cell of the profile from its summary,
// once, records it as one release (Config.Ledger, Config.Log; as puff
// release --profile) and writes the report.
type profileReportFn struct{ Cfg Config }

func (f *profileReportFn) ProcessElement(ctx context.Context, _ []byte, dataStep float64, st reading.RowStats, whole Acc, cells func(*int64, *Acc) bool, segs func(*string, *string) bool) error {
	class, loc, byKey, err := f.Cfg.groups(whole, dataStep, st, cells)
	if err != nil {
		return err
	}
	sums := make(map[int]*reading.Summary, len(byKey))
	for k, sum := range byKey {
		sums[int(k)] = sum
	}
	opts, t, closeLedger, err := f.Cfg.recording(ctx)
	if err != nil {
		return err
	}
	defer closeLedger()
	// the row stats too: an empty cell is Complete as the whole
	// (release.PrepareProfileSummaries), which a format that can hold a
	// reading without a value is not
	wholeSum, err := whole.Summary(class, f.Cfg.Spec, dataStep, st)
	if err != nil {
		return err
	}
	p, err := release.PrepareProfileSummaries(wholeSum, sums, class, f.Cfg.Fit, opts, loc)
	if err != nil {
		return err
	}
	return f.Cfg.publish(ctx, p, t, segs)
}
