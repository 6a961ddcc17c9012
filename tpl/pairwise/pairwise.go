package pairwise

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl"
)

// Options refines Loss and Calibrate.
type Options struct {
	// Missing lists the 1-based steps with no reading (no release, R = 1
	// there); their secrets are still protected. Only with T > 0.
	Missing []int
	// Sensitivity is the per-reading sensitivity s of the release: each
	// reading's budget is R = e^{s/b} at per-bin scale b. 0 means 2 (one
	// reading moves one unit between two bins of a count histogram).
	Sensitivity float64
	// ClosedForm skips the linear programs: the closed-form plan only
	// (faster, a little looser on some chains).
	ClosedForm bool
	// MaxWork, when positive, stops an unbounded stream's calibration
	// with ErrWork once its work (counted as Work and WorkLP estimate it,
	// sweep by sweep) passes it: slowly mixing chains need more sweeps
	// than any estimate made before the work can tell.
	MaxWork float64
}

func (o *Options) maxWork() float64 {
	if o == nil {
		return 0
	}
	return o.MaxWork
}

func (o *Options) sens() float64 {
	if o == nil || o.Sensitivity == 0 {
		return 2
	}
	return o.Sensitivity
}

func (o *Options) lp() bool { return o == nil || !o.ClosedForm }

// Method names the bound, for reports.
const Method = "pairwise temporal leakage certificate (docs/math.md §8.11), per-step bound for every event-level DP release (docs/math.md §8.6)"

// Result is a certified loss bound of one class at one scale.
type Result struct {
	Loss   float64 // upper bound on the privacy loss (natural log); +Inf if none is finite
	Scalar float64 // package tpl's bound at the same scale (never below Loss)
	Chain  int     // index of the chain attaining Loss
	A, B   int     // the secret pair of the maximum (−1 when none is singled out)
	Sweeps int     // applications of the certificate map (all directions, chains)
	// Functional says every chain's bound is the functional recursion's
	// (docs/math.md §8.12: the exact limit, certified); else the plans'
	// certificates (§8.11) gave some chain's.
	Functional bool
	// BirkhoffPast says some chain's past was bounded by Birkhoff's
	// contraction (a start other than stationary, docs/math.md §8.5).
	BirkhoffPast bool
}

// chainSolver holds the certificate state of one chain for an unbounded
// stream (T = 0): the forward fpSide (P) and, for a stationary start, the
// backward fpSide (P*). Its estimates are warm starts for the next scale.
type chainSolver struct {
	ch     *markov.Chain
	k      int
	fwd    *fpSide
	bwd    *fpSide // nil unless stationary
	fBound *tpl.MessageBound
	tau    float64 // Birkhoff coefficient of P (starts other than stationary)
	lp     bool
	sweeps int // applications of the certificate map so far
	// work done so far (sweepWork's units) and the limit (0: none)
	work, maxWork float64
	// noClamp drops the scalar bound Σ (tests: the pairwise bound alone).
	noClamp bool
}

func newChainSolver(ch *markov.Chain, lp bool) (*chainSolver, error) {
	cs := &chainSolver{ch: ch, k: ch.K(), lp: lp}
	cs.fwd = newFPSide(newKernel(ch.P))
	cs.fBound = tpl.NewMessageBound(ch.P)
	if ch.Init == markov.InitStationary {
		// No scalar clamp backwards: it would be computed on the rounded
		// P*, whose error its fixed point may amplify; the calibration
		// takes the smaller of the two bounds anyway.
		bk, _, _, err := reversalKernel(context.Background(), ch)
		if err != nil {
			return nil, err
		}
		cs.bwd = newFPSide(bk)
	} else {
		// Given or any start: the past is bounded uniformly over starts
		// by Birkhoff's contraction (docs/math.md §8.5, §8.11).
		cs.tau = tpl.Birkhoff(ch.P)
	}
	return cs, nil
}

