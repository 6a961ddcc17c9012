package tpl

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Result is a loss bound and where it is attained.
type Result struct {
	Loss float64 // upper bound on the privacy loss (natural log), +Inf if none is finite
	// Time is the 1-based step of the maximum; 0 when it is the steady state
	// of an unbounded stream (docs/math.md §8.4) or the tail bound beyond the
	// exactly computed horizon (§8.5).
	Time int
	// A, B is the secret pair (X_t = A vs X_t = B) of the maximum; both −1
	// when the bound does not single out a pair (the tail bound of §8.5).
	A, B int
}

func checkBudgets(eps []float64) error {
	if len(eps) == 0 {
		return errors.New("tpl: no steps")
	}
	for t, e := range eps {
		if math.IsNaN(e) || e < 0 {
			return fmt.Errorf("tpl: step %d: budget %v, want ≥ 0 (0 = no release)", t+1, e)
		}
	}
	return nil
}

// forward returns φ_t for t = 1..T+1 (φ_{T+1} = 0): docs/math.md (8.2).
func forward(fk *kernel, eps []float64) []float64 {
	T := len(eps)
	phi := make([]float64, T+2)
	for t := T; t >= 1; t-- {
		fk.st.tick(len(fk.pairs) + 1)
		phi[t] = addUp(fk.max(phi[t+1]), eps[t-1])
	}
	return phi
}

func rowsOf(P [][]float64) [][]float64 {
	r := make([][]float64, len(P))
	copy(r, P)
	return r
}

// Reversal returns P*(x, y) = π(y)P(y, x)/π(x), nil rows where π(x) = 0.
func Reversal(P [][]float64, pi []float64) [][]float64 {
	k := len(P)
	r := make([][]float64, k)
	for x := range k {
		if pi[x] <= 0 {
			continue
		}
		r[x] = make([]float64, k)
		for y := range k {
			r[x][y] = pi[y] * P[y][x] / pi[x]
		}
	}
	return r
}

// BackwardAt is P^B_t for marginals qPrev = q_{t−1}: rows x with q_t(x) > 0.
func BackwardAt(P [][]float64, qPrev []float64) ([][]float64, []float64) {
	k := len(P)
	qt := make([]float64, k)
	for y := range k {
		for x := range k {
			qt[x] += qPrev[y] * P[y][x]
		}
	}
	r := make([][]float64, k)
	for x := range k {
		if qt[x] <= 0 {
			continue
		}
		r[x] = make([]float64, k)
		for y := range k {
			r[x][y] = qPrev[y] * P[y][x] / qt[x]
		}
	}
	return r, qt
}

// Underflows says whether a state possible at some step t ≤ T of the
// chain P started at q (reachable from q's support) has a computed
// probability q_t of 0 (BackwardAt's, an underflow, as through
// 10⁻²⁰⁰·10⁻²⁰⁰). The recursions bound the pairs of states of positive
// q_t only, and such a state's pairs are secrets too, so that start is
// bounded as "any" start instead, which holds for every start.
func Underflows(P [][]float64, q []float64, T int) bool {
	k := len(P)
	supp := make([]bool, k)
	for x, v := range q {
		supp[x] = v > 0
	}
	for t := 2; t <= T; t++ {
		_, qt := BackwardAt(P, q)
		next := make([]bool, k)
		for x := range k {
			for y, ok := range supp {
				next[x] = next[x] || ok && P[y][x] > 0
			}
			if next[x] && !(qt[x] > 0) {
				return true
			}
		}
		q, supp = qt, next
	}
	return false
}

// Leakage bounds the privacy loss of a finite stream of per-step releases
// of one chain's readings X_1..X_T, T = len(eps), where step t's release
// is eps[t−1]-DP with respect to X_t (0: no release at that step, a
// missing reading). The bound is max over t of docs/math.md (8.3), with
// the backward kernels of the chain's initial distribution: the time
// reversal for a stationary start (§8.3), Bayes' rule at every step for a
// given start (§8.5), and the Birkhoff contraction bound, valid for every
// start at once, for "any" (§8.5). By docs/math.md §8.6 it also bounds
// every release that is eps[t−1]-DP with respect to each reading X_t
// (windowed histograms: eps = 2/b at observed steps). It is an upper
// bound; for two states with P(0,0) ≥ P(1,0) and a stationary start it
// equals the exact loss of per-step Laplace one-hot releases, but not in
// general (docs/math.md §8.3 gives a two-state counterexample). Cost:
// O(k³) per step (k² ordered pairs, each a climb over at most k column
// prefixes), O(k³ log k) once for the column orders.
func Leakage(ch *markov.Chain, eps []float64) (Result, error) {
	return LeakageContext(context.Background(), ch, eps)
}

// LeakageContext is Leakage stopped when ctx ends (a deadline, a signal, a
// client gone): it then returns, within well under a second, an error
// wrapping the context's cause. Cost: see Work.
func LeakageContext(ctx context.Context, ch *markov.Chain, eps []float64) (_ Result, err error) {
	defer recoverStop(&err)
	st := newStopper(ctx)
	st.check()
	return newPrep(ch, st).leakage(eps)
}

