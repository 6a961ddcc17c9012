package pairwise

// Checks of the pairwise bound against the brute force of package
// tpl/exact (docs/math.md §8.8), which shares no code with it: the loss
// at the calibrated scale never exceeds ε, and on chains where the bound
// is tight it exceeds ε at 0.98 of the scale.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl"
	"github.com/pufferfish-privacy/pufferfish/tpl/exact"
)

func mkClass(t testing.TB, kind markov.InitKind, q []float64, Ps ...[][]float64) *markov.Class {
	t.Helper()
	var chains []*markov.Chain
	for _, P := range Ps {
		ch, err := markov.New(nil, P, kind, q)
		if err != nil {
			t.Fatal(err)
		}
		chains = append(chains, ch)
	}
	c, err := markov.NewClass(chains[0].States, chains...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// exactLoss is the brute-force loss of windowed histograms at per-bin
// scale b: the maximum over the class's chains (each with nser series
// from it) and, for "any" start, over the point masses and π.
func exactLoss(t *testing.T, c *markov.Class, widths []int, missing []int, nser int, b float64) float64 {
	t.Helper()
	T := 0
	for _, w := range widths {
		T += w
	}
	var miss []bool
	if len(missing) > 0 {
		miss = make([]bool, T)
		for _, m := range missing {
			miss[m-1] = true
		}
	}
	worst := 0.0
	for _, ch := range c.Chains {
		var starts [][]float64
		switch ch.Init {
		case markov.InitGiven:
			starts = [][]float64{ch.Q}
		default:
			pi, err := ch.Stationary()
			if err != nil {
				t.Fatal(err)
			}
			starts = [][]float64{pi}
			if ch.Init == markov.InitAny {
				for x := range ch.K() {
					e := make([]float64, ch.K())
					e[x] = 1
					starts = append(starts, e)
				}
			}
		}
		for _, q := range starts {
			var ss []exact.Series
			for range nser {
				ss = append(ss, exact.Series{P: ch.P, Q: q, Missing: miss})
			}
			l, err := exact.Loss(ss, widths, b)
			if err != nil {
				t.Fatal(err)
			}
			worst = max(worst, l)
		}
	}
	return worst
}

type oracleCase struct {
	name    string
	Ps      [][][]float64
	kind    markov.InitKind
	q       []float64
	widths  []int
	missing []int
	nser    int
	eps     float64
	tight   bool // the exact loss at 0.98·b exceeds ε
}

func oracleCases() []oracleCase {
	rng := rand.New(rand.NewPCG(33, 8))
	two := [][]float64{{0.8, 0.2}, {0.1, 0.9}}
	cs := []oracleCase{
		{name: "sticky3 per-step", Ps: [][][]float64{sticky3}, kind: markov.InitStationary, widths: []int{1, 1, 1, 1, 1}, nser: 1, eps: 0.5, tight: true},
		{name: "sticky3 windows", Ps: [][][]float64{sticky3}, kind: markov.InitStationary, widths: []int{3, 3}, nser: 1, eps: 0.5},
		{name: "banded4 per-step", Ps: [][][]float64{banded4}, kind: markov.InitStationary, widths: []int{1, 1, 1, 1}, nser: 1, eps: 0.5, tight: true},
		{name: "banded4 window", Ps: [][][]float64{banded4}, kind: markov.InitStationary, widths: []int{2, 2}, nser: 1, eps: 0.5},
		{name: "cyclic3", Ps: [][][]float64{cyclic3}, kind: markov.InitStationary, widths: []int{1, 1, 1, 1, 1}, nser: 1, eps: 1},
		{name: "sticky3 given start", Ps: [][][]float64{sticky3}, kind: markov.InitGiven, q: []float64{0.7, 0.2, 0.1}, widths: []int{1, 1, 1, 1, 1}, nser: 1, eps: 0.5},
		{name: "banded4 any start", Ps: [][][]float64{banded4}, kind: markov.InitAny, widths: []int{1, 1, 1, 1}, nser: 1, eps: 0.5},
		{name: "sticky3 missing", Ps: [][][]float64{sticky3}, kind: markov.InitStationary, widths: []int{1, 1, 1, 1, 1, 1}, missing: []int{2, 5}, nser: 1, eps: 0.5},
		{name: "class of two", Ps: [][][]float64{sticky3, cyclic3}, kind: markov.InitStationary, widths: []int{2, 2}, nser: 1, eps: 0.7},
		{name: "two series", Ps: [][][]float64{two}, kind: markov.InitStationary, widths: []int{2, 2}, nser: 2, eps: 1},
		{name: "two states per-step", Ps: [][][]float64{two}, kind: markov.InitStationary, widths: []int{1, 1, 1, 1, 1, 1}, nser: 1, eps: 1, tight: true},
	}
	for k := 3; k <= 5; k++ {
		T := map[int]int{3: 5, 4: 4, 5: 3}[k]
		w := make([]int, T)
		for i := range w {
			w[i] = 1
		}
		cs = append(cs, oracleCase{name: fmt.Sprintf("random%d", k), Ps: [][][]float64{randChain(rng, k)}, kind: markov.InitStationary, widths: w, nser: 1, eps: 0.8})
		cs = append(cs, oracleCase{name: fmt.Sprintf("random%d wide", k), Ps: [][][]float64{randChain(rng, k)}, kind: markov.InitStationary, widths: []int{T}, nser: 1, eps: 0.8})
	}
	return cs
}

// TestCalibrateFiniteAgainstExact: finite streams (T = the windows'
// total), every start, classes, missing readings, several series.
func TestCalibrateFiniteAgainstExact(t *testing.T) {
	ctx := context.Background()
	for _, tc := range oracleCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := mkClass(t, tc.kind, tc.q, tc.Ps...)
			T := 0
			for _, w := range tc.widths {
				T += w
			}
			b, info, err := Calibrate(ctx, c, T, tc.eps, &Options{Missing: tc.missing})
			if err != nil {
				t.Fatal(err)
			}
			if b > info.Scalar*(1+1e-12) {
				t.Errorf("b %v above the scalar recursion's %v", b, info.Scalar)
			}
			if ex := exactLoss(t, c, tc.widths, tc.missing, tc.nser, b); ex > tc.eps*(1+1e-9) {
				t.Errorf("exact loss %v > ε = %v at the calibrated b = %v", ex, tc.eps, b)
			}
			if tc.tight {
				if ex := exactLoss(t, c, tc.widths, tc.missing, tc.nser, 0.98*b); !(ex > tc.eps) {
					t.Errorf("exact loss %v ≤ ε = %v at 0.98·b = %v: the bound is not tight", ex, tc.eps, 0.98*b)
				}
			}
			// the unbounded stream's scale covers every finite one
			if tc.kind != markov.InitGiven && tc.missing == nil {
				bu, _, err := Calibrate(ctx, c, 0, tc.eps, &Options{ClosedForm: true})
				if err != nil {
					t.Fatal(err)
				}
				if ex := exactLoss(t, c, tc.widths, nil, tc.nser, bu); ex > tc.eps*(1+1e-9) {
					t.Errorf("exact loss %v > ε at the unbounded stream's b = %v", ex, bu)
				}
				if bu < b*(1-1e-6) {
					t.Errorf("unbounded b %v below the finite one %v", bu, b)
				}
			}
		})
	}
}

