// Package release turns categorical sequences into a private histogram
// with an audit report (docs/math.md §4, "Lipschitz constants").
//
// # Guarantee
//
// With method "exact" or "approx", Histogram is ε-Pufferfish private in the
// framework (S, Q, Θ) of [SWC17] §4.1: secrets X_t = a for every entry of
// every sequence, pairs (X_t=a, X_t=b), and Θ the given class of Markov
// chains, sequences independent of each other. Changing one entry changes
// the count histogram by at most 2 in L1 (L = 2) and the relative-frequency
// histogram by 2/N, N the pooled number of observations. Entries of other
// sequences are independent of the secret, so the quilt analysis applies to
// the sequence holding it: the noise scale is max over sequence lengths T
// of σ_max(T), times L, added independently to every bin ([SWC16] Theorem
// 4.3 for vector queries). "groupdp" is ε-Pufferfish for every Θ; "gk16" is
// the guarantee of Ghosh–Kleinberg when applicable; "dp" is entry-level
// ε-DP only and offers no protection against correlation.
//
// A class fitted from the released data (Fit) makes the guarantee depend on
// that estimate, which is itself not protected; reports say so.
package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/record"

	"github.com/pufferfish-privacy/pufferfish/baseline"
	"github.com/pufferfish-privacy/pufferfish/estimate"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/query"
)

// Scale is the noise scale of one method for a 1-Lipschitz scalar query on
// chains of length T: the result type every method shares.
type Scale struct {
	Method       mechanism.Name    `json:"method"`
	Epsilon      float64           `json:"epsilon"`
	Length       int               `json:"length"`
	Start        int               `json:"start"`                 // chain time of the first reading (1-based)
	Span         int               `json:"span,omitempty"`        // time steps from first to last reading, when readings are missing
	Missing      int               `json:"missing,omitempty"`     // missing readings inside the span
	UpperBound   bool              `json:"upper_bound,omitempty"` // σ of the whole span: the exact search over the missing readings exceeded its budget
	Applicable   bool              `json:"applicable"`
	Sigma        *float64          `json:"sigma"` // nil when not applicable
	Quilt        *mqm.Quilt        `json:"quilt"` // MQM only
	Node         int               `json:"node,omitempty"`
	TwoSided     *bool             `json:"two_sided,omitempty"`
	Influence    *float64          `json:"influence,omitempty"`
	Chain        *int              `json:"chain,omitempty"`
	Approx       *mqm.ApproxParams `json:"approx,omitempty"`
	SpectralNorm *float64          `json:"spectral_norm,omitempty"`
	Guarantee    string            `json:"guarantee"`
	Class        *ClassSummary     `json:"class,omitempty"`
}

// ClassSummary describes Θ without the data.
type ClassSummary struct {
	States   []string `json:"states"`
	Chains   int      `json:"chains"`
	Initial  []string `json:"initial"` // distinct initial kinds
	Coverage string   `json:"coverage"`
	Fitted   bool     `json:"fitted"`
}

