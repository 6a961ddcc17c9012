package tpl

// Brute-force checks of the bounds against package exact (docs/math.md
// §8.8): all sequences, the supremum over outputs on the integer grid.
// TPL_SWEEP=1 runs many more random chains.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl/exact"
)

func sweep(n, big int) int {
	if os.Getenv("TPL_SWEEP") != "" {
		return big
	}
	return n
}

// family draws a chain of one of the shapes the comparison must survive.
func family(rng *rand.Rand, k int) (string, [][]float64) {
	switch rng.IntN(6) {
	case 0: // sticky
		P := randomStochastic(rng, k, 1)
		for i := range P {
			s := 0.5 + 0.45*rng.Float64()
			for j := range P[i] {
				P[i][j] *= 1 - s
			}
			P[i][i] += s
		}
		return "sticky", P
	case 1: // anti-correlated / cyclic: mass on the next state
		P := randomStochastic(rng, k, 1)
		for i := range P {
			s := 0.6 + 0.35*rng.Float64()
			for j := range P[i] {
				P[i][j] *= 1 - s
			}
			P[i][(i+1)%k] += s
		}
		return "cyclic", P
	case 2: // sparse: some zeros
		P := randomStochastic(rng, k, 1)
		for i := range P {
			z := rng.IntN(k)
			if P[i][z] < 0.999 {
				rest := 1 - P[i][z]
				P[i][z] = 0
				for j := range P[i] {
					P[i][j] = math.Min(P[i][j]/rest, 1)
				}
			}
		}
		return "sparse", P
	case 3: // near-deterministic
		P := randomStochastic(rng, k, 0.3)
		return "peaked", P
	}
	return "dirichlet", randomStochastic(rng, k, 1)
}

// start draws an initial kind and law; stationary needs a unique π.
func start(rng *rand.Rand, P [][]float64) (*markov.Chain, []float64, string) {
	k := len(P)
	switch rng.IntN(3) {
	case 0:
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err == nil {
			if pi, err := ch.Stationary(); err == nil {
				return ch, pi, "stationary"
			}
		}
		fallthrough
	case 1:
		q := make([]float64, k)
		q[rng.IntN(k)] = 1
		return mustGiven(P, q), q, "vertex"
	}
	q := randomDist(rng, k, 1)
	return mustGiven(P, q), q, "given"
}

func mustGiven(P [][]float64, q []float64) *markov.Chain {
	ch, err := markov.New(nil, P, markov.InitGiven, q)
	if err != nil {
		panic(fmt.Sprintf("P=%v q=%v: %v", P, q, err))
	}
	return ch
}

func randomWidths(rng *rand.Rand, T int) []int {
	var w []int
	for left := T; left > 0; {
		x := 1 + rng.IntN(left)
		w = append(w, x)
		left -= x
	}
	return w
}

func ones(T int) []int {
	w := make([]int, T)
	for i := range w {
		w[i] = 1
	}
	return w
}

func randomMissing(rng *rand.Rand, T int) ([]int, []bool) {
	var list []int
	mask := make([]bool, T)
	for t := range T {
		if rng.IntN(4) == 0 {
			list = append(list, t+1)
			mask[t] = true
		}
	}
	if len(list) == T { // keep one reading
		list, mask[0] = list[1:], false
	}
	return list, mask
}