// TestCalibrateStreamTableChains: the unbounded stationary stream on the
// chains where the exact limit is known (docs/math.md §8.10's table and
// lower bounds): within 2% of the limit, never below the explicit
// output's lower bound.
func TestCalibrateStreamTableChains(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		P     [][]float64
		limit float64
	}{
		{"sticky3", sticky3, 29.285},
		{"banded4", banded4, 49.197},
	} {
		for _, cf := range []bool{true, false} {
			c := mkClass(t, markov.InitStationary, nil, tc.P)
			b, info, err := Calibrate(ctx, c, 0, 0.5, &Options{ClosedForm: cf})
			if err != nil {
				t.Fatal(err)
			}
			lo, err := LowerBound(ctx, tc.P, 0.5, 2)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s closed form %v: b %.5f (lower bound %.5f, scalar %.5f, loss %.12f)", tc.name, cf, b, lo, info.Scalar, info.Loss)
			if b < lo {
				t.Errorf("%s: b %v below the explicit output's lower bound %v", tc.name, b, lo)
			}
			if b > 1.02*tc.limit {
				t.Errorf("%s: b %v more than 2%% above the limit %v", tc.name, b, tc.limit)
			}
			if info.Loss > 0.5*(1-Slack) {
				t.Errorf("%s: certified loss %v > ε", tc.name, info.Loss)
			}
		}
	}
}