func (p *prep) leakage(eps []float64) (Result, error) {
	if err := checkBudgets(eps); err != nil {
		return Result{}, err
	}
	ch := p.ch
	T := len(eps)
	k := ch.K()
	fk := p.forward()
	phi := forward(fk, eps)
	best := Result{Loss: math.Inf(-1)}
	consider := func(v float64, t, a, b int) {
		if v > best.Loss || math.IsNaN(v) {
			best = Result{Loss: v, Time: t, A: a, B: b}
		}
	}
	// secrets at t = 1: no past.
	first := func(q []float64) {
		for a := range k {
			for b := range k {
				if a != b && (q == nil || q[a] > 0 && q[b] > 0) {
					consider(eps[0]+fk.pairValue(a, b, phi[2]), 1, a, b)
				}
			}
		}
	}
	init := ch.Init
	if init == markov.InitGiven && Underflows(ch.P, ch.Q, T) {
		init = markov.InitAny // see Underflows
	}
	switch init {
	case markov.InitStationary:
		pi, err := p.stationary()
		if err != nil {
			return Result{}, err
		}
		first(pi)
		bk, err := p.reversal()
		if err != nil {
			return Result{}, err
		}
		beta := eps[0] // β_{t−1}
		for t := 2; t <= T; t++ {
			p.st.tick(len(bk.pairs) + 1)
			bv, bmax := bk.at(beta)
			for i, pr := range bk.pairs {
				consider(bv[i]+eps[t-1]+fk.pairValue(pr.a, pr.b, phi[t+1]), t, pr.a, pr.b)
			}
			beta = addUp(bmax, eps[t-1])
		}
	case markov.InitGiven:
		q := append([]float64(nil), ch.Q...)
		first(q)
		orders := p.columnOrders()
		beta := eps[0]
		for t := 2; t <= T; t++ {
			p.st.tick(2 * k * k)
			rows, qt := BackwardAt(ch.P, q)
			bk := newKernel(rows, orders, givenErr(t, ch.K()), p.st)
			bv, bmax := bk.at(beta)
			for i, pr := range bk.pairs {
				consider(bv[i]+eps[t-1]+fk.pairValue(pr.a, pr.b, phi[t+1]), t, pr.a, pr.b)
			}
			beta = addUp(bmax, eps[t-1])
			q = qt
		}
	case markov.InitAny:
		tau, _ := birkhoff(ch.P)
		first(nil)
		beta := eps[0]
		for t := 2; t <= T; t++ {
			p.st.tick(len(fk.pairs) + 1)
			fv, _ := fk.at(phi[t+1])
			for i, pr := range fk.pairs {
				v := tau*beta + eps[t-1]
				if phi[t+1] > 0 {
					v += fv[i]
				}
				consider(v, t, pr.a, pr.b)
			}
			beta = addUp(tau*beta*(1+0x1p-52), eps[t-1])
		}
	default:
		return Result{}, fmt.Errorf("tpl: unknown initial kind %v", ch.Init)
	}
	if math.IsInf(best.Loss, -1) { // one state: nothing to protect
		best = Result{Loss: 0, Time: 1, A: -1, B: -1}
	}
	return best, nil
}

// birkhoff is τ(M) = tanh(Δ(M)/4), Δ(M) = max over rows i, j of
// max_k log(M_ik/M_jk) + max_l log(M_jl/M_il) (docs/math.md §8.5); 1 when
// some entry is zero (Δ = ∞). It returns τ rounded up and 1 − τ =
// 2/(e^{Δ/2} + 1) rounded down, computed without the difference 1 − τ,
// which loses every digit on sticky chains where τ ≈ 1 (§8.9).
func birkhoff(M [][]float64) (tau, gap float64) {
	k := len(M)
	delta := 0.0
	for i := range k {
		for j := range k {
			if i == j {
				continue
			}
			m1, m2 := math.Inf(-1), math.Inf(-1)
			for c := range k {
				if M[i][c] <= 0 || M[j][c] <= 0 {
					return 1, 0
				}
				m1 = math.Max(m1, math.Log(M[i][c]/M[j][c]))
				m2 = math.Max(m2, math.Log(M[j][c]/M[i][c]))
			}
			delta = math.Max(delta, m1+m2)
		}
	}
	// Δ rounded up: two logs of quotients and a sum, each within a few
	// ulps, plus an absolute 2⁻⁵⁰ for logs near 0.
	delta = delta*(1+0x1p-49) + 0x1p-50
	tau = math.Min(1, math.Tanh(delta/4)*(1+0x1p-50))
	gap = 2 / (math.Exp(delta/2) + 1) * (1 - 0x1p-50)
	return tau, gap
}

// addUp is a + b rounded up (a, b ≥ 0): the recursions of (8.2) add a
// rounded-up λ and a budget at every step, and rounding each sum up keeps
// every iterate above the exact one (λ is monotone; docs/math.md §8.9).
func addUp(a, b float64) float64 { return (a + b) * (1 + 0x1p-52) }
