// Package stream releases a dataset that is fed over time — a curator's
// readings appended day after day — one calendar window at a time, for the
// price of one release.
//
// # Guarantee
//
// A stream is charged ε once, when it is declared. Every window it ever
// releases gets Laplace noise of scale σ·L on every bin, L the window's
// Lipschitz constant, with σ the supremum of the Markov Quilt Mechanism's
// σ_max over every length, every start and every pattern of missing
// readings (docs/math.md §4.9, Lemmas 1–3). All windows released so far are
// then one release of a vector query on every series' chain, ε-Pufferfish
// by docs/math.md §4.8, at every moment of the stream's life. A window is
// released once, when a reading at or after its end is appended (or a
// closing time passes it); a reading inside a released window is refused,
// so no reading is counted twice and no window's noise is drawn twice.
//
// The running state (the counts of windows still open) is stored in the
// ledger with the stream and is never printed.
package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/record"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Settings declare a stream: how appended files are read, the windows, ε,
// the mechanism and query, the class, and σ (computed once).
type Settings struct {
	Spec    reading.Spec `json:"spec"`
	Window  string       `json:"window"`
	Epsilon float64      `json:"epsilon"`
	// EpsilonExact is ε as the exact rational written ("p/q"; "" for
	// ln(r)): the ledger charges it exactly (record.Release.EpsilonExact).
	EpsilonExact string          `json:"epsilon_exact,omitempty"`
	Method       mechanism.Name  `json:"method"`
	Query        string          `json:"query"`
	Class        json.RawMessage `json:"class"`
	// Scale is σ's search: the supremum over lengths, reached at Length
	// (docs/math.md §4.9, Lemma 3).
	Scale *release.Scale `json:"scale"`
	// TPL is the temporal leakage bound's σ for every length (docs/math.md
	// §8.4–8.7; 0: not computed, for the reason TPLWhy); the smaller of
	// the two sets every window's noise.
	TPL    float64 `json:"tpl_sigma,omitempty"`
	TPLWhy string  `json:"tpl_why,omitempty"`
	// TPLBound names the leakage bound that gave TPL ("pairwise" or
	// "scalar"); TPLScalar and TPLPairwise are both bounds' σ (0: not
	// computed). All computed once, at init (docs/math.md §8.11).
	TPLBound    string  `json:"tpl_bound,omitempty"`
	TPLScalar   float64 `json:"tpl_scalar_sigma,omitempty"`
	TPLPairwise float64 `json:"tpl_pairwise_sigma,omitempty"`
	// TPLLimit is the σ no leakage calibration can go below (an explicit
	// output sequence's, docs/math.md §8.10; 0: not computed).
	TPLLimit float64 `json:"tpl_limit_sigma,omitempty"`
	// Running releases, after every closed window, the count histogram
	// since the first window by the binary-tree mechanism instead of the
	// window's own (SetRunning; docs/math.md §4.12).
	Running bool `json:"running,omitempty"`
	// Source draws the noise: nil (always, for a stream read from a
	// ledger) is crypto/rand; experiments inject a seeded one.
	Source noise.Source `json:"-"`
}

// base is the calibration every window shares.
func (s *Settings) base(class *markov.Class) *release.Report {
	return release.StreamBase(class, release.Options{Epsilon: s.Epsilon, Method: s.Method, Query: s.Query}, s.Scale, s.Leakage())
}

// sigma is the σ the stream's windows are drawn with: the Markov Quilt
// Mechanism's or the leakage bound's, the smaller (StreamBase).
func (s *Settings) sigma() float64 {
	class, err := markov.ParseClass(strings.NewReader(string(s.Class)), "the stream's class")
	if err != nil {
		return *s.Scale.Sigma // not reached: the class was read at init
	}
	return release.UsedSigma(s.base(class))
}

// Leakage is the leakage bound the stream computed at init, as release
// reports it (the settings store its fields flat, under their own names).
func (s *Settings) Leakage() release.Leakage {
	return release.Leakage{Sigma: s.TPL, Why: s.TPLWhy, Bound: s.TPLBound, Scalar: s.TPLScalar, Pairwise: s.TPLPairwise, Limit: s.TPLLimit}
}

