package compose

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sync"

	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
	"github.com/pufferfish-privacy/pufferfish/tpl"
	"github.com/pufferfish-privacy/pufferfish/tpl/pairwise"
)

// Entries translates one release record into ledger releases: one per
// segment, on the chain of its series (chain names it), calibrated for the
// segment it read (release.Histogram computes σ at each segment's place),
// named label plus the series. This is the one translation of a record
// for the ledgers (the log file, the durable stores, a windowed run).
func Entries(label string, rec *record.Release, chain func(series string) string) []Release {
	out := make([]Release, 0, len(rec.Segments))
	for _, sg := range rec.Segments {
		r := Release{Name: fmt.Sprintf("%s: %s [%d, %d]", label, chain(sg.Series), sg.First, sg.Last), Dataset: chain(sg.Series), Kind: rec.Mechanism, Epsilon: rec.Epsilon, EpsilonExact: rec.EpsilonExact,
			Start: sg.First, End: sg.Last, Theta: rec.Class, Calibration: &Calibration{Start: sg.First, End: sg.Last}, Sigma: rec.Sigma}
		if rec.Mechanism == MQMApprox && sg.Quilt != nil {
			q := *sg.Quilt
			r.Active = &q
		}
		out = append(out, r)
	}
	return out
}

// Verdict is the guarantee of a set of release records about one dataset:
// the worst over its series' chains (series are independent), with the
// rule that gave it.
type Verdict struct {
	guarantee.Guarantee
	Chain string // the series whose chain attains it
}

// SeriesChain names a series' chain ("" is the only series of data
// without a series column).
func SeriesChain(series string) string {
	if series == "" {
		return "(the series)"
	}
	return series
}

// Records composes release records about one dataset whose series are
// independent chains of class Θ (every record must be calibrated for it:
// record.Release.Class equal to class.Hash()). Each series is one chain,
// as long as its last recorded time; each record's segments are entries
// of those chains (Entries). The answer is the worst chain's best rule.
func Records(class *markov.Class, recs []*record.Release) (Verdict, error) {
	return RecordsContext(context.Background(), class, recs)
}

// RecordsContext is Records whose leakage rule (seconds on dense chains of
// tens of states) stops when ctx ends, with ctx's error.
func RecordsContext(ctx context.Context, class *markov.Class, recs []*record.Release) (Verdict, error) {
	v, err := records(class, recs)
	if errors.Is(err, ErrNoRule) {
		if lk, ok := leakage(ctx, class, recs); ok {
			return lk, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return Verdict{}, cerr
		}
	}
	return v, err
}

// LeakageStates is the most states the leakage rule computes the scalar
// recursion for (it costs O(k³) per step); past it the rule takes the
// pairwise bound alone.
const LeakageStates = 16

// LeakageRule is the rule of the event-level DP composition.
const LeakageRule = "dp-leakage"

// leakage is the composition rule of releases that each recorded their
// noise multiplier σ_i: release i changes its output density by at most
// e^{1/σ_i} when one reading changes, so all of them together are
// (Σ 1/σ_i)-DP per reading, and docs/math.md §8.6 bounds the Pufferfish
// loss of every release that is ε'-DP per reading by the temporal leakage
// of per-step Laplace releases at b = 2/ε', at every time of a chain of
// any length and any start of the class (§8.4–8.7; a series that starts
// later or misses readings only lowers the budgets). It is the rule the
// ledger uses when no other applies (a release calibrated by that bound
// is not MQM), so it never changes an answer the other rules give.
func leakage(ctx context.Context, class *markov.Class, recs []*record.Release) (Verdict, bool) {
	if class == nil || len(recs) == 0 {
		return Verdict{}, false
	}
	hash := class.Hash()
	sum := 0.0
	for _, r := range recs {
		if !leakageReady(r, hash) {
			return Verdict{}, false
		}
		sum += 1 / r.Sigma
	}
	return leakageOf(ctx, class, sum)
}