// reversalKernel is the time reversal of ch's chain with π by the
// Grassmann–Taksar–Heyman elimination (entrywise relative error at most
// gthError(k), docs/math.md §8.10), so that a row of the computed P*
// is within 3·gthError(k) + 3u of the exact one entrywise; it returns
// the kernel, its rows and π.
func reversalKernel(ctx context.Context, ch *markov.Chain) (*kernel, [][]float64, []float64, error) {
	pi, err := stationaryGTH(ctx, ch.P)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("pairwise: %w", err)
	}
	rev := tpl.Reversal(ch.P, pi)
	kn := newKernel(rev)
	kn.rowErr = gthError(ch.K()) + 3*unitRound
	return kn, rev, pi, nil
}

// clampMargin is the relative allowance on the scalar bound taken as a
// certificate: it is computed at ε(1+clampMargin) and multiplied by
// 1+clampMargin, far above the rounding of its few operations.
const clampMargin = 1e-9

func (cs *chainSolver) sides() []*fpSide {
	if cs.bwd == nil {
		return []*fpSide{cs.fwd}
	}
	return []*fpSide{cs.fwd, cs.bwd}
}

// setScale recomputes the scalar clamps for the per-reading budget e.
func (cs *chainSolver) setScale(e float64) {
	if cs.noClamp {
		return
	}
	scale := func(r []float64) []float64 {
		for i := range r {
			r[i] *= 1 + clampMargin
		}
		return r
	}
	cs.fwd.clamp = scale(cs.fBound.Ratios(e * (1 + clampMargin)))

}

// mapFor is a side's certificate map: the closed form, or with lp the
// plans stored by the last Newton sweep (planStore.phi) or else the best
// of the closed form and the linear program (docs/math.md §8.11).
func (s *fpSide) mapFor(lp bool) ratioMap {
	switch {
	case !lp:
		return cfMap
	case s.plans != nil:
		return s.plans.phi
	}
	return bestPlan
}

// lossOf is the loss bound of docs/math.md (8.13) from forward and
// backward bounds lf, lb (lb nil: a start other than stationary, whose
// past is bounded by Birkhoff, β* = e/(1 − τ)).
func (cs *chainSolver) lossOf(lf, lb []float64, e float64) (float64, int, int) {
	k := cs.k
	best, ba, bb := math.Inf(-1), -1, -1
	for a := range k {
		for b := range k {
			if a == b || cs.fwd.kn.dead[a] || cs.fwd.kn.dead[b] {
				continue
			}
			v := math.Log(lf[a*k+b])
			if lb != nil {
				if cs.bwd.kn.dead[a] || cs.bwd.kn.dead[b] {
					continue // a state of zero stationary probability: no secret
				}
				v += math.Log(lb[a*k+b])
			}
			if v > best || math.IsNaN(v) {
				best, ba, bb = v, a, b
			}
		}
	}
	if ba < 0 {
		return 0, -1, -1
	}
	if lb == nil {
		if cs.tau >= 1 {
			return math.Inf(1), ba, bb
		}
		return e/(1-cs.tau) + best, ba, bb
	}
	return e + best, ba, bb
}

// estimate solves the fixed points at budget e and returns the loss of the
// estimates (not a bound).
func (cs *chainSolver) estimate(ctx context.Context, e float64, lp bool) (float64, int, error) {
	return cs.estimateUpTo(ctx, e, lp, math.Inf(1))
}