// Summarize describes a class.
func Summarize(c *markov.Class, fitted bool) *ClassSummary {
	kinds := []string{}
	for _, ch := range c.Chains {
		if k := ch.Init.String(); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return &ClassSummary{States: c.States, Chains: len(c.Chains), Initial: kinds, Coverage: c.Coverage(), Fitted: fitted}
}

// ComputeScale runs one method for a chain of T consecutive readings from
// time 1.
func ComputeScale(class *markov.Class, T int, eps float64, method mechanism.Name) (*Scale, error) {
	return ComputeScaleContext(context.Background(), class, T, eps, method)
}

// ComputeScaleContext is ComputeScale stopped when ctx ends: the MQM
// search then returns within about a second an error wrapping ctx.Err()
// (mqm.ScaleContext).
func ComputeScaleContext(ctx context.Context, class *markov.Class, T int, eps float64, method mechanism.Name) (*Scale, error) {
	if T < 1 {
		return nil, fmt.Errorf("length %d: want ≥ 1", T)
	}
	return computeScaleAt(ctx, nil, class, mqm.Consecutive(1, T), eps, method)
}

// ComputeScaleAt runs one method for readings observed at the chain times
// ob: a segment that starts later than time 1, or a series with missing
// readings (see mqm.Observation). MQM searches the observed readings
// exactly; gk16 covers the whole chain up to the last reading (a query that
// ignores some entries is still covered); groupdp takes the observed
// readings as the group.
func ComputeScaleAt(class *markov.Class, ob mqm.Observation, eps float64, method mechanism.Name) (*Scale, error) {
	return computeScaleAt(context.Background(), nil, class, ob, eps, method)
}

// ComputeScaleAtContext is ComputeScaleAt stopped when ctx ends (as
// ComputeScaleContext).
func ComputeScaleAtContext(ctx context.Context, class *markov.Class, ob mqm.Observation, eps float64, method mechanism.Name) (*Scale, error) {
	return computeScaleAt(ctx, nil, class, ob, eps, method)
}

// computeScaleAt is ComputeScaleAt with the MQM searches sharing tables
// (nil: none), stopped when ctx ends.
func computeScaleAt(ctx context.Context, tables *mqm.Tables, class *markov.Class, ob mqm.Observation, eps float64, method mechanism.Name) (*Scale, error) {
	if err := checks.Epsilon(eps); err != nil {
		return nil, err
	}
	if ob.Len < 1 || ob.Start < 1 {
		return nil, fmt.Errorf("length %d from time %d: want ≥ 1 each", ob.Len, ob.Start)
	}
	T := ob.Len
	s := &Scale{Method: method, Epsilon: eps, Length: T, Start: ob.Start, Applicable: true}
	if ob.Times != nil {
		s.Span, s.Missing = ob.End()-ob.Start+1, ob.Gaps()
	}
	f := func(v float64) *float64 { return &v }
	switch method {
	case mechanism.Exact, mechanism.Approx:
		m := method
		scaleAt := mqm.ScaleAtContext
		if tables != nil {
			scaleAt = tables.ScaleAtContext
		}
		r, err := scaleAt(ctx, class, ob, eps, m)
		if m == mqm.Approx && (errors.Is(err, markov.ErrPeriodic) || errors.Is(err, markov.ErrNotIrreducible)) {
			// MQMApprox's bound needs an ergodic class: not applicable,
			// as gk16 reports (the other methods still apply).
			s.Applicable, s.Guarantee = false, "none: "+err.Error()
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		q, two, ch := r.Quilt, r.TwoSided, r.Chain
		s.Sigma, s.Quilt, s.Node, s.TwoSided, s.Influence = f(r.Sigma), &q, r.Node, &two, f(r.Influence)
		if method == mechanism.Exact {
			s.Chain = &ch
		}
		s.Approx = r.Approx
		s.UpperBound = r.UpperBound
		s.Guarantee = fmt.Sprintf("%g-Pufferfish privacy for the class (%s, [SWC17] Thm 4.3)", eps, method.Title())
	case mechanism.GK16:
		r, err := baseline.GK16Context(ctx, class, ob.End(), eps)
		if err != nil {
			return nil, err
		}
		s.Applicable, s.SpectralNorm = r.Applicable, f(r.SpectralNorm)
		ch := r.Chain
		s.Chain = &ch
		if r.Applicable {
			s.Sigma = f(r.Sigma)
			s.Guarantee = fmt.Sprintf("%g-inferential privacy of Ghosh–Kleinberg (spectral norm %.4g < 1)", eps, r.SpectralNorm)
		} else {
			s.Guarantee = fmt.Sprintf("none: GK16 needs spectral norm < 1, chain %d has %.4g", r.Chain, r.SpectralNorm)
		}
	case mechanism.GroupDP:
		s.Sigma = f(baseline.GroupDP(T, eps))
		s.Guarantee = fmt.Sprintf("%g-Pufferfish privacy for every class (one group per chain)", eps)
	case mechanism.DP:
		s.Sigma = f(baseline.DP(eps))
		s.Guarantee = fmt.Sprintf("%g-differential privacy per entry only; NOT Pufferfish-private for correlated entries", eps)
	default:
		return nil, fmt.Errorf("unknown method %q (want one of %v)", method, mechanism.Release)
	}
	return s, nil
}

// Options configures Histogram.
type Options struct {
	Epsilon float64
	// EpsilonRat is ε as the exact rational the user wrote, when written
	// as a number (epsilon.Epsilon.Rat); nil for ln(r). The ledger record
	// carries it so ε stays exact to the ledger (record.Release.Charge); the
	// noise is calibrated at Epsilon, its nearest float.
	EpsilonRat *big.Rat
	Method     mechanism.Name
	Query      string       // counts, relative or mean ("" : counts); see package query
	Source     noise.Source // nil: crypto/rand
	// PerWindow calibrates each window on its own segment (docs/math.md
	// §4.7) instead of all windows jointly (§4.8): each window then costs
	// ε and the total composes them, far above ε. Kept for comparison.
	PerWindow bool
	// Origin, when set, is the time (seconds) of the chain's first step:
	// each series is calibrated at its place after it (docs/math.md
	// §4.10), not as if its first reading started the chain.
	Origin *float64
	// UnknownStart calibrates for every place in the chain (fixed initial
	// distributions replaced by "any", markov.Class.AnyStart): for data
	// whose place is unknown, such as one file of many in a ledger
	// without an origin (§4.10).
	UnknownStart bool
	// Cache, when set, shares σ across releases (a service's): σ depends
	// only on the class, ε, the method and each series' pattern of
	// readings, never on the readings' values.
	Cache *ScaleCache
	// Context, when set, stops the computation when it is done (a gone
	// client, a timeout, a signal): checked between windows and between
	// patterns, and inside every quilt search (mqm.ScaleContext), so the
	// release returns within about a second.
	Context context.Context
	// Limits bound the release's size, checked before any work
	// (checkLimits; zero: the defaults).
	Limits Limits
	// Profile, when set, releases the query for every cell of a profile
	// (hour-of-day, day-of-week or week-hour; query.ParseProfile) pooled
	// over all days, instead of once or per window (docs/math.md §4.15).
	Profile string
}

// ScaleCache holds computed scales, and the chains' oracle tables that
// computing new ones shares (mqm.Tables); safe for concurrent use.
type ScaleCache struct {
	mu      sync.Mutex
	m       map[string]Scale
	leak    map[string]Leakage
	tables  *mqm.Tables
	persist Persister
}

// Persister keeps computed leakage calibrations across processes: the
// ledger's calibration cache (ledger.Store's GetCached and PutCached).
// A value it returns is trusted as the ledger's budgets are.
type Persister interface {
	GetCached(ctx context.Context, key string) ([]byte, bool, error)
	PutCached(ctx context.Context, key string, value []byte) error
}

// NewScaleCache returns an empty cache.
func NewScaleCache() *ScaleCache {
	return &ScaleCache{m: map[string]Scale{}, leak: map[string]Leakage{}, tables: mqm.NewTables()}
}

// NewPersistentCache is NewScaleCache whose leakage bounds (the pairwise
// bound takes seconds on dense chains of tens of states) are also read
// from and written to p, keyed by everything they depend on: a release
// into a ledger computes a class's bound at ε once.
func NewPersistentCache(p Persister) *ScaleCache {
	c := NewScaleCache()
	c.persist = p
	return c
}

func (c *ScaleCache) getLeak(ctx context.Context, k string) (Leakage, bool) {
	c.mu.Lock()
	l, ok := c.leak[k]
	c.mu.Unlock()
	if ok || c.persist == nil {
		return l, ok
	}
	raw, ok, err := c.persist.GetCached(ctx, k)
	if err != nil || !ok || json.Unmarshal(raw, &l) != nil {
		return Leakage{}, false // a cache: recompute
	}
	c.mu.Lock()
	c.leak[k] = l
	c.mu.Unlock()
	return l, true
}

func (c *ScaleCache) putLeak(ctx context.Context, k string, l Leakage) {
	if c.persist != nil {
		if raw, err := json.Marshal(l); err == nil {
			_ = c.persist.PutCached(ctx, k, raw) // a cache: a failed write costs a recomputation
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.leak == nil || len(c.leak) > 1000 {
		c.leak = map[string]Leakage{}
	}
	c.leak[k] = l
}

func (c *ScaleCache) get(k string) (Scale, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[k]
	return s, ok
}

func (c *ScaleCache) put(k string, s Scale) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 100000 {
		clear(c.m) // a bound, not a policy: σ is recomputed when needed
	}
	c.m[k] = s
}

// TimeStep is the resolution that placed readings on the time grid.
type TimeStep struct {
	Step   float64 `json:"step"`
	Source string  `json:"source"`
}

// Bin is one released histogram entry: the noisy value and its estimate.
type Bin struct {
	State string  `json:"state"`
	Value float64 `json:"value"`
	// Estimate is the bin of the consistent estimate: the noisy values
	// projected onto the histograms the public number of readings allows
	// (non-negative, summing to it, or at most to it when values may be
	// missing), post-processing at no privacy cost (docs/math.md §4.14).
	// Every release sets it; nil only in a stream window stored before
	// estimates were released.
	Estimate *float64 `json:"estimate,omitempty"`
	Range    string   `json:"range,omitempty"` // numeric readings: the level's interval
}

// Report is the private histogram and everything needed to audit it. It
// never contains the raw data or the true counts.
type Report struct {
	Method    mechanism.Name `json:"method"`
	Epsilon   float64        `json:"epsilon"`
	Query     string         `json:"query"` // "counts" or "relative"
	Guarantee string         `json:"guarantee"`
	Protects  string         `json:"protects"` // the guarantee in plain words
	Class     *ClassSummary  `json:"class"`
	// Sigma is the σ the noise is drawn with, for a 1-Lipschitz query:
	// the Markov Quilt Mechanism's σ_max (max over lengths), or the
	// temporal leakage bound's when smaller (Calibration says which, and
	// keeps MQM's in mqm_sigma). PerBinScale is Sigma × Lipschitz.
	Sigma        float64   `json:"sigma"`
	Lipschitz    float64   `json:"lipschitz"` // L of the histogram in L1
	PerBinScale  float64   `json:"per_bin_scale"`
	NoiseScale   float64   `json:"noise_scale"` // scale actually sampled (snapping widens it slightly)
	Noise        string    `json:"noise"`
	Scales       []*Scale  `json:"scales"` // one per distinct series length and pattern of missing readings
	Sequences    int       `json:"sequences"`
	Observations int       `json:"observations"`
	Missing      int       `json:"missing"` // missing readings inside the series (the chain runs through them)
	TimeStep     *TimeStep `json:"time_step,omitempty"`
	MinLength    int       `json:"min_length"`
	MaxLength    int       `json:"max_length"`
	Mean         *float64  `json:"mean,omitempty"` // the mean query's private answer
	// MeanEstimate is Mean clamped to the level values' range, where the
	// true mean lies (docs/math.md §4.14).
	MeanEstimate *float64 `json:"mean_estimate,omitempty"`
	Histogram    []Bin    `json:"histogram"`
	// EstimateAtMost says the histogram's estimate sums to at most its
	// total, not to it: a reading's value may be missing (the format can
	// hold readings without a value, reading.Summary.Complete false: a
	// numeric value column, a nullable Parquet column) or the total is an
	// upper bound (SetEstimateTotal). Set at release; EstimateSumsAtMost
	// reads it, also from reports stored before it was printed.
	EstimateAtMost bool     `json:"estimate_at_most,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
	// Calibration says which bound set the noise (sigma is the smaller
	// σ, per_bin_scale σ·L) and why: every release of methods exact and
	// approx but a window calibrated on its own (--window-calibration
	// per-window), and every release of another method (which says so).
	Calibration *Calibration `json:"calibration,omitempty"`
	tpl         float64      // the leakage bound's σ when it set the noise (choose); Sigma is then tpl

	estTotal string // what the estimate sums to, in words ("": the readings)
	// Record is what the release leaves for the ledger (package
	// compose). It names the series, so it is not part of the printed
	// report: it goes to the curator's ledger only.
	Record *record.Release `json:"-"`
}

// noiseText says how noise is drawn.
const noiseText = "Laplace snapped to a power-of-two grid, geometric sampling, crypto/rand (package noise)"

// maxScale is the largest per-bin Laplace scale Histogram samples: far
// beyond any useful release, and far below the range where the snapped
// sampler's grid arithmetic loses integers.
const maxScale = 1e15

// protects says in plain words what the method protects.
func protects(method mechanism.Name, c *ClassSummary) string {
	switch method {
	case mechanism.Exact, mechanism.Approx:
		states := strings.Join(c.States, ", ")
		if len(c.States) > 8 {
			states = fmt.Sprintf("%d levels", len(c.States))
		}
		return fmt.Sprintf("every single reading of every series (which of the states %s it was), against an adversary who knows the series are Markov chains from the class (%s) and sees every other reading; series are taken as independent of each other", states, c.Coverage)
	case mechanism.GK16:
		return "every single reading, as Ghosh–Kleinberg inferential privacy for the class's chains"
	case mechanism.GroupDP:
		return "every single reading, and each whole series, whatever the correlation between readings"
	}
	return "a single reading only against an adversary who knows nothing of the correlation between readings; neighbouring readings can reveal it"
}

// Histogram releases the private histogram of data under class.
func Histogram(data *reading.Data, class *markov.Class, fitted bool, opts Options) (*Report, error) {
	r, draw, err := plan(data, class, fitted, opts, NewScaleCache(), false)
	if err != nil {
		return nil, err
	}
	return r, draw()
}

// calibrated is the class σ is computed for: the class, or with
// opts.UnknownStart every fixed start replaced by "any" (docs/math.md
// §4.10).
func calibrated(class *markov.Class, opts Options) *markov.Class {
	if opts.UnknownStart {
		return class.AnyStart()
	}
	return class
}

// startFree reports whether σ of a consecutive segment does not depend on
// where it starts: every chain stationary (q_i = π), or a method that
// ignores the initial distribution.
func startFree(class *markov.Class, m mechanism.Name) bool {
	if m == mechanism.Approx || m == mechanism.GroupDP || m == mechanism.DP {
		return true
	}
	if m != mechanism.Exact {
		return false
	}
	for _, ch := range class.Chains {
		if ch.Init != markov.InitStationary {
			return false
		}
	}
	return true
}

// plan is Histogram up to the noise: the report with every scale and the
// ledger record, and draw, which adds the noise (the only step that
// touches randomness, so a ledger can refuse a release before any noise
// is drawn). cache holds scales shared across calls on the same class and
// options (the windows of one release); alone is planSummary's.
func plan(data *reading.Data, class *markov.Class, fitted bool, opts Options, cache *ScaleCache, alone bool) (*Report, func() error, error) {
	if data == nil {
		return nil, nil, errors.New("no observations to release")
	}
	r, quilts, draw, err := planSummary(data.Summary(), class, fitted, opts, cache, alone)
	if err != nil {
		return nil, nil, err
	}
	r.Record = newRecord(r, opts, class, segmentsOf(data, quilts))
	return r, draw, nil
}

// newRecord is the ledger's record of a release calibrated like r (its
// mechanism as recorded and the σ its noise is drawn with) over segs.
func newRecord(r *Report, opts Options, class *markov.Class, segs []record.Segment) *record.Release {
	return &record.Release{Mechanism: r.recordedMechanism(), Epsilon: opts.Epsilon, EpsilonExact: opts.exactText(), Class: class.Hash(), Query: r.Query, Profile: opts.Profile, Sigma: r.usedSigma(), Segments: segs}
}

// exactText is EpsilonRat for the record ("" when none, or when it does
// not round to Epsilon: then the ledger reads Epsilon).
func (o Options) exactText() string {
	if o.EpsilonRat == nil || o.EpsilonRat.Sign() <= 0 {
		return ""
	}
	if f, _ := o.EpsilonRat.Float64(); f != o.Epsilon {
		return ""
	}
	return o.EpsilonRat.RatString()
}

// segment is the record of one series' readings observed at ob, with the
// active quilt of its pattern (quilts by reading.PatternKey; absent: none).
func segment(series string, ob mqm.Observation, quilts map[string]*mqm.Quilt) record.Segment {
	return record.Segment{Series: series, First: ob.Start, Last: ob.End(), Readings: ob.Len, Quilt: quilts[reading.PatternKey(ob)]}
}

// segmentsOf is one segment per series of data with readings.
func segmentsOf(data *reading.Data, quilts map[string]*mqm.Quilt) []record.Segment {
	var segs []record.Segment
	for i, sq := range data.Seqs {
		if len(sq) > 0 {
			segs = append(segs, segment(data.Series[i], data.Observation(i), quilts))
		}
	}
	return segs
}

// planSummary is plan on a summary of the data: the report (without the
// ledger record, which names series), the active quilt of each pattern
// with a two-sided quilt, and draw. σ is the smaller of the Markov Quilt
// Mechanism's and the temporal leakage bound's for the longest series
// (jointBase, as for windows: a whole-series histogram is one window,
// event-level DP per reading, docs/math.md §8.6–8.7), unless alone: a
// window calibrated on its own segment (--window-calibration
// per-window, §4.7), whose total composes the windows by the Markov
// Quilt Mechanism's rules, keeps that mechanism's σ.
func planSummary(sum *reading.Summary, class *markov.Class, fitted bool, opts Options, cache *ScaleCache, alone bool) (*Report, map[string]*mqm.Quilt, func() error, error) {
	var r *Report
	var quilts map[string]*mqm.Quilt
	var err error
	if alone {
		r, quilts, err = calibrate(sum, class, fitted, opts, cache)
	} else if r, quilts, err = jointBase(sum, class, fitted, opts, cache); err == nil && r.Calibration.Method == calibratedMQM {
		r.Calibration.Theorem = "[SWC17] Thm 4.3 for the histogram (docs/math.md §4)"
	}
	if err != nil {
		return nil, nil, nil, err
	}
	draw, err := finish(r, sum, class, fitted, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	return r, quilts, draw, nil
}

// calibrate is planSummary up to the query: the report with σ (the
// maximum over the summary's observation patterns), its scales and
// guarantee, and the active quilt of each pattern with a two-sided quilt.
func calibrate(sum *reading.Summary, class *markov.Class, fitted bool, opts Options, cache *ScaleCache) (*Report, map[string]*mqm.Quilt, error) {
	if sum == nil || sum.Observations == 0 {
		return nil, nil, errors.New("no observations to release")
	}
	if !slices.Equal(sum.States, class.States) {
		return nil, nil, errors.New("data states are not aligned with the class (call Data.Align)")
	}
	// One search per distinct observation pattern: consecutive series by
	// length, series with missing readings by their offsets.
	type pattern struct {
		ob  mqm.Observation
		key string
	}
	var pats []pattern
	for k, p := range sum.Patterns {
		pats = append(pats, pattern{p.Observation, k})
	}
	minL, maxL := sum.MinLength, sum.MaxLength
	slices.SortFunc(pats, func(a, b pattern) int {
		if a.ob.Len != b.ob.Len {
			return a.ob.Len - b.ob.Len
		}
		return strings.Compare(a.key, b.key)
	})
	r := &Report{Method: opts.Method, Epsilon: opts.Epsilon, Class: Summarize(class, fitted),
		Sequences: sum.Sequences, Observations: sum.Observations, Missing: sum.Missing, MinLength: minL, MaxLength: maxL,
		Noise: noiseText}
	if sum.Step > 0 {
		r.TimeStep = &TimeStep{Step: sum.Step, Source: sum.StepSource}
	}
	quilts := map[string]*mqm.Quilt{}
	if calibrated(class, opts) != class {
		// σ for every start; the record keeps the class it protects
		class = calibrated(class, opts)
		r.Warnings = append(r.Warnings, "the data's place in the chain is unknown (no chain origin), so σ holds for every start: the class's fixed initial distribution is replaced by every initial distribution; declare the origin (puff ledger init --origin, or --origin) for less noise")
	}
	free := startFree(class, opts.Method)
	if opts.Cache != nil {
		cache = opts.Cache
	}
	// σ depends on the class, ε, the method and the observation pattern
	prefix := fmt.Sprint(class.Hash(), " ", strconv.FormatFloat(opts.Epsilon, 'g', -1, 64), " ", opts.Method, " ")
	for _, p := range pats {
		if err := opts.ctxErr(); err != nil {
			return nil, nil, err
		}
		ck := p.key
		if free && p.ob.Times == nil {
			ck = fmt.Sprint(1, p.ob.Len, nil)
		}
		ck = prefix + ck
		var s *Scale
		if c, ok := cache.get(ck); ok {
			cp := c
			cp.Start = p.ob.Start
			s = &cp
		} else {
			var err error
			if s, err = computeScaleAt(opts.context(), cache.tables, class, p.ob, opts.Epsilon, opts.Method); err != nil {
				if e := opts.ctxErr(); e != nil {
					return nil, nil, e
				}
				return nil, nil, err
			}
			cache.put(ck, *s)
		}
		if !s.Applicable {
			return nil, nil, fmt.Errorf("method %s does not apply to sequences of length %d: %s", opts.Method, p.ob.Len, s.Guarantee)
		}
		s.Class = nil
		if s.TwoSided != nil && *s.TwoSided && !s.UpperBound {
			quilts[p.key] = s.Quilt
		}
		if s.UpperBound {
			r.Warnings = append(r.Warnings, fmt.Sprintf("a series of %d readings over %d steps: the exact search over its missing readings exceeded its budget, so σ is that of the whole span (every missing reading counted), a valid upper bound", s.Length, s.Span))
		}
		r.Scales = append(r.Scales, s)
		if *s.Sigma >= r.Sigma {
			r.Sigma, r.Guarantee = *s.Sigma, s.Guarantee
		}
	}
	return r, quilts, nil
}

// finish completes a report whose σ and guarantee are set: the query's
// answer and Lipschitz constant, the noise scale, the warnings and draw.
// It reads only the summary's counts and sizes (and never prints them).
func finish(r *Report, sum *reading.Summary, class *markov.Class, fitted bool, opts Options) (func() error, error) {
	q, err := query.Parse(opts.Query)
	if err != nil {
		return nil, err
	}
	g := query.Group{Counts: sum.Counts, N: r.Observations}
	if sum.Levels != nil {
		g.Values = sum.Levels.Values
	}
	p, err := query.Price(q, g)
	if err != nil {
		return nil, err
	}
	r.Query, r.Lipschitz = q.Name(), p.Sensitivity
	r.PerBinScale = p.Scale(r.usedSigma())
	r.NoiseScale = noise.Sampled(r.PerBinScale, r.Lipschitz, p.Coordinates())
	if math.IsInf(r.NoiseScale, 0) || math.IsNaN(r.NoiseScale) || r.NoiseScale > maxScale {
		return nil, fmt.Errorf("ε = %g needs a per-bin noise scale of %.3g, beyond what can be sampled (at most %g): choose a larger ε", opts.Epsilon, r.PerBinScale, maxScale)
	}
	r.Protects = protects(opts.Method, r.Class)
	draw := func() error {
		// the report's constant when the noise is drawn: a caller may
		// widen it before drawing (a running stream's tree node,
		// ReleaseNode), never narrow it
		if !(r.Lipschitz >= p.Sensitivity) {
			return fmt.Errorf("release: Lipschitz constant %v below the query's %v", r.Lipschitz, p.Sensitivity)
		}
		p.Sensitivity = r.Lipschitz
		noisy, err := p.Draw(opts.Source, r.usedSigma())
		if err != nil {
			return err
		}
		// the estimate reads the noisy values and public sizes only
		// (docs/math.md §4.14): nothing below reads counts or values
		if q.Shape() == query.Scalar {
			lv := sum.Levels.Values
			e := estimate.Clamp(noisy[0], slices.Min(lv), slices.Max(lv))
			r.Mean, r.MeanEstimate = &noisy[0], &e
			return nil
		}
		est, err := consistent(noisy, q.Name(), float64(r.Observations), sum.Complete)
		if err != nil {
			return err
		}
		r.EstimateAtMost = !sum.Complete
		for i, v := range noisy {
			b := Bin{State: class.States[i], Value: v, Estimate: &est[i]}
			if l := sum.Levels; l != nil {
				b.Range = fmt.Sprintf("[%g, %g%s", l.Edges[i], l.Edges[i+1], map[bool]string{true: "]", false: ")"}[i == l.N()-1])
			}
			r.Histogram = append(r.Histogram, b)
		}
		return nil
	}
	if l := sum.Levels; l != nil {
		// Said for every numeric release, clipped or not: how many readings
		// lay outside the bounds is a count of private values, and even
		// whether any did is one bit of them (docs/math.md §4.8).
		r.Warnings = append(r.Warnings, fmt.Sprintf("readings outside the levels' bounds [%g, %g] are counted in the end levels; how many is not printed, since it is a count of private values", l.Edges[0], l.Edges[l.N()]))
		// Likewise for every numeric release: a missing value is a reading
		// of unknown value, so the pattern and σ do not reveal how many
		// there are (docs/math.md §4.8, "missing values").
		r.Warnings = append(r.Warnings, "a reading whose value is missing (empty, ?, NA, NaN) counts as a reading of unknown value: in the number of readings and σ, in no bin of the histogram (relative frequencies may sum to less than 1), at the midpoint of the level values in the mean; how many there are is not printed")
	}
	if fitted {
		r.Warnings = append(r.Warnings, "the class was fitted from the released data: the guarantee holds for that fitted chain only, and the fit is not protected; σ, the per-bin scale and the quilt printed here are functions of the fitted chain, so they depend on the data and are not protected either")
	}
	if opts.Method == mechanism.DP {
		r.Warnings = append(r.Warnings, "dp protects single entries only; correlated entries can be inferred from their neighbours")
	}
	return draw, nil
}

// SetEstimateTotal says what the histogram's estimate sums to when that is
// not the readings (a query over pairs of readings: "the 40 pairs of rows
// one step apart"), and whether only an upper bound is known, for the
// text's note (docs/math.md §4.14).
func (r *Report) SetEstimateTotal(total string, atMost bool) {
	r.estTotal, r.EstimateAtMost = total, atMost
}

// EstimateSumsAtMost says the report's histogram estimate sums to at most
// its total (Report.EstimateAtMost): the one rule for the text, for a
// stored report and for puff consistent. A report printed before the field
// no longer says it; there, numeric levels (a bin with a range) are the
// case where a value may be missing.
func (r *Report) EstimateSumsAtMost() bool {
	return estimateAtMost(r.EstimateAtMost, len(r.Histogram) > 0 && r.Histogram[0].Range != "")
}

// estimateAtMost is EstimateSumsAtMost of a report's field and whether its
// bins are numeric levels.
func estimateAtMost(field, numeric bool) bool { return field || numeric }

// consistent is the estimate of a noisy count (or relative-frequency)
// histogram of n readings: its projection onto {c ≥ 0, Σ c = n} when every
// reading has a value (complete), onto {c ≥ 0, Σ c ≤ n} when a value may
// be missing, n scaled to 1 for relative frequencies (docs/math.md §4.14).
// It reads nothing but its arguments, all published or public.
func consistent(noisy []float64, query string, n float64, complete bool) ([]float64, error) {
	if query == "relative" {
		n = 1
	}
	return ConsistentCounts(noisy, n, complete)
}

// ConsistentCounts is the estimate of noisy counts of n readings: their
// projection onto {c ≥ 0, Σ c = n} when every reading has a value
// (reading.Summary.Complete), onto {c ≥ 0, Σ c ≤ n} when a value may be
// missing (docs/math.md §4.14). n must be public (the pattern's
// readings), never the true counts' sum.
func ConsistentCounts(noisy []float64, n float64, complete bool) ([]float64, error) {
	if complete {
		return estimate.Simplex(noisy, n)
	}
	return estimate.AtMost(noisy, n)
}

// ParseQuery is the query named by s (query.Parse; "" : counts): the one
// check of a query's name for the CLI, the service, streams and the Beam
// pipeline.
func ParseQuery(s string) (string, error) {
	q, err := query.Parse(s)
	if err != nil {
		return "", err
	}
	return q.Name(), nil
}