// TestTwoStatesEqualScalar: on two-state sticky chains the pairwise bound,
// without the scalar clamp, equals the scalar recursion (docs/math.md
// §8.11), at the scalar recursion's scale.
func TestTwoStatesEqualScalar(t *testing.T) {
	ctx := context.Background()
	for _, P := range [][][]float64{{{0.8, 0.2}, {0.1, 0.9}}, {{0.9, 0.1}, {0.4, 0.6}}, {{0.6, 0.4}, {0.3, 0.7}}} {
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := markov.NewClass(ch.States, ch)
		bs, _, err := tpl.Calibrate(c, 0, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := newChainSolver(ch, false)
		if err != nil {
			t.Fatal(err)
		}
		cs.noClamp = true
		l, _, err := cs.estimate(ctx, 2/bs, false)
		if err != nil {
			t.Fatal(err)
		}
		sc, _ := tpl.Loss(c, 0, bs, nil)
		if math.Abs(l-sc.Loss) > 1e-9 {
			t.Errorf("%v: pairwise %v, scalar %v at b = %v", P, l, sc.Loss, bs)
		}
		// and the finite recursion, T = 6
		r, err := finiteLoss(ctx, ch, []float64{2 / bs, 2 / bs, 2 / bs, 2 / bs, 2 / bs, 2 / bs}, false)
		if err != nil {
			t.Fatal(err)
		}
		sf, _ := tpl.Loss(c, 6, bs, nil)
		if math.Abs(r.Loss-sf.Loss) > 1e-9 {
			t.Errorf("%v: finite pairwise %v, scalar %v", P, r.Loss, sf.Loss)
		}
	}
}

// TestCertify: the inflated fixed point is a certificate, the fixed point
// lowered by 10⁻⁶ is not, and Λ = 1 is not for a correlated chain.
func TestCertify(t *testing.T) {
	ctx := context.Background()
	ch, _ := markov.New(nil, banded4, markov.InitStationary, nil)
	cs, err := newChainSolver(ch, false)
	if err != nil {
		t.Fatal(err)
	}
	cs.noClamp = true
	b := 50.0
	if _, _, err := cs.estimate(ctx, 2/b, false); err != nil {
		t.Fatal(err)
	}
	R := math.Exp(2 / b)
	k := 4
	for _, cf := range []bool{true, false} {
		ok, err := Certify(ctx, banded4, R, inflate(cs.fwd.lam, k, 1e-8), cf)
		if err != nil || !ok {
			t.Errorf("inflated fixed point not certified (closed form %v): %v", cf, err)
		}
	}
	if ok, _ := Certify(ctx, banded4, R, inflate(cs.fwd.lam, k, -1e-6), true); ok {
		t.Error("a matrix below the fixed point was certified")
	}
	if ok, _ := Certify(ctx, banded4, R, ones(k), false); ok {
		t.Error("Λ = 1 certified")
	}
	// a certificate bounds the messages: random products of h ∈ K_R
	lam := inflate(cs.fwd.lam, k, 1e-8)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		m := []float64{1, 1, 1, 1}
		for range 1 + rng.IntN(60) {
			v := make([]float64, k)
			for i := range k {
				h := 1.0
				if rng.IntN(2) == 0 {
					h = R
				}
				v[i] = h * m[i]
			}
			for a := range k {
				m[a] = 0
				for j := range k {
					m[a] += banded4[a][j] * v[j]
				}
			}
		}
		for a := range k {
			for a2 := range k {
				if m[a] > lam[a*k+a2]*m[a2]*(1+1e-12) {
					t.Fatalf("message ratio %v > Λ %v", m[a]/m[a2], lam[a*k+a2])
				}
			}
		}
	}
}

// TestContextStops: a cancelled context stops the calibration, before
// and during the search (51 banded levels take seconds uncancelled).
func TestContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := mkClass(t, markov.InitStationary, nil, sticky3)
	if _, _, err := Calibrate(ctx, c, 0, 0.5, nil); err == nil {
		t.Error("no error with a cancelled context")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c = mkClass(t, markov.InitStationary, nil, meterChain(51))
	if _, _, err := Calibrate(ctx, c, 0, 0.5, &Options{ClosedForm: true}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want the deadline", err)
	}
}
