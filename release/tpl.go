package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/tpl"
	"github.com/pufferfish-privacy/pufferfish/tpl/pairwise"
)

// Calibration says which valid bound set a windowed release's noise and
// why: the Markov Quilt Mechanism's σ, or the temporal leakage bound that
// prices every event-level DP release of a chain (docs/math.md §8.6): the
// smaller of the scalar recursion ([CYXX18], §8.3–8.5) and the pairwise
// certificate (§8.11).
type Calibration struct {
	Method  string  `json:"method"` // "mqm" or "tpl"
	Theorem string  `json:"theorem"`
	Why     string  `json:"why"`
	MQM     float64 `json:"mqm_sigma"`           // σ of the Markov Quilt Mechanism
	TPL     float64 `json:"tpl_sigma,omitempty"` // the leakage bound's per-bin scale over L = 2 (0: not computed)
	// TPLBound names the leakage bound that gave TPL: "pairwise" or
	// "scalar" (the recursion of [CYXX18]).
	TPLBound string `json:"tpl_bound,omitempty"`
	// TPLScalar and TPLPairwise are the two leakage bounds' σ (0: not
	// computed, for the reason in Why).
	TPLScalar   float64 `json:"tpl_scalar_sigma,omitempty"`
	TPLPairwise float64 `json:"tpl_pairwise_sigma,omitempty"`
	// TPLLimit is the σ below which no leakage calibration of per-step
	// releases can go: an explicit output sequence loses ε there
	// (docs/math.md §8.10; 0: not computed, where it is not cheap).
	TPLLimit float64 `json:"tpl_limit_sigma,omitempty"`
}

// Method names of a Calibration.
const (
	calibratedMQM = "mqm"
	calibratedTPL = "tpl"
)

// Cost limits of the leakage bounds. The scalar recursion's finite-length
// bound is computed only while T·k³ ≤ maxTPLWork, its unbounded bound
// while its estimate (tpl.Work) is within Limits.MaxLeakageWork; the pairwise bound's cost is estimated up front from
// the chain's sparsity (pairwise.Work) and compared with
// Limits.MaxLeakageWork.
const (
	maxTPLWork = 20000
)

var (
	errFixedStart = errors.New("fixed start")
	errOverWork   = errors.New("over the work limit")
)

// leakVersion names the leakage bounds' algorithms in cache keys: the
// functional recursion where it runs (docs/math.md §8.12), else the
// pairwise bound with LP plans by Newton's method (§8.11), on the scalar
// recursion rounded up (§8.9).
const leakVersion = "functional-tiered-1"

// Leakage is the leakage bound's σ-equivalent (per-bin scale over L = 2)
// for event-level DP releases of a class at ε, with the two bounds it is
// the smaller of, and why it is 0 when neither is computed.
type Leakage struct {
	Sigma    float64 `json:"sigma,omitempty"`
	Scalar   float64 `json:"scalar_sigma,omitempty"`
	Pairwise float64 `json:"pairwise_sigma,omitempty"`
	Limit    float64 `json:"limit_sigma,omitempty"` // an explicit output's lower limit (0: not computed)
	Bound    string  `json:"bound,omitempty"`       // "pairwise" or "scalar"
	Why      string  `json:"why,omitempty"`
}

