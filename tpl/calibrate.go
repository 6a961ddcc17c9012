package tpl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Options refines Loss and Calibrate.
type Options struct {
	// Missing lists the 1-based steps with no reading (no release); their
	// secrets are still protected (docs/math.md §8.3). Only with T > 0.
	Missing []int
}

// ClassResult is a loss bound for a class and where it is attained.
type ClassResult struct {
	Result
	Chain int // index in class.Chains of the chain attaining the maximum
}

// Method names the bound, for reports.
const Method = "temporal privacy leakage recursion ([CYXX18] Thm 4, Thm 10; docs/math.md §8), per-step bound for every event-level DP release (docs/math.md §8.6)"

// budgets builds ε_t = 2/b at observed steps, 0 at missing ones.
func budgets(T int, b float64, opts *Options) ([]float64, error) {
	eps := make([]float64, T)
	for t := range eps {
		eps[t] = 2 / b
	}
	if opts != nil {
		for i, s := range opts.Missing {
			if s < 1 || s > T {
				return nil, fmt.Errorf("tpl: Missing[%d] = %d, want a step in 1..%d", i, s, T)
			}
			eps[s-1] = 0
		}
	}
	return eps, nil
}

func checkClass(class *markov.Class, T int, opts *Options) error {
	if class == nil || len(class.Chains) == 0 {
		return errors.New("tpl: empty class")
	}
	if T < 0 {
		return fmt.Errorf("tpl: length %d, want ≥ 1 (or 0 for an unbounded stream)", T)
	}
	if T == 0 && opts != nil && len(opts.Missing) > 0 {
		return errors.New("tpl: missing steps need a finite length T")
	}
	for i, ch := range class.Chains {
		if ch == nil || ch.K() != len(class.States) {
			return fmt.Errorf("tpl: class chain %d does not have the class's %d states", i, len(class.States))
		}
	}
	return nil
}

// Loss bounds the privacy loss, for every chain of the class (the maximum
// over Θ, docs/math.md §8.7), of per-step Laplace one-hot releases of T
// readings with i.i.d. Lap(b) on each of the k bins (ε_t = 2/b per
// observed step, 0 at opts.Missing), T = 0 meaning an unbounded stream
// (the supremum over all times, docs/math.md §8.4–8.5). By docs/math.md
// §8.6 and §8.7 the same bound holds for windowed count histograms of any
// widths with per-bin scale b, and for several independent series each
// from a chain of the class. See Leakage and LeakageSup for the initial
// distributions.
func Loss(class *markov.Class, T int, b float64, opts *Options) (ClassResult, error) {
	return LossContext(context.Background(), class, T, b, opts)
}

// LossContext is Loss stopped when ctx ends: it then returns, within well
// under a second, an error wrapping the context's cause. Cost: see Work.
func LossContext(ctx context.Context, class *markov.Class, T int, b float64, opts *Options) (_ ClassResult, err error) {
	defer recoverStop(&err)
	st := newStopper(ctx)
	st.check()
	if err := checkClass(class, T, opts); err != nil {
		return ClassResult{}, err
	}
	return loss(preps(class, st), T, b, opts)
}

// preps are the class's chains, prepared (their kernels built on first use).
func preps(class *markov.Class, st *stopper) []*prep {
	ps := make([]*prep, len(class.Chains))
	for i, ch := range class.Chains {
		ps[i] = newPrep(ch, st)
	}
	return ps
}

func loss(ps []*prep, T int, b float64, opts *Options) (ClassResult, error) {
	if !(b > 0) || math.IsInf(b, 0) {
		return ClassResult{}, fmt.Errorf("tpl: per-bin scale %v, want finite > 0", b)
	}
	var eps []float64
	if T > 0 {
		var err error
		if eps, err = budgets(T, b, opts); err != nil {
			return ClassResult{}, err
		}
	}
	best := ClassResult{Result: Result{Loss: math.Inf(-1)}}
	for i, p := range ps {
		var r Result
		var err error
		if T == 0 {
			r, err = p.leakageSup(2 / b)
		} else {
			r, err = p.leakage(eps)
		}
		if err != nil {
			return ClassResult{}, fmt.Errorf("chain %d: %w", i, err)
		}
		if r.Loss > best.Loss || math.IsNaN(r.Loss) {
			best = ClassResult{Result: r, Chain: i}
		}
	}
	return best, nil
}

