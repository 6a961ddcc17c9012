package tpl

import (
	"math"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// TestSupDominatesFinite: the unbounded bound is above every finite-T
// bound and their limit (stationary: from below; given start: the tail
// bound of docs/math.md §8.5 stays above the exact recursion).
func TestSupDominatesFinite(t *testing.T) {
	rng := newRand(21)
	for range 30 {
		k := 2 + rng.IntN(3)
		P := randomStochastic(rng, k, 1)
		for _, kind := range []markov.InitKind{markov.InitStationary, markov.InitGiven, markov.InitAny} {
			var q []float64
			if kind == markov.InitGiven {
				q = randomDist(rng, k, 0.3)
			}
			ch, err := markov.New(nil, P, kind, q)
			if err != nil {
				t.Fatal(err)
			}
			e := 0.05 + rng.Float64()
			sup, err := LeakageSup(ch, e)
			if err != nil {
				t.Fatal(err)
			}
			var last float64
			for _, T := range []int{1, 5, 40, 400} {
				eps := make([]float64, T)
				for i := range eps {
					eps[i] = e
				}
				r, err := Leakage(ch, eps)
				if err != nil {
					t.Fatal(err)
				}
				// both are rounded up, by factors that differ by the
				// marginals' propagation (givenErr): ≤ 10⁻¹⁰ relative
				if r.Loss > sup.Loss*(1+1e-10) {
					t.Fatalf("%v P=%v q=%v ε=%v T=%d: finite %v above the supremum %v", kind, P, q, e, T, r.Loss, sup.Loss)
				}
				last = r.Loss
			}
			if kind == markov.InitStationary && math.Abs(last-sup.Loss) > 1e-6*sup.Loss {
				t.Errorf("stationary P=%v ε=%v: T=400 gives %v, supremum %v", P, e, last, sup.Loss)
			}
			if kind == markov.InitGiven && sup.Loss > last*(1+1e-6) && math.Abs(sup.Loss-last) > 1e-9 {
				// the supremum over all t may exceed T=400 only by the tail term
				st, _ := markov.New(nil, P, markov.InitStationary, nil)
				ss, _ := LeakageSup(st, e)
				if sup.Loss > math.Max(last, ss.Loss)*(1+1e-9) {
					t.Errorf("given P=%v q=%v ε=%v: supremum %v above both T=400 %v and the stationary %v", P, q, e, sup.Loss, last, ss.Loss)
				}
			}
		}
	}
}

// TestErrors: bad input is an error naming the field, never a panic.
func TestErrors(t *testing.T) {
	ch, _ := markov.New(nil, chain1, markov.InitStationary, nil)
	cl, _ := markov.NewClass(ch.States, ch)
	per, _ := markov.New(nil, [][]float64{{0, 1}, {1, 0}}, markov.InitGiven, []float64{1, 0})
	pcl, _ := markov.NewClass(per.States, per)
	id, _ := markov.New(nil, [][]float64{{1, 0}, {0, 1}}, markov.InitStationary, nil)
	idcl, _ := markov.NewClass(id.States, id)
	cases := []struct {
		name string
		err  func() error
		want string
	}{
		{"scale", func() error { _, err := Loss(cl, 5, 0, nil); return err }, "scale"},
		{"length", func() error { _, err := Loss(cl, -1, 1, nil); return err }, "length"},
		{"missing range", func() error { _, err := Loss(cl, 5, 1, &Options{Missing: []int{6}}); return err }, "Missing[0]"},
		{"missing unbounded", func() error { _, err := Loss(cl, 0, 1, &Options{Missing: []int{1}}); return err }, "finite"},
		{"epsilon", func() error { _, _, err := Calibrate(cl, 5, -1, nil); return err }, "ε"},
		{"nil class", func() error { _, _, err := Calibrate(nil, 5, 1, nil); return err }, "empty class"},
		{"periodic given unbounded", func() error { _, _, err := Calibrate(pcl, 0, 1, nil); return err }, "primitive"},
		{"identity unbounded", func() error { _, _, err := Calibrate(idcl, 0, 1, nil); return err }, "stationary"},
		{"budget", func() error { _, err := Leakage(ch, []float64{1, math.NaN()}); return err }, "step 2"},
	}
	for _, c := range cases {
		err := c.err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	// A deterministic chain over a finite stream is group privacy: 2T/ε.
	b, _, err := Calibrate(idcl, 4, 1, nil)
	if err == nil {
		t.Logf("identity T=4: b = %v", b)
	}
}

// TestCYXXAboveOurs: the authors' sum of separate maxima is never below the
// pair-inside bound, and equals the port's numbers on the table chains.
func TestCYXXAboveOurs(t *testing.T) {
	rng := newRand(23)
	for range 30 {
		k := 2 + rng.IntN(3)
		P := randomStochastic(rng, k, 1)
		ch, _ := markov.New(nil, P, markov.InitStationary, nil)
		e := 0.05 + rng.Float64()
		T := 1 + rng.IntN(30)
		eps := make([]float64, T)
		for i := range eps {
			eps[i] = e
		}
		ours, _ := Leakage(ch, eps)
		theirs, err := LeakageCYXX(ch, eps, false)
		if err != nil {
			t.Fatal(err)
		}
		if theirs < ours.Loss*(1-1e-12) {
			t.Errorf("P=%v: CYXX %v below ours %v", P, theirs, ours.Loss)
		}
		sup, _ := LeakageSup(ch, e)
		theirsSup, _ := LeakageCYXX(ch, eps[:1], true)
		if theirsSup < sup.Loss*(1-1e-12) {
			t.Errorf("P=%v: CYXX sup %v below ours %v", P, theirsSup, sup.Loss)
		}
	}
	_, rev := stationaryClass(t, chain1)
	ch, _ := markov.New(nil, chain1, markov.InitStationary, nil)
	e := mlTPLConstSup(rev, chain1, 1)
	if v, _ := LeakageCYXX(ch, []float64{e}, true); math.Abs(v-1) > 1e-9 {
		t.Errorf("CYXX sup at the port's budget: %v, want 1", v)
	}
}

// TestClimbEqualsScan: the hill climb of pair.lam finds the same maximum
// as scanning every prefix, for arguments in any order.
func TestClimbEqualsScan(t *testing.T) {
	rng := newRand(29)
	for range 200 {
		k := 2 + rng.IntN(12)
		P := randomStochastic(rng, k, 0.3+rng.Float64())
		kn := newKernel(rowsOf(P), nil, 0, nil)
		for range 30 {
			A := rng.ExpFloat64() * 3
			if rng.IntN(10) == 0 {
				A = math.Inf(1)
			}
			for i := range kn.pairs {
				pr := &kn.pairs[i]
				if got, want := pr.lam(A), pr.lamScan(A); got != want {
					t.Fatalf("P=%v pair %d,%d A=%v: climb %v, scan %v", P, pr.a, pr.b, A, got, want)
				}
			}
		}
	}
}