func classOf(t *testing.T, chs ...*markov.Chain) *markov.Class {
	t.Helper()
	cl, err := markov.NewClass(chs[0].States, chs...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestGridSupremum: random real outputs never beat the grid maximum
// (docs/math.md §8.8), by a direct density computation independent of
// package exact's tables.
func TestGridSupremum(t *testing.T) {
	rng := newRand(3)
	for range sweep(20, 200) {
		k, T := 2+rng.IntN(2), 3
		P := randomStochastic(rng, k, 1)
		q := randomDist(rng, k, 1)
		widths := randomWidths(rng, T)
		b := 0.5 + 2*rng.Float64()
		grid, err := exact.Loss([]exact.Series{{P: P, Q: q}}, widths, b)
		if err != nil {
			t.Fatal(err)
		}
		for range 300 {
			var r [][]float64
			for _, w := range widths {
				v := make([]float64, k)
				for i := range v {
					v[i] = -1 + (float64(w)+2)*rng.Float64()
				}
				r = append(r, v)
			}
			if l := directLoss(P, q, widths, r, b); l > grid+1e-12 {
				t.Fatalf("real output %v: loss %v above the grid maximum %v", r, l, grid)
			}
		}
	}
}

// directLoss is max over t, a ≠ a' of |log p(r|X_t=a) − log p(r|X_t=a')| at
// one real output r, by enumerating the sequences.
func directLoss(P [][]float64, q []float64, widths []int, r [][]float64, b float64) float64 {
	k, T := len(P), 0
	for _, w := range widths {
		T += w
	}
	num := make([][]float64, T)
	den := make([][]float64, T)
	for t := range num {
		num[t], den[t] = make([]float64, k), make([]float64, k)
	}
	x := make([]int, T)
	total := int(math.Pow(float64(k), float64(T)))
	for code := range total {
		c := code
		for s := range x {
			x[s] = c % k
			c /= k
		}
		pr := q[x[0]]
		for s := 1; s < T; s++ {
			pr *= P[x[s-1]][x[s]]
		}
		lik, s := 1.0, 0
		for j, w := range widths {
			cnt := make([]float64, k)
			for range w {
				cnt[x[s]]++
				s++
			}
			for i := range k {
				lik *= math.Exp(-math.Abs(r[j][i]-cnt[i]) / b)
			}
		}
		for s := range T {
			num[s][x[s]] += pr * lik
			den[s][x[s]] += pr
		}
	}
	best := 0.0
	for s := range T {
		for a := range k {
			for a2 := range k {
				if a != a2 && den[s][a] > 0 && den[s][a2] > 0 {
					best = math.Max(best, math.Log(num[s][a]/den[s][a]*den[s][a2]/num[s][a2]))
				}
			}
		}
	}
	return best
}

// TestTwoStateStickyExact: for two states with P(0,0) ≥ P(1,0) and a
// stationary start the recursion equals the exact per-step loss
// (docs/math.md §8.3); with a given start it is an upper bound.
func TestTwoStateStickyExact(t *testing.T) {
	rng := newRand(11)
	for range sweep(25, 300) {
		p00 := rng.Float64()
		p10 := p00 * rng.Float64()
		P := [][]float64{{p00, 1 - p00}, {p10, 1 - p10}}
		ch, q, kind := start(rng, P)
		T := 2 + rng.IntN(5)
		b := 0.7 + 4*rng.Float64()
		stationary := kind == "stationary"
		missList, mask := randomMissing(rng, T)
		eps := make([]float64, T)
		for s := range eps {
			if !mask[s] {
				eps[s] = 2 / b
			}
		}
		r, err := Leakage(ch, eps)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := exact.Loss([]exact.Series{{P: P, Q: q, Missing: mask}}, ones(T), b)
		if err != nil {
			t.Fatal(err)
		}
		if ex > r.Loss+1e-9*math.Max(1, ex) || stationary && math.Abs(r.Loss-ex) > 1e-9*math.Max(1, ex) {
			t.Errorf("P=%v %s q=%v T=%d b=%v missing=%v: recursion %v, exact %v", P, kind, q, T, b, missList, r.Loss, ex)
		}
	}
}

// checkCalibrated calibrates the class and checks, for each series set the
// caller gives, the exact loss at that scale.
func TestCalibratedWindowsWithinEps(t *testing.T) {
	rng := newRand(5)
	n := 0
	for range sweep(60, 1500) {
		k := 2 + rng.IntN(2)
		T := 2 + rng.IntN(6)
		if k == 3 {
			T = 2 + rng.IntN(3)
		}
		name, P := family(rng, k)
		ch, q, kind := start(rng, P)
		missList, mask := randomMissing(rng, T)
		eps := 0.3 + 2.7*rng.Float64()
		b, info, err := Calibrate(classOf(t, ch), T, eps, &Options{Missing: missList})
		if err != nil {
			t.Fatalf("%s %v: %v", name, P, err)
		}
		s := []exact.Series{{P: P, Q: q, Missing: mask}}
		step, err := exact.Loss(s, ones(T), b)
		if err != nil {
			t.Fatal(err)
		}
		widths := randomWidths(rng, T)
		win, err := exact.Loss(s, widths, b)
		if err != nil {
			t.Fatal(err)
		}
		desc := fmt.Sprintf("%s %s P=%v q=%v T=%d widths=%v missing=%v ε=%v b=%v", name, kind, P, q, T, widths, missList, eps, b)
		if step > info.Loss+1e-9 {
			t.Errorf("%s: exact per-step loss %v above the bound %v", desc, step, info.Loss)
		}
		if win > step+1e-9 {
			t.Errorf("%s: windows leak %v, more than single steps %v", desc, win, step)
		}
		if win > eps*(1+1e-9) || step > eps*(1+1e-9) {
			t.Errorf("%s: exact loss %v / %v above ε", desc, step, win)
		}
		n++
	}
	t.Logf("%d chains", n)
}

// TestLargerStates: 4 and 5 states, short series.
func TestLargerStates(t *testing.T) {
	rng := newRand(9)
	for range sweep(8, 80) {
		k := 4 + rng.IntN(2)
		T := 3
		widths := []int{1, 1, 1}
		if k == 5 {
			widths = [][]int{{1, 2}, {2, 1}, {3}}[rng.IntN(3)]
		}
		name, P := family(rng, k)
		ch, q, kind := start(rng, P)
		eps := 0.5 + 2*rng.Float64()
		b, _, err := Calibrate(classOf(t, ch), T, eps, nil)
		if err != nil {
			t.Fatal(err)
		}
		win, err := exact.Loss([]exact.Series{{P: P, Q: q}}, widths, b)
		if err != nil {
			t.Fatal(err)
		}
		if win > eps*(1+1e-9) {
			t.Errorf("%s %s k=%d P=%v widths=%v ε=%v b=%v: exact loss %v", name, kind, k, P, widths, eps, b, win)
		}
	}
}

// TestAnyStart: the "any" bound covers every initial law tried.
func TestAnyStart(t *testing.T) {
	rng := newRand(13)
	for range sweep(15, 200) {
		k := 2 + rng.IntN(2)
		T := 2 + rng.IntN(4)
		if k == 3 {
			T = 2 + rng.IntN(2)
		}
		P := randomStochastic(rng, k, 1)
		ch, _ := markov.New(nil, P, markov.InitAny, nil)
		eps := 0.5 + 2*rng.Float64()
		b, _, err := Calibrate(classOf(t, ch), T, eps, nil)
		if err != nil {
			t.Fatal(err)
		}
		qs := [][]float64{randomDist(rng, k, 1), randomDist(rng, k, 0.2)}
		for v := range k {
			q := make([]float64, k)
			q[v] = 1
			qs = append(qs, q)
		}
		if c, err := markov.New(nil, P, markov.InitStationary, nil); err == nil {
			if pi, err := c.Stationary(); err == nil {
				qs = append(qs, pi)
			}
		}
		widths := randomWidths(rng, T)
		for _, q := range qs {
			l, err := exact.Loss([]exact.Series{{P: P, Q: q}}, widths, b)
			if err != nil {
				t.Fatal(err)
			}
			if l > eps*(1+1e-9) {
				t.Errorf("any start P=%v q=%v widths=%v ε=%v b=%v: exact loss %v", P, q, widths, eps, b, l)
			}
		}
	}
}

// TestClassesAndSeries: a class of two chains, and two independent series
// (each from a chain of the class) pooled into one histogram per window.
func TestClassesAndSeries(t *testing.T) {
	rng := newRand(17)
	for range sweep(12, 150) {
		k, T := 2, 2+rng.IntN(2)
		_, P1 := family(rng, k)
		_, P2 := family(rng, k)
		c1, q1, _ := start(rng, P1)
		c2, q2, _ := start(rng, P2)
		if c1.Init != c2.Init { // the class needs one kind per chain only; mixing is fine
			_ = 0
		}
		eps := 0.5 + 2*rng.Float64()
		cl := classOf(t, c1, c2)
		b, info, err := Calibrate(cl, T, eps, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range []*markov.Chain{c1, c2} {
			bi, _, err := Calibrate(classOf(t, c), T, eps, nil)
			if err != nil {
				t.Fatal(err)
			}
			if bi > b*(1+1e-9) {
				t.Errorf("class scale %v below chain %d's %v", b, i, bi)
			}
		}
		widths := randomWidths(rng, T)
		sets := [][]exact.Series{
			{{P: P1, Q: q1}}, {{P: P2, Q: q2}},
			{{P: P1, Q: q1}, {P: P2, Q: q2}},
			{{P: P1, Q: q1}, {P: P1, Q: q1}},
		}
		for _, s := range sets {
			l, err := exact.Loss(s, widths, b)
			if err != nil {
				t.Fatal(err)
			}
			if l > eps*(1+1e-9) {
				t.Errorf("class %v/%v, %d series, widths %v, ε=%v b=%v (bound %v): exact loss %v", P1, P2, len(s), widths, eps, b, info.Loss, l)
			}
		}
	}
}