// setLeakage stores l in the settings (Leakage's inverse).
func (s *Settings) setLeakage(l release.Leakage) {
	s.TPL, s.TPLWhy, s.TPLBound, s.TPLScalar, s.TPLPairwise, s.TPLLimit = l.Sigma, l.Why, l.Bound, l.Scalar, l.Pairwise, l.Limit
}

// State is a stream's running state: never printed (it holds the counts
// of open windows).
type State struct {
	// Closed: every window with index ≤ Closed is closed (released when
	// it held a reading); nil before the first close.
	Closed *int64 `json:"closed,omitempty"`
	// Latest is the latest time appended (seconds).
	Latest *float64 `json:"latest,omitempty"`
	// Step is the time grid (seconds): the declared step, or the smallest
	// difference seen so far within a series (0: not known yet).
	Step float64 `json:"step"`
	// Last is every series' last reading time (seconds).
	Last map[string]float64 `json:"last"`
	// Open are the windows still open, by calendar index.
	Open map[string]*Open `json:"open"`
	// Tree is a running stream's binary tree (nil otherwise).
	Tree *Tree `json:"tree,omitempty"`
}

// Open is one open window: readings per state, pooled over the series,
// and each series' part (for the window's sizes).
type Open struct {
	Counts []float64        `json:"counts"`
	Series map[string]*Part `json:"series"`
	// Complete says no file appended to the window could hold a reading
	// without a value (reading.Summary.Complete): its counts sum to its
	// readings. A property of the files' formats, never of their values;
	// false (windows stored before it was kept, or numeric readings) is
	// the safe side (docs/math.md §4.14).
	Complete bool `json:"complete,omitempty"`
}

// Part is one series' readings in a window (with those of unknown value):
// how many and their first and last times (seconds).
type Part struct {
	N     int        `json:"n"`
	Times [2]float64 `json:"times"` // first and last
}

// MaxLength caps the chain length σ's supremum is searched at.
const MaxLength = 1 << 22

// Declare computes a stream's σ once: σ_max at lengths 1024, 2048, …
// until Lemma 3 of docs/math.md §4.9 says the supremum is reached
// (T ≥ 2(⌊εσ⌋+1)+1), for the class with every fixed start replaced by
// "any" (a series may begin anywhere in its chain).
func Declare(spec reading.Spec, window string, eps float64, method mechanism.Name, query string, class *markov.Class) (*Settings, error) {
	return DeclareContext(context.Background(), spec, window, eps, method, query, class)
}

// DeclareContext is Declare stopped when ctx ends: σ's searches at
// growing lengths return within about a second an error wrapping
// ctx.Err() (release.ComputeScaleContext).
func DeclareContext(ctx context.Context, spec reading.Spec, window string, eps float64, method mechanism.Name, query string, class *markov.Class) (*Settings, error) {
	return DeclareWithLimits(ctx, release.Limits{}, spec, window, eps, method, query, class)
}