// leakageReady reports whether a record takes part in the leakage rule:
// calibrated for the class (hash) with a recorded finite σ > 0.
func leakageReady(r *record.Release, hash string) bool {
	return r.Class == hash && r.Sigma > 0 && !math.IsInf(r.Sigma, 0)
}

// leakageOf is the leakage rule's verdict for Σ 1/σ_i = sum (summed in
// record order; the running state keeps the same sum, running.go): the
// smaller of the scalar recursion's bound (up to LeakageStates states) and
// the pairwise certificate's (docs/math.md §8.11; while its estimated work
// is within pairwise.DefaultMaxWork), both for the class's chains from any
// start at per-bin scale 2/sum. Both are valid bounds of the same loss,
// so the smaller is.
// It answers false, remembering nothing, when ctx ends first.
func leakageOf(ctx context.Context, class *markov.Class, sum float64) (Verdict, bool) {
	if class == nil {
		return Verdict{}, false
	}
	// A pure function of (class, sum), seconds on dense chains of tens of
	// states (the pairwise bound's linear programs): a spend asks for it
	// from the running state and again from the records, so remember the
	// last few answers.
	key := leakageKey{class.Hash(), math.Float64bits(sum)}
	leakageMemo.Lock()
	m, ok := leakageMemo.m[key]
	leakageMemo.Unlock()
	if ok {
		v := m.v
		if v.Guarantee.Epsilon != nil {
			v.Guarantee.Epsilon = new(big.Rat).Set(v.Guarantee.Epsilon) // callers own theirs
		}
		return v, m.ok
	}
	v, found := leakageBound(ctx, class, sum)
	if ctx.Err() != nil {
		return Verdict{}, false
	}
	leakageMemo.Lock()
	if leakageMemo.m == nil || len(leakageMemo.m) >= 64 {
		leakageMemo.m = map[leakageKey]leakageAnswer{}
	}
	stored := v
	if found {
		stored.Guarantee.Epsilon = new(big.Rat).Set(v.Guarantee.Epsilon)
	}
	leakageMemo.m[key] = leakageAnswer{stored, found}
	leakageMemo.Unlock()
	return v, found
}

type leakageKey struct {
	class string
	sum   uint64
}

type leakageAnswer struct {
	v  Verdict
	ok bool
}

var leakageMemo struct {
	sync.Mutex
	m map[leakageKey]leakageAnswer
}

// leakageBound computes leakageOf.
func leakageBound(ctx context.Context, class *markov.Class, sum float64) (Verdict, bool) {
	// round the budget up and the scale down: the bound only grows
	sum *= 1 + 1e-12
	b := 2 / sum * (1 - 1e-12)
	loss, how := math.Inf(1), ""
	// a fixed start is bounded as "any" (which covers it): its own
	// unbounded bound runs the recursion to a long horizon (§8.5), too slow
	// for a ledger transaction
	if len(class.States) <= LeakageStates {
		if res, err := tpl.LossContext(ctx, class.AnyStart(), 0, b, nil); err == nil && res.Loss < loss {
			// the recursion's rounding (docs/math.md §8.9) is far inside 1e-9
			loss, how = res.Loss*(1+1e-9), "the temporal leakage bound"
		}
	}
	if len(class.States) > 2 && pairwise.Work(class) <= pairwise.DefaultMaxWork {
		// certified and rounded up by the package (docs/math.md §8.11)
		res, err := pairwise.Loss(ctx, class.AnyStart(), 0, b, &pairwise.Options{ClosedForm: pairwise.WorkLP(class) > pairwise.DefaultMaxWork, MaxWork: pairwise.DefaultMaxWork})
		if err == nil && res.Loss < loss {
			loss, how = res.Loss, "the pairwise temporal leakage bound"
		}
	}
	if math.IsInf(loss, 0) || math.IsNaN(loss) {
		return Verdict{}, false
	}
	bound := guarantee.Rat(math.Nextafter(loss, math.Inf(1)))
	return Verdict{Chain: "every series", Guarantee: guarantee.Guarantee{Epsilon: bound, Rule: LeakageRule,
		Theorem: fmt.Sprintf("each release is (1/σ)-DP per reading, together %.6g-DP per reading; %s at per-bin scale %.6g (docs/math.md §8.6, §8.7, §8.11)", sum, how, b)}}, true
}

