package pairwise

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl"
)

// Slack is the relative margin kept below ε for the floating-point
// rounding of the final logarithms (as package tpl's).
const Slack = tpl.Slack

// aimMargin is how far below ε the search for an unbounded stream aims the
// estimated loss, leaving room to inflate the estimate into a certificate.
const aimMargin = 1e-6

// Info describes a calibration.
type Info struct {
	Result           // the certified bound at the returned scale (≤ ε)
	Pairwise float64 // the pairwise certificate's scale (+Inf: none found)
	Scalar   float64 // package tpl's scale (+Inf: none finite)
	// ClosedForm is the pairwise scale with closed-form plans only (0 when
	// not computed: the linear programs were not asked for).
	ClosedForm float64
	Method     string
}

// Calibrate returns the smallest per-bin Laplace scale b it can certify
// (docs/math.md §8.11) such that per-step releases of T readings
// (T = 0: an unbounded stream) each e^{s/b}-DP in its reading lose at most
// eps for every chain of the class: the smaller of the pairwise
// certificate's scale and package tpl's. By docs/math.md §8.6–8.7 the
// same b calibrates every event-level DP release with those budgets —
// windowed count histograms of any widths with per-bin scale b — of one or
// several independent series. The pairwise scale of an unbounded stream is
// found by a search on estimates and then certified (Certify) at the
// returned b; the returned b is never below a certified one's.
func Calibrate(ctx context.Context, class *markov.Class, T int, eps float64, opts *Options) (float64, Info, error) {
	if err := checkClass(class, T, opts); err != nil {
		return 0, Info{}, err
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, Info{}, fmt.Errorf("pairwise: ε = %v, want finite > 0", eps)
	}
	s := opts.sens()
	info := Info{Method: Method, Pairwise: math.Inf(1), Scalar: math.Inf(1)}
	var to *tpl.Options
	if opts != nil && len(opts.Missing) > 0 {
		to = &tpl.Options{Missing: opts.Missing}
	}
	sc := class
	if T == 0 {
		sc = class.AnyStart() // see scalarLoss
	}
	if bs, _, err := tpl.CalibrateContext(ctx, sc, T, eps, to); err == nil {
		info.Scalar = bs * s / 2 // tpl's budget 2/b' = s/b
	} else if !errors.Is(err, tpl.ErrNoScale) {
		return 0, info, err
	}
	if err := ctx.Err(); err != nil {
		return 0, info, err
	}
	var bp float64
	var r Result
	var err error
	if T > 0 {
		bp, err = calibrateFinite(ctx, class, T, eps, opts, info.Scalar)
	} else {
		bp, info.ClosedForm, r, err = calibrateStream(ctx, class, eps, opts, info.Scalar)
	}
	if err != nil {
		return 0, info, err
	}
	info.Pairwise = bp
	b := min(bp, info.Scalar)
	if math.IsInf(b, 1) {
		return 0, info, fmt.Errorf("pairwise: ε = %v: %w", eps, tpl.ErrNoScale)
	}
	if T > 0 || b < bp {
		// The finite bound is cheap; where tpl's scale is the smaller
		// one, report the bounds at it.
		if r, err = Loss(ctx, class, T, b, opts); err != nil {
			return 0, info, err
		}
	}
	info.Result = r
	if !(r.Loss <= eps*(1-Slack)) {
		// Cannot happen when the search certified b (Loss re-certifies
		// it the same way); refuse rather than return an uncertified b.
		return 0, info, fmt.Errorf("pairwise: internal: loss %v > ε = %v at the calibrated scale %v", r.Loss, eps, b)
	}
	return b, info, nil
}