// leakageSigma is the leakage bound for event-level DP releases of
// series whose last reading is at chain time at most T (T = 0: any
// length) under class, at ε: every windowed histogram with per-window
// scale σ·L_j is event-level 1/σ-DP, and docs/math.md §8.6 bounds its loss
// by the per-step bound at b = 2σ, the smaller of the scalar recursion
// and the pairwise certificate. Readings missing or before a series'
// start only lower the bound (it grows with every step's budget), so T =
// the longest span covers every series. The pairwise bound is skipped,
// saying why, when its estimated work is over limits.leakageWork(). The
// error is only the context's.
func leakageSigma(ctx context.Context, class *markov.Class, T int, eps float64, limits Limits, cache *ScaleCache) (Leakage, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	k := len(class.States)
	// leakVersion changes whenever the bounds' numbers do (a persisted
	// value must not outlive the code that computed it)
	key := fmt.Sprint("leak ", leakVersion, " ", class.Hash(), " ", strconv.FormatFloat(eps, 'g', -1, 64), " ", T, " ", limits.leakageWork())
	if cache != nil {
		if l, ok := cache.getLeak(ctx, key); ok {
			return l, nil
		}
	}
	var whys []string
	// Scalar recursion ([CYXX18]; docs/math.md §8.3–8.5). The unbounded
	// bound is a fixed point for stationary and "any" starts; for a fixed
	// start it runs the recursion up to a long horizon (§8.5), far too
	// slow to bisect inside a release, so a fixed start gets only the
	// finite bound, within the work limit.
	bs, err := 0.0, error(errFixedStart)
	if !class.FixedStart() {
		// its kernels cost about k³ log k each, held in about 20·k³ bytes,
		// and every step of the bisection k³ more: estimated up front
		// against the same budget as the pairwise bound's
		if work := tpl.Work(class, 0); work > limits.leakageWork() {
			whys = append(whys, fmt.Sprintf("the scalar leakage recursion is not computed: about %.2g operations (%s here), over --max-leakage-work %.2g", work, approxSeconds(work), limits.leakageWork()))
			err = errOverWork
		} else {
			bs, _, err = tpl.CalibrateContext(ctx, class, 0, eps, nil)
		}
	}
	finite := T > 0 && float64(T)*float64(k*k*k) <= maxTPLWork
	if finite {
		if bt, _, errT := tpl.CalibrateContext(ctx, class, T, eps, nil); errT == nil && (err != nil || bt < bs) {
			bs, err = bt, nil
		}
	}
	if ctx.Err() != nil {
		return Leakage{}, fmt.Errorf("release stopped: %w", context.Cause(ctx))
	}
	switch {
	case err == errOverWork:
		bs = 0
	case err == errFixedStart:
		whys = append(whys, fmt.Sprintf("the scalar leakage recursion is not computed for a fixed initial distribution over %d steps of %d states (its cost grows as steps × k³)", T, k))
		bs = 0
	case err != nil:
		whys = append(whys, "the scalar leakage recursion is infinite for this class: "+err.Error())
		bs = 0
	}
	// Pairwise certificate (docs/math.md §8.11): the unbounded stream's
	// (valid for every length; a fixed start is bounded through "any",
	// §8.11), or the finite recursion when that is cheap.
	bp, worst := 0.0, [2]int{-1, -1}
	if work := pairwise.Work(class); work > limits.leakageWork() {
		whys = append(whys, fmt.Sprintf("the pairwise leakage bound is not computed: about %.2g multiply-adds (%s here), over --max-leakage-work %.2g", work, approxSeconds(work), limits.leakageWork()))
	} else {
		// The unbounded stream's linear programs are solved by Newton's
		// method (a few dozen sweeps, priced by WorkLP); the finite
		// recursion solves them at every step, so only on small chains.
		opts := &pairwise.Options{ClosedForm: pairwise.WorkLP(class) > limits.leakageWork(), MaxWork: limits.leakageWork()}
		if opts.ClosedForm {
			whys = append(whys, fmt.Sprintf("the pairwise leakage bound uses closed-form plans only: its linear programs would take about %.2g multiply-adds (%s here), over --max-leakage-work %.2g", pairwise.WorkLP(class), approxSeconds(pairwise.WorkLP(class)), limits.leakageWork()))
		}
		b, info, err := pairwise.Calibrate(ctx, class, 0, eps, opts)
		worst = [2]int{info.A, info.B}
		how := pairwise.HowCertified(info.Result)
		if finite {
			fopts := &pairwise.Options{ClosedForm: !pairwise.CheapLP(class)}
			if bt, finfo, errT := pairwise.Calibrate(ctx, class, T, eps, fopts); errT == nil && (err != nil || bt < b) {
				b, err, how = bt, nil, "the pairwise bound is the finite recursion's over the series' length (docs/math.md §8.11)"
				if finfo.Functional {
					how = "the pairwise bound is the functional recursion's over the series' length, exact at every step (docs/math.md §8.12, finite streams)"
				}
			}
		}
		if err == nil {
			whys = append(whys, how)
		}
		switch {
		case ctx.Err() != nil:
			return Leakage{}, fmt.Errorf("release stopped: %w", context.Cause(ctx))
		case errors.Is(err, pairwise.ErrWork):
			whys = append(whys, fmt.Sprintf("the pairwise leakage bound was stopped (%v): this chain mixes too slowly for its estimate; raise --max-leakage-work to let it run longer", err))
		case err != nil:
			whys = append(whys, "the pairwise leakage bound is infinite for this class: "+err.Error())
		default:
			bp = b
		}
	}
	l := Leakage{Scalar: bs / 2, Pairwise: bp / 2, Why: strings.Join(whys, "; ")}
	// the limit is the unbounded stream's: a short series' finite bound
	// may lie below it (fewer releases leak less), so it is given only
	// where both bounds are the unbounded ones
	if !finite {
		if lo, ok := leakageLimit(ctx, class, eps, worst); ok {
			l.Limit = lo / 2
		} else if ctx.Err() != nil {
			return Leakage{}, fmt.Errorf("release stopped: %w", context.Cause(ctx))
		}
	}
	switch {
	case bp > 0 && (bs == 0 || bp < bs):
		l.Sigma, l.Bound = bp/2, "pairwise"
	case bs > 0:
		l.Sigma, l.Bound = bs/2, "scalar"
	}
	if cache != nil {
		cache.putLeak(ctx, key, l)
	}
	return l, nil
}

