package pairwise

import (
	"context"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl"
)

// finiteLoss is the pairwise bound of docs/math.md (8.13) for a stream of
// T = len(eps) steps with per-step budgets eps (log R_t; 0 = missing): the
// recursion Λ_t = min(Φ(Λ_{t±1}), clamp) run with every rounding raising
// it, so each step is its own certificate (Lemma 8.11.1 applied once).
func finiteLoss(ctx context.Context, ch *markov.Chain, eps []float64, lp bool) (Result, error) {
	T, k := len(eps), ch.K()
	emax := 0.0
	for _, e := range eps {
		emax = max(emax, e)
	}
	if k == 1 || emax == 0 {
		return Result{Loss: 0, A: -1, B: -1}, nil
	}
	m := cfMap
	if lp {
		m = bestPlan
	}
	up := safety(k)
	scale := func(r []float64) []float64 {
		for i := range r {
			r[i] *= 1 + clampMargin
		}
		return r
	}
	sweeps := 0
	fk := newKernel(ch.P)
	fclamp := scale(tpl.NewMessageBound(ch.P).Ratios(emax * (1 + clampMargin)))
	// forward: lf[t] bounds the messages of steps t+1..T given X_t (t 1-based).
	lf := make([][]float64, T+1)
	lf[T] = ones(k)
	for t := T - 1; t >= 1; t-- {
		out := make([]float64, k*k)
		if err := m(ctx, fk, lf[t+1], math.Exp(eps[t])*safety(1), up, out); err != nil {
			return Result{}, err
		}
		sweeps++
		for i, c := range fclamp {
			out[i] = min(out[i], c)
		}
		lf[t] = out
	}
	best := Result{Loss: math.Inf(-1), A: -1, B: -1}
	consider := func(v float64, a, b int) {
		if v > best.Loss || math.IsNaN(v) {
			best.Loss, best.A, best.B = v, a, b
		}
	}
	switch ch.Init {
	case markov.InitStationary, markov.InitGiven:
		var q []float64
		var err error
		if q, err = ch.Initial(); err != nil {
			return Result{}, fmt.Errorf("pairwise: %w", err)
		}
		var bk *kernel
		var bclamp []float64 // none: see newChainSolver
		if ch.Init == markov.InitStationary {
			if bk, _, q, err = reversalKernel(ctx, ch); err != nil {
				return Result{}, err
			}
		}
		lb := ones(k) // Λ^B_1: no past
		for t := 1; t <= T; t++ {
			if t > 1 {
				var qt []float64
				if ch.Init == markov.InitGiven {
					var rows [][]float64
					rows, qt = tpl.BackwardAt(ch.P, q)
					bk = newKernel(rows)
					// q_t is t−1 products with P: entrywise relative
					// error ≤ (t−1)(k+1)u (sums of positive terms), so the
					// computed rows are within 2(t−1)(k+1)u + 3u.
					bk.rowErr = (2*float64(t-1)*float64(k+1) + 3) * unitRound
				}
				out := make([]float64, k*k)
				if err := m(ctx, bk, lb, math.Exp(eps[t-2])*safety(1), up, out); err != nil {
					return Result{}, err
				}
				sweeps++
				if bclamp != nil {
					for i, c := range bclamp {
						out[i] = min(out[i], c)
					}
				}
				lb = out
				if qt != nil {
					q = qt
				}
			}
			for a := range k {
				for b := range k {
					if a != b && q[a] > 0 && q[b] > 0 {
						consider(eps[t-1]+math.Log(lf[t][a*k+b])+math.Log(lb[a*k+b]), a, b)
					}
				}
			}
		}
	case markov.InitAny:
		// The past of every start: β_t ≤ τβ_{t−1} + ε_t (docs/math.md §8.5).
		tau := tpl.Birkhoff(ch.P)
		beta := 0.0 // β_{t−1}
		for t := 1; t <= T; t++ {
			for a := range k {
				for b := range k {
					if a != b {
						consider(tau*beta+eps[t-1]+math.Log(lf[t][a*k+b]), a, b)
					}
				}
			}
			beta = tau*beta + eps[t-1]
		}
	default:
		return Result{}, fmt.Errorf("pairwise: unknown initial kind %v", ch.Init)
	}
	best.Sweeps = sweeps
	if math.IsInf(best.Loss, -1) {
		best.Loss = 0
	}
	return best, nil
}

func ones(k int) []float64 {
	l := make([]float64, k*k)
	for i := range l {
		l[i] = 1
	}
	return l
}