// estimateUpTo is estimate, giving up (errNoConvergence) once a side's
// log ratios pass giveUp.
func (cs *chainSolver) estimateUpTo(ctx context.Context, e float64, lp bool, giveUp float64) (float64, int, error) {
	if cs.bwd == nil && cs.tau >= 1 {
		return math.Inf(1), 0, nil // no finite bound on the past (§8.5)
	}
	cs.setScale(e)
	R := math.Exp(e)
	sweeps := 0
	for _, s := range cs.sides() {
		var n int
		var err error
		cfw, lpw := s.kn.sweepWork()
		if lp {
			n, err = s.newtonSolve(ctx, R, giveUp)
			cs.work += float64(n) * (lpw + cfw)
			if errors.Is(err, errNoConvergence) && s.kn.k <= lpMaxStates {
				// Newton's linear systems are singular where plans carry
				// no diagonal mass (rows of disjoint supports, zeros in
				// P); a small chain affords the value iteration of the
				// LP map instead, from below, certified by new LPs.
				var m int
				s.lam, s.plans = newFPSide(s.kn).lam, nil
				m, err = s.solve(ctx, bestPlan, R, giveUp)
				n += m
				cs.work += float64(m) * (lpw + cfw)
			}
		} else {
			n, err = s.solve(ctx, cfMap, R, giveUp)
			cs.work += float64(n) * cfw
		}
		if err == nil && cs.maxWork > 0 && cs.work > cs.maxWork {
			err = cs.workErr()
		}
		sweeps += n
		if errors.Is(err, errNoConvergence) {
			s.lam = newFPSide(s.kn).lam // no warm start from there
		}
		if err != nil {
			return math.Inf(1), sweeps, err
		}
	}
	var lb []float64
	if cs.bwd != nil {
		lb = cs.bwd.lam
	}
	l, _, _ := cs.lossOf(cs.fwd.lam, lb, e)
	return l, sweeps, nil
}

// certWork is the work of one certification sweep of side s.
func (cs *chainSolver) certWork(s *fpSide, lp bool) float64 {
	cfw, lpw := s.kn.sweepWork()
	if lp && s.plans == nil {
		return cfw + lpw
	}
	return cfw
}

// workErr is ErrWork with the work done and the limit.
func (cs *chainSolver) workErr() error {
	return fmt.Errorf("%w: about %.2g multiply-adds done, over the limit %.2g", ErrWork, cs.work, cs.maxWork)
}

// certified inflates the current estimates until Certify accepts them and
// returns the loss of the certificates, or that of the scalar clamps (a
// certificate too) when none is accepted or it is lower.
func (cs *chainSolver) certified(ctx context.Context, e float64, lp bool, maxDelta float64) (float64, int, int, int, error) {
	R := math.Exp(e)
	sweeps := 0
	var cert [2][]float64
	for i, s := range cs.sides() {
		cert[i] = s.clamp // a certificate itself (nil: none)
		found := false
		var last []float64
		for delta := 1e-10; delta <= maxDelta*1.0001; delta *= 4 {
			cand := inflate(s.lam, cs.k, delta)
			ok, err := certify(ctx, s.kn, R, cand, s.clamp, s.mapFor(lp))
			sweeps++
			cs.work += cs.certWork(s, lp)
			if err != nil {
				return 0, 0, 0, sweeps, err
			}
			if ok {
				cert[i], found = cand, true
				break
			}
			last = cand
		}
		if !found {
			// Pairs of rows with disjoint supports make Φ homogeneous of
			// degree 1 in Λ there, so a uniform inflation keeps their
			// residual: raise the candidate where Φ exceeds it, a few
			// times (each candidate is still checked by certify).
			if c, n, err := cs.raise(ctx, s, R, last, lp); err != nil {
				return 0, 0, 0, sweeps, err
			} else if sweeps, cs.work = sweeps+n, cs.work+float64(n)*cs.certWork(s, lp); c != nil {
				cert[i] = c
			}
		}
	}
	for i := range cs.sides() {
		if cert[i] == nil {
			return math.Inf(1), -1, -1, sweeps, nil // no certificate
		}
	}
	l, a, b := cs.lossOf(cert[0], cert[1], e)
	return l, a, b, sweeps, nil
}

