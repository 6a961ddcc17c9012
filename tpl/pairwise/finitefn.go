package pairwise

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl"
)

// The functional recursion over a finite stream (docs/math.md §8.12,
// "Finite streams"): the reading at step t has a future of T − t steps and
// a past of t − 1, each step s at its own ratio R_s = e^{ε_s} (1 at a
// missing reading), so the suprema F^{(t)}, B^{(t)} are those of messages
// of exactly those horizons, and part (ii) of the theorem decides them:
// F^{(t)} ≤ τ iff ψ_{T−t}(τ)·1 ≥ 0. The past of a given start runs on P
// too: with φ = ψ/q_s the backward kernels P^B_s disappear, and the test
// weighs the last φ by the start q.

// fnFiniteRuns is the work of one (t, pair) in runs of its horizon: the
// Newton steps with their derivative (2 products a step, about 6 runs)
// and the certificate (2 products a step).
const fnFiniteRuns = 16

// fnFiniteMaxWork bounds one evaluation's estimate: a calibration
// bisects the scale over about 40 of them (calibrateFinite), so all of
// them stay within fnMaxWork.
const fnFiniteMaxWork = fnMaxWork / 64

// fnFiniteLoss is the functional recursion's certified loss of T =
// len(eps) per-step releases of ch with budgets eps (log R_t; 0 at a
// missing reading): every step t and ordered pair certified at (1 + η)
// times its exact suprema, η = 10⁻⁷ (raised tenfold up to three times when
// the rounding refuses it). ok is false, with no error, when it does not
// apply (more than fnMaxStates states, an estimate over the work left) or
// certifies nothing. It returns the work done.
func fnFiniteLoss(ctx context.Context, ch *markov.Chain, eps []float64, left float64) (Result, float64, bool, error) {
	T, k := len(eps), ch.K()
	if noFunctional || k < 2 || k > fnMaxStates || T < 1 {
		return Result{}, 0, false, nil
	}
	limit, ok := fnLimit(fnFiniteMaxWork, left)
	kf := float64(k)
	if !ok || fnFiniteRuns*float64(T)*float64(T)*rowCost(ch.P)*kf*(kf-1) > limit {
		return Result{}, 0, false, nil
	}
	work, cost := 0.0, rowCost(ch.P)
	charge := func(steps, pairs int) error {
		if work += float64(steps) * float64(pairs) * cost; work > limit {
			return fmt.Errorf("%w: about %.2g multiply-adds done, over the limit %.2g", ErrWork, work, limit)
		}
		return nil
	}
	R := make([]float64, T) // R_s, step s = 1..T at s−1, rounded up
	for s, e := range eps {
		R[s] = math.Exp(e) * (1 + 2*unitRound)
	}
	// The start: q_1 and q_t (entrywise relative error qErr[t]); "any"
	// bounds the past by Birkhoff's contraction (docs/math.md §8.5).
	var q [][]float64
	var qErr []float64
	wErr := 0.0
	switch ch.Init {
	case markov.InitStationary:
		pi, err := markov.StationaryGTH(ctx, ch.P)
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, 0, false, err
			}
			return Result{}, 0, false, nil
		}
		wErr = markov.GTHError(k)
		q, qErr = make([][]float64, T+1), make([]float64, T+1)
		for t := 1; t <= T; t++ {
			q[t], qErr[t] = pi, wErr
		}
	case markov.InitGiven:
		q, qErr = make([][]float64, T+1), make([]float64, T+1)
		q[1] = ch.Q
		for t := 2; t <= T; t++ {
			q[t] = make([]float64, k)
			for y, w := range q[t-1] {
				for x, p := range ch.P[y] {
					q[t][x] += w * p
				}
			}
			// sums of non-negative products: (k+1)u more each step
			qErr[t] = float64(t-1) * float64(k+1) * unitRound
		}
		if tpl.Underflows(ch.P, ch.Q, T) {
			return Result{}, 0, false, nil // bounded as "any" start (chainLoss)
		}
	}
	uniform := make([]float64, k)
	for i := range uniform {
		uniform[i] = 1 / kf
	}
	fc := newFnChain(ch.P, uniform, 0) // its π is not used: weights below
	ones := fc.fwd.w
	tau, beta := 0.0, 0.0 // "any": Birkhoff's τ(P) and β_{t−1}
	if ch.Init == markov.InitAny {
		tau = tpl.Birkhoff(ch.P)
	}
	best := Result{Loss: math.Inf(-1), A: -1, B: -1, Functional: true, BirkhoffPast: q == nil}
	up := 1 + 2*unitRound
	for t := 1; t <= T; t++ {
		var pairs [][2]int
		for a := range k {
			for b := range k {
				if a != b && (q == nil || q[t][a] > 0 && q[t][b] > 0) {
					pairs = append(pairs, [2]int{a, b})
				}
			}
		}
		// the future: steps t+1..T
		nF := T - t
		rF := func(n int) float64 { return R[t+n] }
		tF, err := fnFiniteSide(ctx, fc.fwd, pairs, rF, nF, ones, 0, fc.lower(pairs, false), charge)
		if err != nil || tF == nil {
			return fnFiniteEnd(ctx, err, work)
		}
		// the past: steps t−1..1, from φ_0 ∝ t̃e_{a'} − e_a, t̃ = τ·q_t(a)/q_t(a')
		var tB []float64
		if q != nil {
			lo := make([]float64, len(pairs))
			for j, pr := range pairs {
				lo[j] = q[t][pr[0]] / q[t][pr[1]]
			}
			rB := func(n int) float64 { return R[t-2-n] }
			if tB, err = fnFiniteSide(ctx, fc.bwd, pairs, rB, t-1, q[1], wErr, lo, charge); err != nil || tB == nil {
				return fnFiniteEnd(ctx, err, work)
			}
		}
		for j, pr := range pairs {
			v := math.Log(tF[j] * up)
			if q != nil {
				// B = t̃·q_t(a')/q_t(a), both entries and the division rounded up
				B := tB[j] * q[t][pr[1]] / q[t][pr[0]]
				v += math.Log(B * up * (1 + 2*qErr[t] + 4*unitRound))
			}
			l := (eps[t-1] + v) * (1 + 4*unitRound)
			if q == nil {
				l = (tau*beta*(1+2*unitRound) + eps[t-1] + v) * (1 + 4*unitRound)
			}
			if l > best.Loss || math.IsNaN(l) {
				best.Loss, best.A, best.B = l, pr[0], pr[1]
			}
		}
		beta = tau*beta + eps[t-1]
	}
	if math.IsInf(best.Loss, -1) {
		best.Loss = 0
	}
	return best, work, true, nil
}

