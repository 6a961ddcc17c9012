package pairwise

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl"
)

// TestFiniteFunctionalIsExact: the functional recursion's loss of T
// per-step releases (docs/math.md §8.12, finite streams) against the
// exact loss by enumeration (internal/brute): never below it, and for a
// stationary or given start equal to it within 10⁻⁶ (the per-step bound
// is attained by one output: the bang-bang likelihoods of every step), on
// random chains of 2–4 states, 2–6 readings, some missing; for "any"
// start never below the exact loss of several starts.
func TestFiniteFunctionalIsExact(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 60 {
		k := 2 + rng.IntN(3)
		T := 2 + rng.IntN(5)
		switch k { // the grid has 2^{kT}·k^T points
		case 3:
			T = min(T, 4)
		case 4:
			T = min(T, 3)
		}
		P := make([][]float64, k)
		for i := range P {
			P[i] = make([]float64, k)
			s := 0.0
			for j := range P[i] {
				P[i][j] = rng.Float64()
				if trial%5 == 0 && rng.IntN(3) == 0 && i != j {
					P[i][j] = 0 // zeros in P
				}
				s += P[i][j]
			}
			for j := range P[i] {
				P[i][j] /= s
			}
		}
		var missing []int
		if trial%3 == 1 {
			missing = []int{rng.IntN(T)}
		}
		b := 0.5 + 3*rng.Float64()
		eps := make([]float64, T)
		for i := range eps {
			eps[i] = 2 / b
		}
		for _, m := range missing {
			eps[m] = 0
		}
		kinds := []markov.InitKind{markov.InitStationary, markov.InitGiven, markov.InitAny}
		kind := kinds[trial%3]
		var q []float64
		if kind == markov.InitGiven {
			q = make([]float64, k)
			s := 0.0
			for i := range q {
				q[i] = rng.Float64()
				if trial%2 == 0 && i == 0 {
					q[i] = 0 // a state impossible at the start
				}
				s += q[i]
			}
			for i := range q {
				q[i] /= s
			}
		}
		ch, err := markov.New(nil, P, kind, q)
		if err != nil || kind == markov.InitStationary && !ch.Irreducible() {
			continue // no single stationary law: the plans' recursion
		}
		r, _, ok, err := fnFiniteLoss(ctx, ch, eps, 0)
		if err != nil || !ok {
			t.Fatalf("trial %d: ok %v, %v", trial, ok, err)
		}
		starts := [][]float64{q}
		switch kind {
		case markov.InitStationary:
			pi, _ := markov.StationaryGTH(ctx, P)
			starts = [][]float64{pi}
		case markov.InitAny:
			starts = nil
			for x := range k {
				e := make([]float64, k)
				e[x] = 1
				starts = append(starts, e)
			}
			u := make([]float64, k)
			for x := range u {
				u[x] = 1 / float64(k)
			}
			starts = append(starts, u)
		}
		ones := make([]int, T)
		for i := range ones {
			ones[i] = 1
		}
		worst := 0.0
		for _, s := range starts {
			ex, _, _, _, err := brute.Loss(brute.Chain{Q: s, P: P, T: T}, brute.Windows(k, T, ones, missing, []float64{b}))
			if err != nil {
				t.Fatal(err)
			}
			worst = max(worst, ex)
		}
		if r.Loss < worst*(1-1e-12) {
			t.Fatalf("trial %d (k %d, T %d, %v, missing %v): bound %.12g below the exact loss %.12g", trial, k, T, kind, missing, r.Loss, worst)
		}
		// the certificate's (1 + η), η = 10⁻⁷, on each side: 2·10⁻⁷ more
		if kind != markov.InitAny && r.Loss-worst > 1e-6*(1+worst) {
			t.Errorf("trial %d (k %d, T %d, %v, missing %v): bound %.12g, exact %.12g: not tight", trial, k, T, kind, missing, r.Loss, worst)
		}
	}
}

// TestFiniteUnderflowIsAnyStart: a state reachable from the start only
// through probabilities whose product underflows (10⁻²⁰⁰·10⁻²⁰⁰) has a
// computed probability of 0 at step 3, yet it is possible and its pairs
// are secrets: a given start is then bounded as "any" start, never by
// dropping them.
func TestFiniteUnderflowIsAnyStart(t *testing.T) {
	P := [][]float64{{1, 1e-200, 0}, {0.7, 0.3, 1e-200}, {0.2, 0.5, 0.3}}
	given, err := markov.New(nil, P, markov.InitGiven, []float64{1, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	any, _ := markov.New(nil, P, markov.InitAny, nil)
	if !tpl.Underflows(P, given.Q, 3) || tpl.Underflows(P, given.Q, 2) {
		t.Fatal("the underflow at step 3 is not seen, or seen at 2")
	}
	eps := []float64{0.5, 0.5, 0.5}
	if _, _, ok, err := fnFiniteLoss(context.Background(), given, eps, 0); ok || err != nil {
		t.Fatalf("the given start was bounded (%v)", err)
	}
	ca, _ := markov.NewClass(any.States, any)
	cg, _ := markov.NewClass(given.States, given)
	ra, err := Loss(context.Background(), ca, 3, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	rg, err := Loss(context.Background(), cg, 3, 4, nil)
	if err != nil || rg.Loss != ra.Loss {
		t.Fatalf("given start %v (%v), want the any start's %v", rg.Loss, err, ra.Loss)
	}
	// the scalar recursion too
	sa, err := tpl.Leakage(any, eps)
	if err != nil {
		t.Fatal(err)
	}
	if sg, err := tpl.Leakage(given, eps); err != nil || sg.Loss != sa.Loss {
		t.Fatalf("scalar: given start %v (%v), want the any start's %v", sg.Loss, err, sa.Loss)
	}
}

// TestFiniteWorkLimit: one finite evaluation takes at most 1/64 of the
// caller's limit (a calibration bisects over about 40 of them), so the
// recursion stands aside for a limit it could not keep.
func TestFiniteWorkLimit(t *testing.T) {
	P := [][]float64{{.7, .25, .05}, {.05, .7, .25}, {.25, .05, .7}}
	ch, _ := markov.New(nil, P, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	eps := make([]float64, 20)
	for i := range eps {
		eps[i] = 0.1
	}
	// 16·T²·k³(k−1) = 16·400·54 ≈ 3.5·10⁵ estimated
	if _, _, ok, _ := fnFiniteLoss(context.Background(), ch, eps, 3e5); ok {
		t.Fatal("ran over a limit below its estimate")
	}
	r, err := Loss(context.Background(), class, 20, 20, &Options{MaxWork: 64 * 3e5})
	if err != nil || r.Functional {
		t.Fatalf("Loss under a limit of 64 × 3·10⁵: functional %v (%v), want the plans' recursion", r.Functional, err)
	}
	if r, err := Loss(context.Background(), class, 20, 20, &Options{MaxWork: 64 * 4e5}); err != nil || !r.Functional {
		t.Fatalf("Loss under a limit of 64 × 4·10⁵: functional %v (%v)", r.Functional, err)
	}
}
