package pairwise

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Newton's method (docs/math.md §8.11) finds the same fixed point as the
// value iteration of the LP map it replaces, on random dense chains, both
// directions, at several budgets, in a few LP sweeps; and the plans it
// stores certify the estimate at a slightly smaller budget (the
// calibration's κ). Chains with zeros (banded) are
// TestNewtonFallsBackOnZeros'.
func TestNewtonMatchesValueIteration(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 35))
	var chains [][][]float64
	for range 4 {
		chains = append(chains, randChain(rng, 5+rng.IntN(6)))
	}
	for n, P := range chains {
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []float64{0.02, 0.1} {
			R := math.Exp(e)
			vi, err := newChainSolver(ch, true)
			if err != nil {
				t.Fatal(err)
			}
			nt, _ := newChainSolver(ch, true)
			for i, s := range vi.sides() {
				if _, err := s.solve(ctx, bestPlan, R, math.Inf(1)); err != nil {
					t.Fatalf("chain %d e %v: value iteration: %v", n, e, err)
				}
				sn := nt.sides()[i]
				if _, err := sn.solve(ctx, cfMap, R, math.Inf(1)); err != nil {
					t.Fatal(err)
				}
				sweeps, err := sn.newtonSolve(ctx, R, math.Inf(1))
				if err != nil {
					t.Fatalf("chain %d e %v side %d: Newton: %v", n, e, i, err)
				}
				worst := 0.0
				for j, v := range s.lam {
					if !math.IsInf(v, 1) {
						worst = max(worst, math.Abs(math.Log(sn.lam[j]/v)))
					}
				}
				if worst > 1e-7 {
					t.Errorf("chain %d e %v side %d: Newton differs from value iteration by %.3g (log)", n, e, i, worst)
				}
				if sweeps > 8 {
					t.Errorf("chain %d e %v side %d: Newton took %d LP sweeps", n, e, i, sweeps)
				}
				// certified, with the stored plans, at R^(1/(1+κ))
				ok := false
				for kap := 1e-5; kap < 1e-2 && !ok; kap *= 4 {
					for delta := 1e-10; delta < 1e-6 && !ok; delta *= 4 {
						ok, err = certify(ctx, sn.kn, math.Exp(e/(1+kap)), inflate(sn.lam, sn.kn.k, delta), nil, sn.plans.phi)
						if err != nil {
							t.Fatal(err)
						}
					}
				}
				if !ok {
					t.Errorf("chain %d e %v side %d: Newton's estimate not certified", n, e, i)
				}
			}
		}
	}
}

// On chains with zeros Newton's linear systems can be singular (plans
// without diagonal mass); the estimate of a small chain then falls back to
// the value iteration and still finds the LP map's fixed point.
func TestNewtonFallsBackOnZeros(t *testing.T) {
	ctx := context.Background()
	for n, P := range [][][]float64{banded(9, 2, 0.5), banded(12, 3, 0.3)} {
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := 0.05
		vi, _ := newChainSolver(ch, true)
		nt, _ := newChainSolver(ch, true)
		for i, s := range vi.sides() {
			if _, err := s.solve(ctx, bestPlan, math.Exp(e), math.Inf(1)); err != nil {
				t.Fatal(err)
			}
			_ = i
		}
		if _, _, err := nt.estimate(ctx, e, true); err != nil {
			t.Fatalf("chain %d: %v", n, err)
		}
		for i, s := range vi.sides() {
			for j, v := range s.lam {
				if !math.IsInf(v, 1) && math.Abs(math.Log(nt.sides()[i].lam[j]/v)) > 1e-7 {
					t.Fatalf("chain %d side %d pair %d: %v, value iteration %v", n, i, j, nt.sides()[i].lam[j], v)
				}
			}
		}
	}
}

// A calibration stops with ErrWork once its work passes Options.MaxWork
// (a slowly mixing banded chain, whose closed-form search certifies
// nothing for a long time), and a limit it stays within changes nothing.
func TestMaxWorkStops(t *testing.T) {
	ctx := context.Background()
	ch, err := markov.New(nil, meterChain(51), markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := markov.NewClass(ch.States, ch)
	_, _, err = Calibrate(ctx, c, 0, 0.5, &Options{MaxWork: 1e8})
	if !errors.Is(err, ErrWork) {
		t.Fatalf("banded 51 at MaxWork 1e8: %v, want ErrWork", err)
	}
	rng := rand.New(rand.NewPCG(3, 35))
	ch2, _ := markov.New(nil, randChain(rng, 8), markov.InitStationary, nil)
	c2, _ := markov.NewClass(ch2.States, ch2)
	b1, _, err1 := Calibrate(ctx, c2, 0, 0.5, nil)
	b2, _, err2 := Calibrate(ctx, c2, 0, 0.5, &Options{MaxWork: 1e12})
	if err1 != nil || err2 != nil || b1 != b2 {
		t.Fatalf("within the limit: %v %v, %v %v", b1, err1, b2, err2)
	}
}