// DeclareWithLimits is DeclareContext whose leakage bound (computed once,
// here; ctx stops it too) limits.MaxLeakageWork caps (docs/math.md §8.11).
func DeclareWithLimits(ctx context.Context, limits release.Limits, spec reading.Spec, window string, eps float64, method mechanism.Name, query string, class *markov.Class) (*Settings, error) {
	if err := checks.Epsilon(eps); err != nil {
		return nil, err
	}
	if method != mechanism.Exact && method != mechanism.Approx {
		return nil, fmt.Errorf("method %q: a stream needs exact or approx (its σ must hold at every length)", method)
	}
	if _, _, err := parseWindow(window, spec); err != nil {
		return nil, err
	}
	query, err := release.ParseQuery(query)
	if err != nil {
		return nil, err
	}
	if _, err := spec.CSV(); err != nil {
		return nil, err
	}
	any := class.AnyStart()
	var s *release.Scale
	for T := 1024; ; T *= 2 {
		if T > MaxLength {
			return nil, fmt.Errorf("σ does not settle by length %d (σ = %.6g at ε = %g): the class mixes too slowly for a stream at this ε", MaxLength, *s.Sigma, eps)
		}
		var err error
		if s, err = release.ComputeScaleContext(ctx, any, T, eps, method); err != nil {
			return nil, err
		}
		if !s.Applicable || s.Sigma == nil {
			return nil, fmt.Errorf("method %s does not apply: %s", method, s.Guarantee)
		}
		m := math.Floor(eps**s.Sigma) + 1
		if float64(T) >= 2*m+1 {
			break
		}
	}
	s.Guarantee = fmt.Sprintf("%g-Pufferfish privacy for the class, all windows of the stream together (%s with σ the supremum over lengths, starts and missing readings; [SWC17] Thm 4.3, docs/math.md §4.9)", eps, method.Title())
	cj, err := class.MarshalJSON()
	if err != nil {
		return nil, err
	}
	l, err := release.StreamLeakage(ctx, any, eps, limits)
	if err != nil {
		return nil, err
	}
	st := &Settings{Spec: spec, Window: window, Epsilon: eps, Method: method, Query: query, Class: cj, Scale: s}
	st.setLeakage(l)
	return st, nil
}

func parseWindow(window string, spec reading.Spec) (time.Duration, *time.Location, error) {
	w, err := time.ParseDuration(window)
	if err != nil || w < time.Second {
		return 0, nil, fmt.Errorf("window %q: want a duration of at least a second, such as 1h or 24h", window)
	}
	tz := spec.TZ
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return 0, nil, fmt.Errorf("tz: %w", err)
	}
	return w, loc, nil
}

// Record is the stream's one charge for the ledger: MQM, or a generic
// ε-Pufferfish release when the leakage bound sets the noise.
func (s *Settings) Record(class *markov.Class) *record.Release {
	b := s.base(class)
	query := s.Query
	if s.Running {
		// every node moves by e^{1/σ} per reading, like a window (§4.12)
		query = "running " + query
	}
	return &record.Release{Mechanism: release.RecordedMechanism(b), Epsilon: s.Epsilon, EpsilonExact: s.EpsilonExact, Class: class.Hash(), Query: query, Stream: true, Sigma: release.UsedSigma(b)}
}

// NewState is the state of a stream with nothing appended.
func (s *Settings) NewState() State {
	st := State{Step: s.Spec.Step, Last: map[string]float64{}, Open: map[string]*Open{}}
	if s.Running {
		st.Tree = &Tree{}
	}
	return st
}

// Window is one released window, as puff release --window prints it; a
// running stream's report is the node drawn at the window, and Running
// the total since the first window.
type Window struct {
	release.Window
	Running *Running `json:"running,omitempty"`
}

// Released is a window and its calendar index.
type Released struct {
	Index  int64
	Window Window
}

// Append reads one file of readings (named name in errors) that continue
// the stream, adds them to the open windows and releases every window
// that closes: those before the latest time appended, or ending at or
// before close (when not nil); r may be nil to close only. It returns the
// new state; st is not modified. Errors name the file and line and change
// nothing.
func (s *Settings) Append(st State, r io.Reader, name string, close *float64) (State, []Released, error) {
	return s.AppendLimit(st, r, name, close, MaxRows)
}

// AppendLimit is Append reading at most maxRows readings (min MaxRows):
// beyond, a *RowsError (a DataError) and st unchanged.
func (s *Settings) AppendLimit(st State, r io.Reader, name string, close *float64, maxRows int) (State, []Released, error) {
	if maxRows <= 0 || maxRows > MaxRows {
		maxRows = MaxRows
	}
	next, out, err := s.append(st, r, name, close, maxRows)
	if err != nil {
		return st, nil, &DataError{err}
	}
	return next, out, nil
}