// raise tries to turn cand into a certificate by cand ← max(cand,
// Φ̂(cand)·(1 + 10⁻¹²)) (Φ̂ rounded up), at most raiseSweeps times; it
// returns a candidate certify accepted, or nil.
func (cs *chainSolver) raise(ctx context.Context, s *fpSide, R float64, cand []float64, lp bool) ([]float64, int, error) {
	if cand == nil {
		return nil, 0, nil
	}
	cand = append([]float64(nil), cand...)
	out := make([]float64, len(cand))
	m := s.mapFor(lp)
	k := cs.k
	for n := 1; n <= raiseSweeps; n++ {
		if err := m(ctx, s.kn, cand, R*safety(1), safety(k), out); err != nil {
			return nil, n, err
		}
		above := false
		for i, v := range out {
			if i/k == i%k || s.kn.dead[i/k] || s.kn.dead[i%k] {
				continue
			}
			if s.clamp != nil {
				v = min(v, s.clamp[i])
			}
			if v > cand[i] {
				cand[i] = v * (1 + 1e-12)
				above = true
			}
		}
		if !above {
			ok, err := certify(ctx, s.kn, R, cand, s.clamp, s.mapFor(lp))
			if err != nil {
				return nil, n, err
			}
			if ok {
				return cand, n + 1, nil
			}
		}
	}
	return nil, raiseSweeps, nil
}

const raiseSweeps = 200

// certify is Certify on a kernel: lam ≥ 1 with unit diagonal and
// min(Φ(lam), clamp) ≤ lam entrywise over the pairs of defined rows, Φ
// computed with every rounding in the direction that raises it.
func certify(ctx context.Context, kn *kernel, R float64, lam, clamp []float64, m ratioMap) (bool, error) {
	k := kn.k
	for a := range k {
		for b := range k {
			v := lam[a*k+b]
			if a == b && v != 1 || a != b && !(v >= 1) {
				return false, nil
			}
		}
	}
	out := make([]float64, k*k)
	if err := m(ctx, kn, lam, R*safety(1), safety(kn.k), out); err != nil {
		return false, err
	}
	for a := range k {
		for b := range k {
			if a == b || kn.dead[a] || kn.dead[b] {
				continue
			}
			v := out[a*k+b]
			if clamp != nil {
				v = min(v, clamp[a*k+b])
			}
			if !(v <= lam[a*k+b]) {
				return false, nil
			}
		}
	}
	return true, nil
}

// Certify reports whether lam (k×k, row-major) is a pairwise certificate
// for the kernel M at per-step budget R (docs/math.md §8.11, Lemma 8.11.1):
// lam ≥ 1 with unit diagonal and, for every ordered pair a ≠ a' of rows
// of M, a transport plan (the closed form, or a linear program's unless
// closedForm) with ratio ≤ lam(a, a'), computed with every rounding
// raising it. Then every message m = M diag(h_1) M ⋯ M h_n, h_s ∈ K_R, has
// m(a) ≤ lam(a, a')·m(a'). Rows nil in M are states of zero probability
// (not checked). The check is independent of how lam was found.
func Certify(ctx context.Context, M [][]float64, R float64, lam []float64, closedForm bool) (bool, error) {
	k := len(M)
	if len(lam) != k*k || !(R >= 1) {
		return false, errors.New("pairwise: Certify: want a k×k matrix and R ≥ 1")
	}
	m := bestPlan
	if closedForm {
		m = cfMap
	}
	return certify(ctx, newKernel(M), R, lam, nil, m)
}

// bestPlan is the better of the closed-form plan and the linear program's
// best plan (lpRatio, rounded up; docs/math.md §8.10) for every pair: Φ_LP ≤ Φ_cf, both valid.
func bestPlan(ctx context.Context, kn *kernel, lam []float64, R, up float64, out []float64) error {
	k := kn.k
	G := gamma(lam, k, R*up, up)
	// Both plans are certified for the computed rows; when rounding up,
	// charge the rows' own error (a computed P* or P^B_t) as cfMap does.
	rc := kn.rowCharge(up)
	return kn.sweep(ctx, out, func(a, b int, buf []float64) float64 {
		t := kn.cfRounded(a, b, G, buf, up)
		if t > 1 {
			if v, ok := lpRatio(kn.rows[a*k:(a+1)*k], kn.rows[b*k:(b+1)*k], G); ok && v < t {
				t = v
			}
		}
		return t * rc
	})
}

