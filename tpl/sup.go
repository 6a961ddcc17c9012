package tpl

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// tailTol is the largest tail term 2mδ_H/(1 − τ(P^m)) that LeakageSup
// leaves in the bound of a given start (docs/math.md §8.5).
const tailTol = 1e-12

// maxHorizonWork caps the work (steps × k³) LeakageSup spends on the exact
// steps of a given start; past that horizon the (larger) tail bound is
// returned, which is still a bound (docs/math.md §8.5).
const maxHorizonWork = 2e8

// LeakageSup bounds the privacy loss, at every time, of an unbounded stream
// of per-step releases of one chain's readings that are each eps-DP with
// respect to their own reading (docs/math.md §8.4): the steady state
// max_{a≠a'} λ_{P*}(a, a'; B*) + eps + λ_P(a, a'; F*) for a stationary
// start, which the finite-T bound of Leakage approaches from below as T
// grows; for a given start the exact time-varying recursion up to a
// horizon plus the tail bound of §8.5 (needs a primitive chain); for
// "any" start the Birkhoff bound of §8.5 (needs a positive P). The result
// is +Inf when no finite bound exists (e.g. a deterministic transition
// that keeps two states apart forever).
func LeakageSup(ch *markov.Chain, eps float64) (Result, error) {
	return LeakageSupContext(context.Background(), ch, eps)
}

// LeakageSupContext is LeakageSup stopped when ctx ends: it then returns,
// within well under a second, an error wrapping the context's cause.
// Cost: see Work.
func LeakageSupContext(ctx context.Context, ch *markov.Chain, eps float64) (_ Result, err error) {
	defer recoverStop(&err)
	st := newStopper(ctx)
	st.check()
	return newPrep(ch, st).leakageSup(eps)
}

func (p *prep) leakageSup(eps float64) (Result, error) {
	if math.IsNaN(eps) || eps < 0 || math.IsInf(eps, 0) {
		return Result{}, fmt.Errorf("tpl: budget %v, want finite ≥ 0", eps)
	}
	ch := p.ch
	if ch.K() == 1 {
		return Result{Loss: 0, A: -1, B: -1}, nil
	}
	fk := p.forward()
	Fs := fk.sup(eps)
	switch ch.Init {
	case markov.InitStationary:
		bk, err := p.reversal()
		if err != nil {
			return Result{}, err
		}
		Bs := bk.sup(eps)
		best := Result{Loss: 0, A: -1, B: -1}
		for _, pr := range bk.pairs {
			v := bk.pairValue(pr.a, pr.b, Bs) + eps + fk.pairValue(pr.a, pr.b, Fs)
			if v > best.Loss || math.IsNaN(v) {
				best = Result{Loss: v, A: pr.a, B: pr.b}
			}
		}
		return best, nil
	case markov.InitAny:
		_, gap := birkhoff(ch.P)
		if gap <= 0 {
			return Result{Loss: math.Inf(1), A: -1, B: -1}, nil
		}
		b := eps / gap * (1 + 0x1p-52)
		return Result{Loss: b + Fs - eps, A: -1, B: -1}, nil
	case markov.InitGiven:
		return p.supGiven(eps, fk, Fs)
	}
	return Result{}, fmt.Errorf("tpl: unknown initial kind %v", ch.Init)
}