// leakageLimit is the per-bin scale at which an explicit output sequence
// of per-step releases of an unbounded stationary stream loses ε (pairwise.LowerBoundPairs, docs/math.md
// §8.10), for the secret pair the pairwise bound found worst (all pairs
// screened when none): no leakage calibration may go below it, so the
// report says how far its scale is from the limit. It is computed where it
// is cheap (well under a second on the 51 UCI levels): one stationary
// chain of at most limitStates states.
func leakageLimit(ctx context.Context, class *markov.Class, eps float64, worst [2]int) (float64, bool) {
	if len(class.Chains) != 1 || class.Chains[0].Init != markov.InitStationary || len(class.States) > limitStates {
		return 0, false
	}
	P := class.Chains[0].P
	var lo float64
	var err error
	if worst[0] >= 0 && worst[1] >= 0 && worst[0] != worst[1] {
		lo, err = pairwise.LowerBoundPairs(ctx, P, eps, 2, [][2]int{worst, {worst[1], worst[0]}})
	} else {
		lo, err = pairwise.LowerBound(ctx, P, eps, 2)
	}
	return lo, err == nil && lo > 0 && !math.IsInf(lo, 0)
}

// limitStates bounds the chains leakageLimit runs on (its cost grows as
// the horizon times k², the horizon with the mixing time).
const limitStates = 64

// approxSeconds is the time work multiply-adds take here (about 10⁹ per
// second on one core, measured on the closed-form sweeps), in words.
func approxSeconds(work float64) string {
	s := work / 1e9
	if s < 120 {
		return fmt.Sprintf("≈ %.0f s", math.Ceil(s))
	}
	return fmt.Sprintf("≈ %.0f min", math.Ceil(s/60))
}