// checkClass mirrors package tpl's checks.
func checkClass(class *markov.Class, T int, opts *Options) error {
	if class == nil || len(class.Chains) == 0 {
		return errors.New("pairwise: empty class")
	}
	if T < 0 {
		return fmt.Errorf("pairwise: length %d, want ≥ 1 (or 0 for an unbounded stream)", T)
	}
	if T == 0 && opts != nil && len(opts.Missing) > 0 {
		return errors.New("pairwise: missing steps need a finite length T")
	}
	if s := opts.sens(); !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("pairwise: sensitivity %v, want finite > 0", s)
	}
	for i, ch := range class.Chains {
		if ch == nil || ch.K() != len(class.States) {
			return fmt.Errorf("pairwise: class chain %d does not have the class's %d states", i, len(class.States))
		}
	}
	return nil
}

// budgets builds the per-step budgets log R_t: s/b observed, 0 missing.
func budgets(T int, b, s float64, opts *Options) ([]float64, error) {
	eps := make([]float64, T)
	for t := range eps {
		eps[t] = s / b
	}
	if opts != nil {
		for i, m := range opts.Missing {
			if m < 1 || m > T {
				return nil, fmt.Errorf("pairwise: Missing[%d] = %d, want a step in 1..%d", i, m, T)
			}
			eps[m-1] = 0
		}
	}
	return eps, nil
}

// Loss bounds the privacy loss, for every chain of the class, of per-step
// releases of T readings (T = 0: an unbounded stream, every time) each
// e^{s/b}-DP in its reading (s = opts.Sensitivity, 0 at opts.Missing), by
// a certified pairwise bound (docs/math.md §8.11); it is never above
// package tpl's bound at the same scale. By docs/math.md §8.6–8.7 the
// bound holds for every event-level DP release with those budgets
// (windowed histograms of any widths, per-bin scale b) of one or several
// independent series.
func Loss(ctx context.Context, class *markov.Class, T int, b float64, opts *Options) (Result, error) {
	if err := checkClass(class, T, opts); err != nil {
		return Result{}, err
	}
	if !(b > 0) || math.IsInf(b, 0) {
		return Result{}, fmt.Errorf("pairwise: per-bin scale %v, want finite > 0", b)
	}
	best := Result{Loss: math.Inf(-1), Scalar: math.Inf(-1)}
	for i, ch := range class.Chains {
		r, err := chainLoss(ctx, ch, T, b, opts)
		if err != nil {
			return Result{}, fmt.Errorf("chain %d: %w", i, err)
		}
		r.Sweeps += best.Sweeps
		if r.Loss > best.Loss || math.IsNaN(r.Loss) {
			r.Chain = i
			r.Scalar = max(r.Scalar, best.Scalar)
			best = r
		} else {
			best.Scalar = max(best.Scalar, r.Scalar)
			best.Sweeps = r.Sweeps
		}
	}
	return best, nil
}

// scalarLoss is package tpl's bound for one chain at b (sensitivity s).
// For an unbounded stream from a given start it is tpl's bound for every
// start (docs/math.md §8.5, Birkhoff): tpl's own runs the recursion to a
// long horizon, minutes on slowly mixing chains.
func scalarLoss(ch *markov.Chain, T int, b, s float64, opts *Options) (float64, error) {
	one, err := markov.NewClass(ch.States, ch)
	if err != nil {
		return 0, err
	}
	if T == 0 {
		one = one.AnyStart()
	}
	var to *tpl.Options
	if opts != nil {
		to = &tpl.Options{Missing: opts.Missing}
	}
	// tpl's budget per step is 2/b' = s/b.
	r, err := tpl.Loss(one, T, 2*b/s, to)
	if err != nil {
		return 0, err
	}
	return r.Loss, nil
}