// supGiven is docs/math.md §8.5 for a fixed initial distribution.
func (p *prep) supGiven(eps float64, fk *kernel, Fs float64) (Result, error) {
	ch := p.ch
	if !ch.Irreducible() {
		return Result{}, fmt.Errorf("tpl: an unbounded stream from a given initial distribution needs a primitive chain: %w", markov.ErrNotIrreducible)
	}
	pi, err := p.stationary()
	if err != nil {
		return Result{}, err
	}
	m, gapM := p.primitive()
	if m == 0 {
		return Result{}, fmt.Errorf("tpl: an unbounded stream from a given initial distribution needs a primitive chain (some power of P positive): %w", markov.ErrPeriodic)
	}
	star, err := p.reversal()
	if err != nil {
		return Result{}, err
	}
	orders := p.columnOrders()
	Bs := star.sup(eps)
	k := ch.K()
	maxHorizon := max(100, int(maxHorizonWork/float64(k*k*k)))
	q := append([]float64(nil), ch.Q...)
	best := Result{Loss: math.Inf(-1)}
	consider := func(v float64, t, a, b int) {
		if v > best.Loss || math.IsNaN(v) {
			best = Result{Loss: v, Time: t, A: a, B: b}
		}
	}
	for a := range k {
		for b := range k {
			if a != b && q[a] > 0 && q[b] > 0 {
				consider(eps+fk.pairValue(a, b, Fs), 1, a, b)
			}
		}
	}
	beta := eps
	for t := 2; ; t++ {
		p.st.tick(2 * k * k)
		rows, qt := BackwardAt(ch.P, q)
		bk := newKernel(rows, orders, givenErr(t, ch.K()), p.st)
		bv, bmax := bk.at(beta)
		for i, pr := range bk.pairs {
			consider(bv[i]+eps+fk.pairValue(pr.a, pr.b, Fs), t, pr.a, pr.b)
		}
		beta = addUp(bmax, eps)
		q = qt
		// δ_t = d_H(q_t, π); the tail covers every time after t.
		lo, hi := math.Inf(1), 0.0
		for x := range k {
			r := q[x] / pi[x]
			lo, hi = math.Min(lo, r), math.Max(hi, r)
		}
		if lo <= 0 {
			continue
		}
		delta := math.Log(hi/lo)*(1+0x1p-50) + 0x1p-52 // rounded up (§8.9)
		extra := 2 * float64(m) * delta / gapM * (1 + 0x1p-50)
		if extra <= tailTol || t >= maxHorizon {
			// every s > t: β_{s−1} ≤ β̄ and λ^B_s ≤ λ_{P*} + 2δ_t (§8.5)
			bbar := math.Max(beta, Bs) + extra
			for _, pr := range star.pairs {
				v := star.pairValue(pr.a, pr.b, bbar) + 2*delta + eps + fk.pairValue(pr.a, pr.b, Fs)
				if v > best.Loss || math.IsNaN(v) {
					best = Result{Loss: v, Time: 0, A: pr.a, B: pr.b}
				}
			}
			return best, nil
		}
	}
}

// primitivePower returns the least m ≤ (k−1)²+1 (Wielandt's bound) with
// P^m positive, and P^m; m = 0 when there is none (P is not primitive).
func primitivePower(P [][]float64, st *stopper) (int, [][]float64) {
	k := len(P)
	cur := P
	for m := 1; m <= (k-1)*(k-1)+1; m++ {
		st.tick(k * k * k)
		pos := true
		for i := range k {
			for j := range k {
				if cur[i][j] <= 0 {
					pos = false
				}
			}
		}
		if pos {
			return m, cur
		}
		cur = markov.MatMul(cur, P)
	}
	return 0, nil
}

// ErrNoScale is returned (wrapped) by Calibrate when no finite scale reaches ε.
var ErrNoScale = errors.New("no finite per-bin scale reaches the target")

// MessageBound is the scalar recursion's bound on every message of a
// kernel, pair by pair: for M = P (forward) or its time reversal P*
// (backward, stationary start), every message m = M(h∘m'), h ∈ K_{e^ε}
// and m' a message or 1, has m(a)/m(b) ≤ exp λ_M(a, b; A*), A* the least
// fixed point of A = λ_M(A) + ε (docs/math.md §8.4: the spread of h∘m'
// never exceeds A*, and (8.1) bounds the ratio of the means). Package
// tpl/pairwise takes it as a second certificate (docs/math.md §8.11).
type MessageBound struct{ kn *kernel }

// NewMessageBound prepares the bound for the rows of M (nil rows: states
// of zero probability, skipped).
func NewMessageBound(M [][]float64) *MessageBound {
	return &MessageBound{kn: newKernel(rowsOf(M), nil, 0, nil)}
}

// Ratios returns the k×k matrix (row-major) of exp λ_M(a, b; A*) at ε:
// 1 on the diagonal, +Inf for pairs with an undefined row.
func (m *MessageBound) Ratios(eps float64) []float64 {
	kn := m.kn
	k := kn.k
	out := make([]float64, k*k)
	for i := range out {
		out[i] = math.Inf(1)
	}
	A := kn.sup(eps)
	vals, _ := kn.at(A)
	for a := range k {
		out[a*k+a] = 1
	}
	for i, pr := range kn.pairs {
		out[pr.a*k+pr.b] = math.Exp(vals[i])
	}
	return out
}