func (s *Settings) append(st State, r io.Reader, name string, close *float64, maxRows int) (State, []Released, error) {
	class, err := markov.ParseClass(strings.NewReader(string(s.Class)), "the stream's class")
	if err != nil {
		return st, nil, err
	}
	width, loc, err := parseWindow(s.Window, s.Spec)
	if err != nil {
		return st, nil, err
	}
	opts, err := s.Spec.CSV()
	if err != nil {
		return st, nil, err
	}
	if opts.Levels != nil && opts.States == nil {
		opts.States = opts.Levels.Names()
	}
	if opts.States == nil {
		opts.States = class.States
	}
	if !slices.Equal(opts.States, class.States) {
		return st, nil, fmt.Errorf("the stream's states %q differ from its class's %q", opts.States, class.States)
	}
	var rows []reading.Row
	var stats reading.RowStats
	if r == nil {
		// nothing to read: only closing
	} else if stats, err = reading.ReadRows(r, name, opts, func(row reading.Row) error {
		if len(rows) >= maxRows {
			return &RowsError{At: fmt.Sprintf("%s:%d", row.File, row.Line), Limit: maxRows}
		}
		rows = append(rows, row)
		return nil
	}); err != nil {
		return st, nil, err
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Series != rows[j].Series {
			return rows[i].Series < rows[j].Series
		}
		return rows[i].Time < rows[j].Time
	})
	next := st.clone()
	// the grid step: declared, or the smallest difference within a series
	for i := 1; i < len(rows); i++ {
		if rows[i].Series == rows[i-1].Series && rows[i].Time > rows[i-1].Time && (next.Step == 0 || rows[i].Time-rows[i-1].Time < next.Step) && s.Spec.Step == 0 {
			next.Step = rows[i].Time - rows[i-1].Time
		}
	}
	for i, row := range rows {
		at := fmt.Sprintf("%s:%d", row.File, row.Line)
		if i > 0 && rows[i-1].Series == row.Series && rows[i-1].Time == row.Time {
			return st, nil, fmt.Errorf("%s: series %q has two rows at time %s", at, release.SeriesName(row.Series), row.TimeText)
		}
		if last, ok := next.Last[row.Series]; ok && row.Time <= last {
			return st, nil, fmt.Errorf("%s: series %q at time %s is not after its last appended reading: a stream's readings are appended once, in time order (a file appended twice is recognised and skipped as a whole)", at, release.SeriesName(row.Series), row.TimeText)
		}
		k := release.WindowOf(row.Time, width, loc)
		if next.Closed != nil && k <= *next.Closed {
			start, end := release.WindowBounds(k, width, loc)
			return st, nil, fmt.Errorf("%s: series %q at time %s falls in the window %s – %s, which is already closed: a released window is never released again, so late readings are refused", at, release.SeriesName(row.Series), row.TimeText, start, end)
		}
		if last, ok := next.Last[row.Series]; ok && next.Step > 0 {
			g := (row.Time - last) / next.Step
			if g >= reading.MaxSpan {
				// refused before any count of the steps between is made
				// (a window's missing readings would not fit an int)
				return st, nil, fmt.Errorf("%s: series %q at time %s is more than %d steps of %v after its previous reading; is the time step right?", at, release.SeriesName(row.Series), row.TimeText, reading.MaxSpan, next.Step)
			}
			if math.Abs(g-math.Round(g)) > 1e-6*math.Max(1, g) {
				return st, nil, fmt.Errorf("%s: series %q at time %s is %.6g steps of %v after its previous reading: readings must lie on the stream's time grid", at, release.SeriesName(row.Series), row.TimeText, g, next.Step)
			}
		}
		next.Last[row.Series] = row.Time
		if next.Latest == nil || row.Time > *next.Latest {
			t := row.Time
			next.Latest = &t
		}
		key := strconv.FormatInt(k, 10)
		o := next.Open[key]
		if o == nil {
			o = &Open{Counts: make([]float64, len(class.States)), Series: map[string]*Part{}, Complete: true}
			next.Open[key] = o
		}
		o.Complete = o.Complete && !stats.NullValues
		// a missing value is a reading of unknown value: in the window's
		// pattern, in no bin (docs/math.md §4.8, "missing values")
		if row.State != reading.Unknown {
			o.Counts[row.State]++
		}
		p := o.Series[row.Series]
		if p == nil {
			p = &Part{Times: [2]float64{row.Time, row.Time}}
			o.Series[row.Series] = p
		}
		p.N++
		p.Times[1] = row.Time
	}
	// windows to close
	var upto *int64
	if next.Latest != nil {
		u := release.WindowOf(*next.Latest, width, loc) - 1
		upto = &u
	}
	if close != nil {
		u := release.WindowOf(*close, width, loc) - 1
		if upto == nil || u > *upto {
			upto = &u
		}
	}
	var out []Released
	if upto != nil && (next.Closed == nil || *upto > *next.Closed) {
		var keys []int64
		for key := range next.Open {
			k, _ := strconv.ParseInt(key, 10, 64)
			if k <= *upto {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		if len(keys) > MaxWindows {
			return st, nil, fmt.Errorf("%s: this append would release %d windows, more than %d at once: append the readings in smaller parts (or use longer windows)", name, len(keys), MaxWindows)
		}
		opt := release.Options{Epsilon: s.Epsilon, Method: s.Method, Query: s.Query, Source: s.Source}
		base := s.base(class)
		for _, k := range keys {
			key := strconv.FormatInt(k, 10)
			var w Window
			if s.Running {
				if next.Tree == nil {
					return st, nil, errors.New("a running stream's state has no tree")
				}
				w, err = next.Tree.close(next.Open[key], class.States, opts.Levels, next.Step, base, class, opt, k, width, loc)
			} else {
				sum := next.Open[key].summary(class.States, opts.Levels, next.Step)
				w.Window, err = release.ReleaseWindow(base, sum, class, opt, k, width, loc)
			}
			if err != nil {
				return st, nil, err
			}
			out = append(out, Released{Index: k, Window: w})
			delete(next.Open, key)
		}
		next.Closed = upto
	}
	return next, out, nil
}

// DataError is an appended file's fault (a bad, late or repeated reading):
// the caller's input, not the stream's.
type DataError struct{ Err error }

func (e *DataError) Error() string { return e.Err.Error() }
func (e *DataError) Unwrap() error { return e.Err }

// MaxWindows caps the windows one append may release (each is drawn,
// stored and printed): release's default window limit.
const MaxWindows = release.DefaultMaxWindows

// MaxRows caps the rows of one append (all are held to be ordered).
const MaxRows = 10_000_000

// RowsError is an append of more readings than its limit (MaxRows, or
// the caller's: AppendLimit, FeedLimit).
type RowsError struct {
	At    string // file:line of the first reading beyond
	Limit int
}

func (e *RowsError) Error() string {
	return fmt.Sprintf("%s: more than %d rows in one append: append the file in parts", e.At, e.Limit)
}

// summary is the window's summary: its counts and public sizes.
func (o *Open) summary(states []string, levels *reading.Levels, step float64) *reading.Summary {
	sum := reading.NewSummary(states, levels)
	sum.Step = step
	sum.Complete = o.Complete
	copy(sum.Counts, o.Counts)
	names := make([]string, 0, len(o.Series))
	for n := range o.Series {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		p := o.Series[n]
		if i == 0 || p.N < sum.MinLength {
			sum.MinLength = p.N
		}
		sum.MaxLength = max(sum.MaxLength, p.N)
		sum.Sequences++
		sum.Observations += p.N
		if step > 0 {
			sum.Missing += int(math.Round((p.Times[1]-p.Times[0])/step)) + 1 - p.N
		}
	}
	return sum
}

func (st State) clone() State {
	b, _ := json.Marshal(st)
	var out State
	json.Unmarshal(b, &out)
	if out.Last == nil {
		out.Last = map[string]float64{}
	}
	if out.Open == nil {
		out.Open = map[string]*Open{}
	}
	return out
}

// Parse reads stored settings.
func Parse(b []byte) (*Settings, error) {
	var s Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("stream settings: %w", err)
	}
	if s.Scale == nil || s.Scale.Sigma == nil {
		return nil, errors.New("stream settings: no σ")
	}
	return &s, nil
}

// ParseState reads a stored state.
func ParseState(b []byte) (State, error) {
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("stream state: %w", err)
	}
	return st.clone(), nil
}
