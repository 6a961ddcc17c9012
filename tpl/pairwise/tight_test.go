package pairwise

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// The calibration's Newton-certified scale is as tight as the LP map
// allows: at the returned b, the LP map's fixed point found by plain
// value iteration (an estimate, independent of Newton's method) loses at
// least 0.9999·ε, on 60 random dense, banded and sparse chains — the
// certificate gives away at most 10⁻⁴ of the limit of its map.
func TestNewtonCalibrationIsTight(t *testing.T) {
	noFunctional = true // the plans' certificates alone
	defer func() { noFunctional = false }()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 35))
	worst := 1.0
	for n := range 60 {
		k := 3 + rng.IntN(10)
		var P [][]float64
		switch n % 3 {
		case 0:
			P = randChain(rng, k)
		case 1:
			P = banded(k, 1+rng.IntN(3), 0.2+0.6*rng.Float64())
		default:
			P = randChain(rng, k)
			for i := range P { // sparsify
				for j := range P[i] {
					if i != j && rng.Float64() < 0.4 {
						P[i][j] = 0
					}
				}
			}
			P = normalise(P)
		}
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			continue
		}
		c, _ := markov.NewClass(ch.States, ch)
		eps := []float64{0.5, 1, 2}[rng.IntN(3)]
		b, info, err := Calibrate(ctx, c, 0, eps, nil)
		if err != nil {
			t.Logf("chain %d k %d: %v", n, k, err)
			continue
		}
		// the LP map's fixed point by value iteration at b (an estimate)
		cs, _ := newChainSolver(ch, true)
		e := 2 / b
		cs.setScale(e)
		ok := true
		for _, s := range cs.sides() {
			if _, err := s.solve(ctx, bestPlan, math.Exp(e), math.Inf(1)); err != nil {
				ok = false
			}
		}
		if !ok {
			t.Logf("chain %d: VI failed", n)
			continue
		}
		var lb []float64
		if cs.bwd != nil {
			lb = cs.bwd.lam
		}
		l, _, _ := cs.lossOf(cs.fwd.lam, lb, e)
		ratio := l / eps
		if b >= info.Scalar*(1-1e-9) {
			continue // the scalar bound is the smaller here
		}
		worst = min(worst, ratio)
		if ratio < 0.9999 || ratio > 1 {
			t.Errorf("chain %d (k %d, kind %d, ε %v): b %.6g (closed form %.6g): the LP map's fixed point loses %.6f·ε there", n, k, n%3, eps, b, info.ClosedForm, ratio)
		}
	}
	t.Logf("least ratio %.6f", worst)
}

// On a slowly mixing banded chain whose closed-form search certifies
// nothing, the LPs by Newton's method certify a scale within 1% of an
// explicit output's limit, and never below it.
func TestNewtonBandedNearTheLimit(t *testing.T) {
	ctx := context.Background()
	P := banded(22, 3, 0.5)
	ch, err := markov.New(nil, P, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := markov.NewClass(ch.States, ch)
	b, info, err := Calibrate(ctx, c, 0, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	lo, err := LowerBound(ctx, P, 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b < lo || b > 1.01*lo {
		t.Fatalf("b %v (closed form %v), explicit output's limit %v", b, info.ClosedForm, lo)
	}
	t.Logf("b %.6g, closed form %.6g, limit ≥ %.6g", b, info.ClosedForm, lo)
}
