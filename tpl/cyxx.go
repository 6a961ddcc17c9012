package tpl

import (
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// LeakageCYXX is [CYXX18]'s own total for a stationary chain: max over t of
// BPL_t + FPL_t − ε_t, the backward and forward maxima over pairs taken
// separately (T = len(eps) > 0), or B* + F* − ε for an unbounded stream with
// the constant budget eps[0] (unbounded true). It is never below Leakage /
// LeakageSup (docs/math.md §8.3 takes the pair inside the maximum) and is
// here to compare with the authors' allocation.
func LeakageCYXX(ch *markov.Chain, eps []float64, unbounded bool) (float64, error) {
	if ch.Init != markov.InitStationary {
		return 0, errors.New("tpl: LeakageCYXX needs a stationary start")
	}
	if err := checkBudgets(eps); err != nil {
		return 0, err
	}
	pi, err := ch.Stationary()
	if err != nil {
		return 0, fmt.Errorf("tpl: %w", err)
	}
	bk := newKernel(Reversal(ch.P, pi), nil, reversalErr(ch.K()), nil)
	fk := newKernel(rowsOf(ch.P), nil, 0, nil)
	if unbounded {
		e := eps[0]
		return bk.sup(e) + fk.sup(e) - e, nil
	}
	T := len(eps)
	phi := forward(fk, eps)
	best, beta := 0.0, 0.0
	for t := 1; t <= T; t++ {
		if t == 1 {
			beta = eps[0]
		} else {
			beta = bk.max(beta) + eps[t-1]
		}
		best = math.Max(best, beta+phi[t]-eps[t-1])
	}
	return best, nil
}

// Birkhoff is τ(M) = tanh(Δ(M)/4), Birkhoff's contraction coefficient of
// M in Hilbert's projective metric (docs/math.md §8.5); 1 when M has a
// zero entry. Package tpl/pairwise uses it for the "any" start.
func Birkhoff(M [][]float64) float64 {
	tau, _ := birkhoff(M)
	return tau
}

// BirkhoffGap is 1 − τ(M), rounded down and computed without cancellation
// (τ ≈ 1 on sticky chains; docs/math.md §8.9): the factor by which the
// "any" start's past bound β* = ε/(1 − τ) divides.
func BirkhoffGap(M [][]float64) float64 {
	_, gap := birkhoff(M)
	return gap
}