// calibrateFinite bisects b on the finite recursion (a proof at every
// evaluation), between the least scale any observed step allows and the
// group-privacy scale 2n/ε, as package tpl does (docs/math.md §8.9).
func calibrateFinite(ctx context.Context, class *markov.Class, T int, eps float64, opts *Options, scalar float64) (float64, error) {
	s := opts.sens()
	n := T
	if opts != nil {
		m := slices.Clone(opts.Missing)
		slices.Sort(m)
		n -= len(slices.Compact(m))
	}
	if n <= 0 {
		return 0, errors.New("pairwise: no observed step: nothing to calibrate")
	}
	target := eps * (1 - Slack)
	lo := s / eps
	hi := s * float64(n) / eps * (1 + 1e-9) / (1 - Slack)
	if scalar < hi {
		hi = scalar // tpl's scale is certified and the pairwise bound is never above tpl's
	}
	for hi-lo > 1e-10*hi {
		mid := lo + (hi-lo)/2
		r, err := Loss(ctx, class, T, mid, opts)
		if err != nil {
			return 0, err
		}
		if r.Loss <= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// calibrateStream finds, chain by chain, the least b whose fixed-point
// estimate loses aimMargin less than ε, certifies it (raising b a little
// when the certificate does not fit), and returns the largest over the
// chains: first with closed-form plans, then, unless opts says not, with
// the linear programs warm-started from the closed form's fixed points.
// It returns the final and the closed-form scale.
func calibrateStream(ctx context.Context, class *markov.Class, eps float64, opts *Options, scalar float64) (float64, float64, Result, error) {
	s := opts.sens()
	bcf, bfin := 0.0, 0.0
	var res Result
	sweeps, work, functional, birkhoff := 0, 0.0, 0, false
	for i, ch := range class.Chains {
		cs, err := newChainSolver(ch, false)
		if err != nil {
			return 0, 0, res, err
		}
		// the limit is for the whole class: what the chains before used
		cs.maxWork = opts.maxWork() - work
		if opts.maxWork() > 0 && cs.maxWork <= 0 {
			return 0, 0, res, fmt.Errorf("%w: about %.2g multiply-adds done, over the limit %.2g", ErrWork, work, opts.maxWork())
		}
		guess := scalar
		if math.IsInf(guess, 1) {
			guess = 4 * s / eps
		}
		// The functional recursion (docs/math.md §8.12): the exact limit,
		// certified, where its work fits; the plans' certificates below
		// otherwise.
		if fb, fr, fw, ok, err := fnStream(ctx, ch, eps, s, guess, workLeft(opts.maxWork(), work)); err != nil {
			return 0, 0, res, err
		} else if work += fw; ok {
			if fb > bfin || i == 0 {
				bfin, res = fb, fr
				res.Chain = i
			}
			birkhoff = birkhoff || fr.BirkhoffPast
			functional++
			continue
		}
		// the plans get what the recursion left of the limit
		if opts.maxWork() > 0 {
			if cs.maxWork = opts.maxWork() - work; cs.maxWork <= 0 {
				return 0, 0, res, fmt.Errorf("%w: about %.2g multiply-adds done, over the limit %.2g", ErrWork, work, opts.maxWork())
			}
		}
		b1, r1, err := cs.search(ctx, eps, s, guess, false, false)
		if err != nil {
			return 0, 0, res, err
		}
		bcf = max(bcf, b1)
		b2, r2 := b1, r1
		if opts.lp() {
			// from the closed form's certified scale, or, when it
			// certified none (slowly mixing banded chains), the guess
			g := b1
			if math.IsInf(b1, 1) {
				g = guess
			}
			bl, rl, err := cs.search(ctx, eps, s, g, true, !math.IsInf(b1, 1))
			if errors.Is(err, ErrWork) && !math.IsInf(b1, 1) {
				bl, err = b1, nil // out of work: the closed form's certificate stands
			}
			if err != nil {
				return 0, 0, res, err
			}
			if bl < b1 {
				b2, r2 = bl, rl
			}
		}
		sweeps += cs.sweeps
		work += cs.work
		// A certificate at b is one at every larger scale (Φ and the
		// clamp grow with R), so the class's scale is the largest.
		if b2 > bfin || i == 0 {
			bfin, res = b2, r2
			res.Chain = i
		}
	}
	res.Sweeps = sweeps
	if functional > 0 {
		bcf = 0 // not computed for every chain
	}
	res.Functional = functional == len(class.Chains)
	res.BirkhoffPast = birkhoff
	return bfin, bcf, res, nil
}

// nextKappa is the next relative budget margin κ of the LP certificate
// (search, chainLoss): 0, then an absolute margin κe of 2.5·10⁻⁸ in the
// per-step budget e — about 10 times the LPs' rounding, which is what
// the margin must beat in the slowly contracting directions — fourfold
// after each failure.
func nextKappa(kap, e float64) float64 { return max(4*kap, 2.5e-8/e) }

// debugPlans, when set (tests), traces Newton's method.
var debugPlans func(format string, args ...any)

// search is the per-chain search of calibrateStream with the closed form
// (lp false) or the best plan. It returns +Inf when it certifies nothing
// below 10¹⁵.
//
// guessOK says that a certificate exists at guess (the closed form's
// scale): with lp, an estimate that fails there is Newton's failure, not
// the scale's, and the search stops.
func (cs *chainSolver) search(ctx context.Context, eps, s, guess float64, lp, guessOK bool) (float64, Result, error) {
	if cs.bwd == nil && cs.tau >= 1 {
		return math.Inf(1), Result{}, nil // no finite bound on the past (§8.5)
	}
	aim := eps * (1 - aimMargin)
	target := eps * (1 - Slack)
	est := func(b float64) (float64, error) {
		l, n, err := cs.estimateUpTo(ctx, s/b, lp, 4*aim)
		cs.sweeps += n
		if debugPlans != nil {
			debugPlans("est b=%.6f: %.10f (%v)", b, l, err)
		}
		if errors.Is(err, errNoConvergence) {
			return math.Inf(1), nil
		}
		return l, err
	}
	// Newton's estimates are as accurate as the linear programs' rounding
	// (a residual of about 2·10⁻⁹ moves ℓ by about 10⁻⁸ relative): aim at
	// 3·10⁻⁷ there, still 7·10⁻⁷ of ε below the target.
	tol := 1e-8
	if lp {
		tol = 3e-7
	}
	// Secant on log ℓ against log b (the loss is close to ∝ 1/b),
	// safeguarded by the bracket [lo, hi]: ℓ(lo) > aim ≥ ℓ(hi).
	lo, hi := 0.0, math.Inf(1)
	b := guess
	var pb, pl float64 // previous point
	for it := 0; it < 60; it++ {
		l, err := est(b)
		if err != nil {
			return 0, Result{}, err
		}
		if l > aim {
			lo = b
		} else {
			hi = b
		}
		if math.Abs(l/aim-1) < tol || (hi-lo) < 1e-9*hi {
			if l > aim && !math.IsInf(l, 1) {
				// the loss is close to ∝ 1/b: just above b·l/aim
				hi = min(hi, b*l/aim*(1+1e-9))
			}
			break
		}
		if lp && guessOK && math.IsInf(l, 1) && b >= guess {
			// The LP's fixed point lies below the closed form's, which
			// the guess certifies: Newton failed, not the scale.
			return math.Inf(1), Result{}, nil
		}
		var nb float64
		switch {
		case math.IsInf(l, 1) || l <= 0:
			nb = 2 * b
			if l <= 0 {
				nb = b / 2
			}
		case pb > 0 && !math.IsInf(pl, 1) && pl > 0 && pl != l:
			slope := (math.Log(l) - math.Log(pl)) / (math.Log(b) - math.Log(pb))
			if slope >= 0 {
				slope = -1
			}
			nb = b * math.Exp((math.Log(aim)-math.Log(l))/slope)
		default:
			nb = b * l / aim
		}
		if hi < math.Inf(1) && (nb <= lo || nb >= hi) {
			if lo > 0 {
				nb = lo + (hi-lo)/2
			} else {
				nb = hi / 2
			}
		}
		if nb > 1e15 {
			return math.Inf(1), Result{}, nil
		}
		pb, pl, b = b, l, nb
	}
	if math.IsInf(hi, 1) {
		return math.Inf(1), Result{}, nil
	}
	// Certify at hi, raising it until the certificate fits under ε. With
	// the linear programs the certificate is sought at b = hi·(1+κ) from
	// the estimates at hi, a little more budget than b: the map contracts very slowly in some directions
	// (by about 10⁻⁷ per sweep on the UCI house), where the LPs' own
	// rounding (about 10⁻⁹) can leave an estimate at b just below the
	// fixed point, so no inflation certifies it; the fixed point at a
	// larger budget lies above it in those directions (docs/math.md §8.11).
	b0 := hi
	kap := 0.0
	le, err := est(b0)
	if err != nil {
		return 0, Result{}, err
	}
	for try := 0; try < 12; try++ {
		// Inflate by up to a third of the room between the estimate and
		// the target (at least aimMargin·ε): the loss grows by about 2δ.
		b := b0 * (1 + kap)
		e := s / b
		l, a, a2, n, err := cs.certified(ctx, e, lp, max(eps*aimMargin, (target-le)/3))
		cs.sweeps += n
		if err != nil {
			return 0, Result{}, err
		}
		if debugPlans != nil {
			debugPlans("certified at b=%.6f (κ %g): %v (est %v, target %v)", b, kap, l, le, target)
		}
		if l <= target {
			sc, err := scalarLoss(cs.ch, 0, b, s, nil)
			if err != nil {
				return 0, Result{}, err
			}
			return b, Result{Loss: l, Scalar: sc, A: a, B: a2}, nil
		}
		if lp {
			kap = nextKappa(kap, s/b0)
			continue
		}
		b0 *= 1 + 2e-6*math.Pow(2, float64(try))
		if le, err = est(b0); err != nil {
			return 0, Result{}, err
		}
	}
	return math.Inf(1), Result{}, nil
}