func chainLoss(ctx context.Context, ch *markov.Chain, T int, b float64, opts *Options) (Result, error) {
	s := opts.sens()
	if T > 0 && ch.Init == markov.InitGiven && tpl.Underflows(ch.P, ch.Q, T) {
		// a possible state's probability underflowed: bounded as "any"
		// start, which holds for every start (tpl.Underflows)
		ch = &markov.Chain{States: ch.States, P: ch.P, Init: markov.InitAny}
	}
	sc, err := scalarLoss(ch, T, b, s, opts)
	if err != nil {
		return Result{}, err
	}
	if T > 0 {
		eps, err := budgets(T, b, s, opts)
		if err != nil {
			return Result{}, err
		}
		// the functional recursion's exact per-step bound where it runs
		// (§8.12, finite streams), else the plans' recursion (§8.11)
		// A calibration bisects over about 40 evaluations
		// (calibrateFinite), so one may take 1/64 of the caller's limit.
		left := workLeft(opts.maxWork(), 0)
		if left > 0 {
			left /= 64
		}
		r, _, ok, err := fnFiniteLoss(ctx, ch, eps, left)
		if err != nil {
			return Result{}, err
		}
		if !ok {
			if r, err = finiteLoss(ctx, ch, eps, opts.lp()); err != nil {
				return Result{}, err
			}
		}
		r.Scalar = sc
		if sc < r.Loss {
			r.Loss, r.A, r.B = sc, -1, -1
		}
		return r, nil
	}
	// the functional recursion's certificate where it runs (§8.12)
	fr, fw, ok, err := fnLoss(ctx, ch, s/b, workLeft(opts.maxWork(), 0))
	if err != nil {
		return Result{}, err
	} else if ok {
		fr.Scalar = sc
		if sc < fr.Loss {
			fr.Loss, fr.A, fr.B = sc, -1, -1
		}
		return fr, nil
	}
	cs, err := newChainSolver(ch, opts.lp())
	if err != nil {
		return Result{}, err
	}
	// the plans get what the recursion left of the limit
	if cs.maxWork = opts.maxWork(); cs.maxWork > 0 {
		if cs.maxWork -= fw; cs.maxWork <= 0 {
			return Result{}, fmt.Errorf("%w: about %.2g multiply-adds done, over the limit %.2g", ErrWork, fw, opts.maxWork())
		}
	}
	e := s / b
	// The closed form's certificate first; Newton's method (lp) starts
	// from its fixed point, estimating at e(1+κ) for a certificate at e
	// (see search; docs/math.md §8.11), κ as there, to 10⁻³.
	_, n, err := cs.estimate(ctx, e, false)
	if err != nil && !errors.Is(err, errNoConvergence) {
		return Result{}, err
	}
	l, a, bb, m, err := cs.certified(ctx, e, false, 1e-3)
	if err != nil {
		return Result{}, err
	}
	n += m
	for kap := 0.0; cs.lp && kap < 2e-3; kap = nextKappa(kap, e) {
		_, m, err := cs.estimate(ctx, e*(1+kap), true)
		n += m
		if errors.Is(err, errNoConvergence) {
			break
		}
		if err != nil {
			return Result{}, err
		}
		ll, la, lb, m2, err := cs.certified(ctx, e, true, 1e-3)
		n += m2
		if err != nil {
			return Result{}, err
		}
		if ll < l {
			l, a, bb = ll, la, lb
		}
		if !math.IsInf(ll, 1) && ll <= l {
			break
		}
	}
	m = 0
	r := Result{Loss: l, Scalar: sc, A: a, B: bb, Sweeps: n + m}
	if sc < r.Loss {
		r.Loss, r.A, r.B = sc, -1, -1
	}
	return r, nil
}