// chooseCalibration compares the Markov Quilt Mechanism's σ (base.Sigma)
// with the leakage bound's and keeps the smaller on base (docs/math.md
// §4.8 and §8.6): both hold for every window of every series together,
// and for a whole-series release (one window). A method other than MQM
// is kept as asked, without computing the bound.
func chooseCalibration(ctx context.Context, base *Report, class *markov.Class, T int, eps float64, limits Limits, cache *ScaleCache) error {
	if !base.Method.MQM() {
		choose(base, Leakage{})
		return nil
	}
	l, err := leakageSigma(ctx, class, T, eps, limits, cache)
	if err != nil {
		return err
	}
	choose(base, l)
	return nil
}

// StreamLeakage is the leakage bound for streams (any length: T = 0),
// computed once when a stream is declared; ctx stops it.
func StreamLeakage(ctx context.Context, class *markov.Class, eps float64, limits Limits) (Leakage, error) {
	return leakageSigma(ctx, class, 0, eps, limits, nil)
}

// choose keeps the smaller of base.Sigma and the leakage bound's σ
// (l.Sigma, 0: not computed, for the reason l.Why) on base: base.Sigma
// becomes the σ the noise is drawn with, and the Markov Quilt Mechanism's
// stays in base.Calibration.MQM. Why says which bound set the noise and,
// whichever did, why a bound was not computed or was stopped.
func choose(base *Report, l Leakage) {
	t, why := l.Sigma, l.Why
	c := &Calibration{Method: calibratedMQM, Theorem: "[SWC17] Thm 4.3 for the vector of every window's histogram (docs/math.md §4.8)", MQM: base.Sigma}
	base.Calibration = c
	if !base.Method.MQM() {
		c.Method, c.Theorem, c.Why = string(base.Method), jointTheorem(base.Method), "the method asked for"
		return
	}
	c.TPL, c.TPLBound, c.TPLScalar, c.TPLPairwise, c.TPLLimit = t, l.Bound, l.Scalar, l.Pairwise, l.Limit
	switch {
	case t == 0:
		c.Why = why
	case t < base.Sigma:
		c.Method = calibratedTPL
		c.Theorem = "every event-level DP release of a chain loses at most the per-step temporal leakage ([CYXX18] Thm 4, Thm 10; docs/math.md §8.6, §8.7)"
		if l.Bound == "pairwise" {
			c.Theorem = "every event-level DP release of a chain loses at most the per-step temporal leakage, bounded by a pairwise certificate (docs/math.md §8.6, §8.7, §8.11)"
		}
		c.Why = fmt.Sprintf("the temporal leakage bound (%s) needs σ = %.6g, less than the Markov Quilt Mechanism's %.6g", boundName(l), t, base.Sigma)
		if l.Limit > 0 {
			c.Why += fmt.Sprintf("; no leakage calibration can go below σ = %.6g (an explicit output sequence loses ε there): this one is %.3g%% above", l.Limit, 100*(t/l.Limit-1))
		}
		if why != "" {
			c.Why += "; " + why
		}
		base.tpl, base.Sigma = t, t
		base.Guarantee = fmt.Sprintf("%g-Pufferfish privacy for the class (the temporal leakage bound for event-level DP releases of a chain, docs/math.md §8.6)", base.Epsilon)
	default:
		c.Why = fmt.Sprintf("the Markov Quilt Mechanism needs σ = %.6g, no more than the temporal leakage bound's (%s) %.6g", base.Sigma, boundName(l), t)
		if why != "" {
			c.Why += "; " + why
		}
	}
}

// boundName says which leakage bound gave l.Sigma and the other's value.
func boundName(l Leakage) string {
	switch {
	case l.Bound == "pairwise" && l.Scalar > 0:
		return fmt.Sprintf("pairwise certificate; the scalar recursion needs %.6g", l.Scalar)
	case l.Bound == "pairwise":
		return "pairwise certificate"
	case l.Pairwise > 0:
		return fmt.Sprintf("scalar recursion; the pairwise certificate needs %.6g", l.Pairwise)
	}
	return "scalar recursion"
}