// Info describes a calibration.
type Info struct {
	ClassResult         // the loss bound at the returned scale (≤ ε)
	Evaluations int     // loss evaluations of the bisection
	Lower       float64 // the largest scale tried whose bound exceeded the target
	Method      string
}

// Slack is the relative margin Calibrate keeps below ε for floating-point
// rounding in the recursion (docs/math.md §8.9).
const Slack = 1e-10

// relTol is the bisection's stopping width, relative to the scale.
const relTol = 1e-11

// Calibrate returns the smallest per-bin Laplace scale b, found by
// bisection and rounded up (the upper end of the final bracket, whose
// bound was computed), such that Loss(class, T, b, opts) ≤ eps·(1 − Slack).
// With that b, per-step one-hot releases and windowed count histograms of
// any widths (i.i.d. Lap(b) per bin) of T readings — T = 0: an unbounded
// stream — of one or several independent series from any chain of the
// class are eps-Pufferfish private for the secrets X_t = a vs X_t = a'
// (docs/math.md §8.3–8.9). It is an error when no finite scale reaches
// eps (an unbounded stream of a chain with no finite leakage supremum).
func Calibrate(class *markov.Class, T int, eps float64, opts *Options) (float64, Info, error) {
	return CalibrateContext(context.Background(), class, T, eps, opts)
}

// CalibrateContext is Calibrate stopped when ctx ends (a deadline, a
// signal, a client gone): it then returns, within well under a second, an
// error wrapping the context's cause. The chains' kernels are built once
// and kept across the bisection's evaluations; Work estimates the cost up
// front.
func CalibrateContext(ctx context.Context, class *markov.Class, T int, eps float64, opts *Options) (_ float64, _ Info, err error) {
	defer recoverStop(&err)
	st := newStopper(ctx)
	st.check()
	if err := checkClass(class, T, opts); err != nil {
		return 0, Info{}, err
	}
	ps := preps(class, st)
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, Info{}, fmt.Errorf("tpl: ε = %v, want finite > 0", eps)
	}
	target := eps * (1 - Slack)
	info := Info{Method: Method}
	eval := func(b float64) (ClassResult, error) {
		info.Evaluations++
		return loss(ps, T, b, opts)
	}
	// Every observed step alone costs 2/b, so b ≤ 2/eps never suffices.
	lo := 2 / eps
	var hi float64
	var hiRes ClassResult
	if T > 0 {
		n := T
		if opts != nil {
			m := slices.Clone(opts.Missing)
			slices.Sort(m)
			n -= len(slices.Compact(m))
		}
		if n == 0 {
			r, err := eval(1)
			if err != nil {
				return 0, info, err
			}
			info.ClassResult = r
			return 0, info, fmt.Errorf("tpl: no observed step: nothing to calibrate")
		}
		// Group privacy: λ(A) ≤ A, so the bound is ≤ Σ ε_t = 2n/b.
		hi = 2 * float64(n) / eps * (1 + 1e-9) / (1 - Slack)
	} else {
		hi = 2 * lo
	}
	for {
		r, err := eval(hi)
		if err != nil {
			return 0, info, err
		}
		if r.Loss <= target {
			hiRes = r
			break
		}
		if T > 0 || hi > 1e15 {
			return 0, info, fmt.Errorf("tpl: ε = %v: %w (bound %.6g at b = %.6g)", eps, ErrNoScale, r.Loss, hi)
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > relTol*hi {
		mid := lo + (hi-lo)/2
		r, err := eval(mid)
		if err != nil {
			return 0, info, err
		}
		if r.Loss <= target {
			hi, hiRes = mid, r
		} else {
			lo = mid
		}
	}
	info.ClassResult, info.Lower = hiRes, lo
	return hi, info, nil
}