// records is Records by the segment rules and the streams' sums.
func records(class *markov.Class, recs []*record.Release) (Verdict, error) {
	if class == nil {
		return Verdict{}, errors.New("compose: no class Θ")
	}
	hash := class.Hash()
	length := map[string]int{}
	var order []string
	streams, streamEps := 0, zero()
	var segmented []*record.Release
	for _, rec := range recs {
		if rec.Class != hash {
			return Verdict{}, fmt.Errorf("compose: %w: a release was calibrated for another class Θ (%s, not %s); its ε says nothing under this one", ErrNoRule, rec.Class, hash)
		}
		if rec.Stream {
			e := rec.Charge()
			if e == nil || e.Sign() <= 0 {
				return Verdict{}, fmt.Errorf("compose: a stream's charge must have ε > 0 (got %v)", rec.Epsilon)
			}
			if !rec.Mechanism.MQM() && len(recs) > 1 {
				// a stream calibrated by the temporal leakage bound is a
				// generic ε-Pufferfish release: no rule composes it
				return Verdict{}, fmt.Errorf("compose: %w: a stream calibrated by the temporal leakage bound (recorded as %s) composes with no other release (Pufferfish does not compose in general, [SC17] Thm III.4); give the stream a dataset of its own", ErrNoRule, rec.Mechanism)
			}
			streams++
			streamEps = add(streamEps, e)
			continue
		}
		segmented = append(segmented, rec)
		for _, sg := range rec.Segments {
			c := SeriesChain(sg.Series)
			if _, ok := length[c]; !ok {
				order = append(order, c)
			}
			length[c] = max(length[c], sg.Last)
		}
	}
	l := New()
	n := 0
	for _, rec := range recs {
		n += len(rec.Segments)
	}
	l.releases = make([]Release, 0, n)
	for _, c := range order {
		if err := l.AddDataset(Dataset{Name: c, Length: length[c], Class: class, Theta: hash}); err != nil {
			return Verdict{}, err
		}
	}
	for i, rec := range segmented {
		for _, r := range Entries(fmt.Sprintf("release %d", i+1), rec, SeriesChain) {
			if err := l.Record(r); err != nil {
				return Verdict{}, err
			}
		}
	}
	v := Verdict{Guarantee: guarantee.None()}
	for _, c := range order {
		g, err := l.Guarantee(c)
		if err != nil {
			return Verdict{}, err
		}
		if g.Best.Epsilon.Cmp(v.Epsilon) >= 0 {
			v = Verdict{Guarantee: g.Best.Guarantee, Chain: c}
		}
	}
	return withStreams(v, streams, streamEps), nil
}

// withStreams adds the streams' charges to the verdict of the other
// releases. A stream is one MQM release about every reading of every
// series (docs/math.md §4.9), so it composes with MQM releases on the
// same chains by [SC17] Thm III.7 (sums); with DP and group-DP records,
// whose bound holds for every data set, the sum holds as well: their
// likelihood varies by at most e^{ε'} over all sequences, so it leaves the
// stream's ratio multiplied by at most e^{ε'}.
func withStreams(v Verdict, n int, eps *big.Rat) Verdict {
	if n == 0 {
		return v
	}
	if v.Rule == "none" {
		v = Verdict{Guarantee: guarantee.Guarantee{Epsilon: zero(), Rule: "single", Theorem: "the stream's own guarantee (docs/math.md §4.9)"}}
		if n > 1 {
			v.Rule, v.Theorem = "mqm-sequential", "[SC17] Theorem III.7 over the dataset's streams"
		}
	} else {
		v.Rule, v.Theorem = "mqm-sequential", fmt.Sprintf("[SC17] Theorem III.7: %d stream(s) charged once each, added to %s (%s)", n, v.Rule, v.Theorem)
	}
	v.Epsilon = add(v.Epsilon, eps)
	return v
}