// usedSigma is the σ a report's noise is drawn with: its Sigma (choose
// puts the leakage bound's there when it is smaller).
func (r *Report) usedSigma() float64 { return r.Sigma }

// recordedMechanism is how the ledger knows a release: MQM's own name, or
// a generic ε-Pufferfish release when the leakage bound set its noise
// (the composition rules of MQM do not cover it).
func (r *Report) recordedMechanism() mechanism.Name {
	if r.tpl > 0 {
		return mechanism.Pufferfish
	}
	return r.Method
}

// LeakageReport is `puff scale --leakage`: the leakage bounds' per-bin
// scales for event-level DP releases (windowed histograms of any widths)
// of series of Length readings (0: any length) of a class at Epsilon.
type LeakageReport struct {
	Epsilon     float64 `json:"epsilon"`
	Length      int     `json:"length"`
	PerBinScale float64 `json:"per_bin_scale,omitempty"` // 2σ of the smaller bound (0: none computed)
	// LowerPerBinScale: an explicit output sequence of per-step releases
	// loses ε at this per-bin scale (docs/math.md §8.10), so no valid
	// calibration of per-step releases of an unbounded stationary stream
	// is below it: the distance to the limit in one number (0: not
	// computed — a start other than stationary, or a finite length).
	LowerPerBinScale float64 `json:"lower_per_bin_scale,omitempty"`
	Leakage
	Theorem string `json:"theorem"`
}

// LeakageFor computes the report; ctx stops it and limits caps the
// pairwise bound's work (docs/math.md §8.6, §8.11).
func LeakageFor(ctx context.Context, class *markov.Class, T int, eps float64, limits Limits) (*LeakageReport, error) {
	l, err := leakageSigma(ctx, class, T, eps, limits, nil)
	if err != nil {
		return nil, err
	}
	r := &LeakageReport{Epsilon: eps, Length: T, PerBinScale: 2 * l.Sigma, Leakage: l,
		Theorem: "every event-level DP release of a chain loses at most the per-step temporal leakage (docs/math.md §8.6), bounded by the scalar recursion of [CYXX18] (§8.3–8.5) and by the pairwise certificate (§8.11)"}
	if T == 0 {
		// The class's limit is at least every chain's (§8.7).
		for _, ch := range class.Chains {
			if ch.Init != markov.InitStationary {
				r.LowerPerBinScale = 0
				break
			}
			lo, err := pairwise.LowerBound(ctx, ch.P, eps, 2)
			if err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("stopped: %w", context.Cause(ctx))
				}
				r.LowerPerBinScale = 0
				break
			}
			r.LowerPerBinScale = max(r.LowerPerBinScale, lo)
		}
	}
	return r, nil
}

// WriteText prints the report as aligned lines.
func (r *LeakageReport) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "epsilon\t%g\n", r.Epsilon)
	if r.Length == 0 {
		fmt.Fprintf(w, "length\tany\n")
	} else {
		fmt.Fprintf(w, "length\t%d\n", r.Length)
	}
	show := func(v float64) string {
		if v == 0 {
			return "not computed"
		}
		return fmt.Sprintf("%.6g (σ = %.6g)", 2*v, v)
	}
	fmt.Fprintf(w, "per-bin scale\t%s\n", show(r.Sigma))
	fmt.Fprintf(w, "bound\t%s\n", cmpOr(r.Bound, "none"))
	fmt.Fprintf(w, "pairwise\t%s\n", show(r.Pairwise))
	fmt.Fprintf(w, "scalar\t%s\n", show(r.Scalar))
	if r.LowerPerBinScale > 0 {
		fmt.Fprintf(w, "limit at least\t%.6g (an explicit output sequence loses ε below it)\n", r.LowerPerBinScale)
	}
	if r.Why != "" {
		fmt.Fprintf(w, "note\t%s\n", r.Why)
	}
	return w.Flush()
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
