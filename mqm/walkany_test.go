package mqm

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// The "any" walk with stationary lower bounds (walkAny) returns exactly the
// σ_max of the full search on random chains, k ≤ 8, T ≤ 300: dense, sparse
// and sticky (slow-mixing, where N_i stays far above N_π for long).
func TestWalkAnyEqualsFullSearch(t *testing.T) {
	// search tries the plain walk first and switches to walkAny when the
	// walk's budget runs out: force the switch at once, then at a budget
	// some chains exhaust mid-walk.
	defer func(w float64) { anyWalkWork = w }(anyWalkWork)
	for _, work := range []float64{0, 2000} {
		anyWalkWork = work
		t.Run(fmt.Sprint("work ", work), testWalkAny)
	}
}

func testWalkAny(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	used := 0
	for trial := range 48 {
		k := 2 + trial%7
		T := []int{20, 60, 150}[trial%3]
		if k <= 3 && trial%4 == 0 {
			T = 300
		}
		eps := []float64{0.3, 1, 2.5, 6}[trial%4]
		P := randomChain(rng, k, []float64{0, 0.4}[trial%2])
		if trial%3 == 2 { // sticky
			for x := range P {
				for y := range P[x] {
					P[x][y] *= 0.1
				}
				P[x][x] += 0.9
			}
		}
		ch, err := markov.New(nil, P, markov.InitAny, nil)
		if err != nil {
			t.Fatal(err)
		}
		mk := func() *exactOracle { o, _ := newExactOracle(ch, T); return o }
		o := mk()
		if _, ok := anyBound(o, T); ok {
			used++
		}
		full := fullSearch(mk(), T, eps)
		fast := search(o, T, eps)
		if full.sigma != fast.sigma {
			t.Fatalf("trial %d k=%d T=%d ε=%v: walk σ=%v (node %d %v), full σ=%v (node %d %v)", trial, k, T, eps, fast.sigma, fast.node, fast.quilt, full.sigma, full.node, full.quilt)
		}
	}
	if used < 30 {
		t.Fatalf("the stationary lower bound applied in only %d of 48 trials", used)
	}
}

// The bound the walk rests on: N_i ≥ N_π, so every "any" influence is at
// least the stationary one for the same distances.
func TestAnyInfluenceDominatesStationary(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	checked := 0
	for trial := range 20 {
		k := 2 + trial%5
		P := randomChain(rng, k, 0.3)
		anyC, _ := markov.New(nil, P, markov.InitAny, nil)
		stC, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			continue
		}
		T := 40
		ao, _ := newExactOracle(anyC, T)
		so, _ := newExactOracle(stC, T)
		checked++
		for i := 2; i <= 30; i += 3 {
			for a := 1; a < i; a += 2 {
				for b := 1; b <= T-i; b += 3 {
					if ea, es := ao.eval(i, a, b, false, false), so.two(a, b); ea < es-1e-12 {
						t.Fatalf("trial %d i=%d a=%d b=%d: any %v < stationary %v", trial, i, a, b, ea, es)
					}
				}
				if ea, es := ao.eval(i, a, 0, false, true), so.leftOnly(a); ea < es-1e-12 {
					t.Fatalf("trial %d i=%d a=%d: left-only any %v < stationary %v", trial, i, a, ea, es)
				}
			}
		}
	}
	if checked < 15 {
		t.Fatalf("only %d chains checked", checked)
	}
}

// A walk whose oracle runs out of budget gives no answer (partial), never
// the best of a node search cut short.
func TestWalkOverBudgetIsPartial(t *testing.T) {
	ch, err := markov.New(nil, [][]float64{{0.99, 0.01}, {0.02, 0.98}}, markov.InitAny, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := newExactOracle(ch, 1000)
	o.budget = 3
	if r := walk(o, 1000, 1); !r.partial {
		t.Fatalf("walk over budget answered σ = %v", r.sigma)
	}
	o.budget = 0
	if r := walk(o, 1000, 1); r.partial || r.sigma <= 0 {
		t.Fatalf("unbudgeted walk: %+v", r)
	}
}

// Shared tables answer like a fresh Influence call for every quilt, in any
// order: bit for bit for stationary and "any" chains, within rounding for
// a fixed start (its marginals are computed by other paths).
func TestTablesInfluenceEqualsInfluence(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for trial := range 30 {
		k := 2 + trial%5
		P := randomChain(rng, k, []float64{0, 0.3}[trial%2])
		kind := []markov.InitKind{markov.InitStationary, markov.InitAny, markov.InitGiven}[trial%3]
		var q []float64
		if kind == markov.InitGiven {
			q = randomDist(rng, k)
		}
		ch, err := markov.New(nil, P, kind, q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Stationary(); kind == markov.InitStationary && err != nil {
			continue
		}
		f := NewTables()
		for range 40 {
			i := 1 + rng.IntN(60)
			a, b := rng.IntN(i), rng.IntN(30)
			got, err1 := f.Influence(ch, i, a, b)
			want, err2 := Influence(ch, i, a, b)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("trial %d: errors %v / %v", trial, err1, err2)
			}
			ok := got == want
			if kind == markov.InitGiven {
				ok = near(got, want, 1e-12)
			}
			if !ok {
				t.Fatalf("trial %d %v (%d, %d, %d): shared %v, fresh %v", trial, kind, i, a, b, got, want)
			}
		}
	}
}

// Shared tables answer every ScaleAt call as a fresh search does —
// consecutive segments, later starts and missing readings; stationary,
// "any" and fixed starts; from several goroutines at once.
func TestTablesEqualScaleAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	var class []*markov.Chain
	for c := range 3 {
		P := randomChain(rng, 2+c, 0.2)
		var q []float64
		kind := []markov.InitKind{markov.InitStationary, markov.InitAny, markov.InitGiven}[c]
		if kind == markov.InitGiven {
			q = randomDist(rng, 2+c)
		}
		ch, err := markov.New(nil, P, kind, q)
		if err != nil {
			t.Fatal(err)
		}
		class = append(class, ch)
	}
	var obs []Observation
	for range 12 {
		start, n := 1+rng.IntN(20), 2+rng.IntN(40)
		if rng.IntN(2) == 0 {
			obs = append(obs, Consecutive(start, n))
			continue
		}
		times := []int{start}
		for len(times) < n {
			times = append(times, times[len(times)-1]+1+rng.IntN(3))
		}
		ob, err := At(times)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, ob)
	}
	tables := NewTables()
	var wg sync.WaitGroup
	for _, ch := range class {
		cl, err := markov.NewClass(ch.States, ch)
		if err != nil {
			t.Fatal(err)
		}
		for _, ob := range obs {
			wg.Go(func() {
				for _, eps := range []float64{0.5, 2} {
					got, err1 := tables.ScaleAt(cl, ob, eps, Exact)
					want, err2 := ScaleAt(cl, ob, eps, Exact)
					if (err1 == nil) != (err2 == nil) {
						t.Errorf("%v %+v: errors %v / %v", ch.Init, ob, err1, err2)
						return
					}
					ok := got.Sigma == want.Sigma
					if ch.Init == markov.InitGiven {
						ok = near(got.Sigma, want.Sigma, 1e-12)
					}
					if !ok {
						t.Errorf("%v %+v ε=%v: shared σ %v, fresh %v", ch.Init, ob, eps, got.Sigma, want.Sigma)
					}
				}
			})
		}
	}
	wg.Wait()
}