// fnFiniteEnd ends fnFiniteLoss without a bound: a cancelled context or an
// error other than the work limit is returned, the rest falls back.
func fnFiniteEnd(ctx context.Context, err error, work float64) (Result, float64, bool, error) {
	if ctx.Err() != nil {
		return Result{}, work, false, ctx.Err()
	}
	if err != nil && !errors.Is(err, ErrWork) {
		return Result{}, work, false, err
	}
	return Result{}, work, false, nil
}

// fnFiniteSide is one side of one step of fnFiniteLoss: the exact suprema
// over messages of horizon N (Newton), certified at (1 + η) times them
// by the rounding-safe recursion and part (ii); nil when the rounding
// refuses every η tried.
func fnFiniteSide(ctx context.Context, side *fnSide, pairs [][2]int, rAt func(int) float64, N int, w []float64, wErr float64, lo []float64, charge func(steps, pairs int) error) ([]float64, error) {
	if len(pairs) == 0 {
		return []float64{}, nil // no pair: nothing to bound
	}
	est, _, err := side.exactCounted(ctx, pairs, rAt, N, w, lo, nil, func(p int) error { return charge(2*N, p) }, 0)
	if err != nil {
		return nil, err
	}
	t := make([]float64, len(est))
	for eta := 1e-7; eta < 1e-3; eta *= 10 {
		for j, v := range est {
			t[j] = max(v, lo[j]) * (1 + eta)
		}
		ok, steps, err := side.certifyR(ctx, pairs, t, rAt, N, w, wErr)
		if err == nil {
			err = charge(2*steps, 1)
		}
		if err != nil {
			return nil, err
		}
		all := true
		for _, o := range ok {
			all = all && o
		}
		if all {
			return t, nil
		}
		if fnTrace != nil {
			fnTrace("finite side N %d: η %g refused: est %v ok %v", N, eta, est, ok)
		}
	}
	return nil, nil
}
