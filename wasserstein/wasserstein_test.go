package wasserstein

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/framework"
)

func r(a, b int64) *big.Rat { return big.NewRat(a, b) }

func rats(v ...int64) []*big.Rat {
	out := make([]*big.Rat, len(v))
	for i, x := range v {
		out[i] = r(x, 1)
	}
	return out
}

// TestFluExample is [SWC17] §3: P(N | X_i = 0) puts 1/2 on 0 and 1/6 on
// each of 1, 2, 3; P(N | X_i = 1) is uniform on 1..4. W = 2, while group DP
// on the 4-clique needs sensitivity 4.
func TestFluExample(t *testing.T) {
	mu := Dist{X: rats(0, 1, 2, 3), W: []*big.Rat{r(1, 2), r(1, 6), r(1, 6), r(1, 6)}}
	nu := Dist{X: rats(1, 2, 3, 4), W: []*big.Rat{r(1, 4), r(1, 4), r(1, 4), r(1, 4)}}
	w, err := WInf(mu, nu)
	if err != nil {
		t.Fatal(err)
	}
	if w.Cmp(r(2, 1)) != 0 {
		t.Fatalf("W = %s, want 2", w.RatString())
	}
	// The same conditionals as a one-record "framework" through the vector
	// (max-flow) path agree.
	wv, err := WInfL1(VDist{X: col(mu.X), W: mu.W}, VDist{X: col(nu.X), W: nu.W}, nil)
	if err != nil || wv.Cmp(w) != 0 {
		t.Fatalf("flow path: %v, %v", wv, err)
	}
}

// TestFluNotRealisable documents that no joint distribution of four flu
// statuses has [SWC17]'s conditionals for every person: for N = Σ X_i any
// joint satisfies E[N²] = Σ_i P(X_i=1)·E[N | X_i=1] and E[N] = Σ_i P(X_i=1),
// which force P(X_i = 1) = 2/5 and then E[N²] = 4, while the conditionals
// give E[N²] = 3/5·14/6 + 2/5·30/4 = 22/5.
func TestFluNotRealisable(t *testing.T) {
	c1 := r(2, 5) // from E[N] = 4c1 = (1−c1)·1 + c1·5/2
	if lhs, rhs := new(big.Rat).Mul(r(4, 1), c1), new(big.Rat).Add(new(big.Rat).Sub(r(1, 1), c1), new(big.Rat).Mul(c1, r(5, 2))); lhs.Cmp(rhs) != 0 {
		t.Fatalf("E[N] equation: %s vs %s", lhs.RatString(), rhs.RatString())
	}
	viaSum := new(big.Rat).Mul(new(big.Rat).Mul(r(4, 1), c1), r(5, 2))
	viaCond := new(big.Rat).Add(new(big.Rat).Mul(r(3, 5), r(14, 6)), new(big.Rat).Mul(r(2, 5), r(30, 4)))
	if viaSum.Cmp(viaCond) == 0 {
		t.Fatal("the conditionals would be consistent")
	}
}

// TestFluFramework runs the mechanism on a realisable flu model on a
// 4-clique (testdata/flu.json: each person infected from outside with
// probability 1/2; if anyone was, each other person catches it with
// probability 1/4). By hand: P(N | Alice = 0) has CDF 4/25, 73/200, 307/400, 1
// at N = 0..3 and P(N | Alice = 1) has CDF 9/208, 63/208, 3/4, 1 at N = 1..4;
// the quantile coupling pairs 0↔2, 1↔3 and 2↔4 (distance 2) and nothing
// farther: W = 2, group DP 4 — [SWC17]'s numbers. The released scale is ε-Pufferfish by brute force.
func TestFluFramework(t *testing.T) {
	fh, err := os.Open("../framework/testdata/flu.json")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, _, err := framework.Parse(fh, "flu.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Parameter(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	gs, groups := f.GroupSensitivity()
	if gs.Cmp(r(4, 1)) != 0 || len(groups) != 1 {
		t.Fatalf("group sensitivity %s over %v, want 4 over one group", gs.RatString(), groups)
	}
	if res.W.Cmp(r(2, 1)) != 0 {
		t.Fatalf("W = %s, want 2 (group DP %s)", res.W.RatString(), gs.RatString())
	}
	for _, eps := range []float64{0.1, 1, 3} {
		b, _ := res.Sigma(eps)
		loss, _, _, err := f.MechanismLoss(b)
		if err != nil {
			t.Fatal(err)
		}
		if loss > eps*(1+1e-12) {
			t.Fatalf("ε = %g: loss %g", eps, loss)
		}
	}
}

func col(x []*big.Rat) [][]*big.Rat {
	out := make([][]*big.Rat, len(x))
	for i, v := range x {
		out[i] = []*big.Rat{v}
	}
	return out
}

func randDist(rng *rand.Rand, maxAtoms, span int) Dist {
	n := 1 + rng.IntN(maxAtoms)
	d := Dist{}
	for range n {
		d.X = append(d.X, r(int64(rng.IntN(span)), int64(1+rng.IntN(2))))
		d.W = append(d.W, r(int64(rng.IntN(5)), 1))
	}
	d.W[0].Add(d.W[0], r(1, 1))
	return d
}

// TestQuantileAgainstFlow compares the quantile-coupling merge (and the
// greedy trimmed search) with the exact max-flow definition of the bottleneck
// transport, on random distributions with ties, zero weights and repeated
// atoms.
func TestQuantileAgainstFlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 400 {
		mu, nu := randDist(rng, 6, 9), randDist(rng, 6, 9)
		w, err := WInf(mu, nu)
		if err != nil {
			t.Fatal(err)
		}
		wf, err := WInfL1(VDist{col(mu.X), mu.W}, VDist{col(nu.X), nu.W}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if w.Cmp(wf) != 0 {
			t.Fatalf("trial %d: quantile %s, flow %s", trial, w.RatString(), wf.RatString())
		}
		delta := r(int64(rng.IntN(9)), 10)
		tw, err := Trimmed(mu, nu, delta)
		if err != nil {
			t.Fatal(err)
		}
		tf, err := WInfL1(VDist{col(mu.X), mu.W}, VDist{col(nu.X), nu.W}, delta)
		if err != nil {
			t.Fatal(err)
		}
		if tw.Cmp(tf) != 0 {
			t.Fatalf("trial %d δ=%s: greedy %s, flow %s", trial, delta.RatString(), tw.RatString(), tf.RatString())
		}
		if tw.Cmp(w) > 0 {
			t.Fatalf("trimming increased W")
		}
	}
}

// TestTrimmedAppendixExample is [SWC16] App. A.4's motivating case made
// discrete: W∞ is large only because of a δ-tail, and the trimmed W is 0.
func TestTrimmedAppendixExample(t *testing.T) {
	d := r(1, 100)
	mu := Dist{X: rats(0, 100), W: []*big.Rat{new(big.Rat).Sub(r(1, 1), d), d}}
	nu := Dist{X: rats(0, 2), W: []*big.Rat{new(big.Rat).Sub(r(1, 1), d), d}}
	w, _ := WInf(mu, nu)
	tw, err := Trimmed(mu, nu, d)
	if err != nil {
		t.Fatal(err)
	}
	if w.Cmp(r(98, 1)) != 0 || tw.Sign() != 0 {
		t.Fatalf("W = %s, trimmed %s", w.RatString(), tw.RatString())
	}
	// Removing mass from the middle can beat trimming tails only.
	mu = Dist{X: rats(0, 100, 200), W: []*big.Rat{r(45, 100), r(10, 100), r(45, 100)}}
	nu = Dist{X: rats(0, 200), W: []*big.Rat{r(1, 2), r(1, 2)}}
	if tw, _ = Trimmed(mu, nu, r(1, 10)); tw.Sign() != 0 {
		t.Fatalf("middle trim: %s", tw.RatString())
	}
}

// TestFloatPathIsUpperBound checks WInfFloat ≥ exact W∞, and equal on
// inputs with dyadic weights where the float sums are exact.
func TestFloatPathIsUpperBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		mk := func() (Dist, FloatDist) {
			n := 1 + rng.IntN(8)
			units := make([]int, n)
			left := 64
			for i := range n - 1 {
				units[i] = rng.IntN(left + 1)
				left -= units[i]
			}
			units[n-1] = left
			var d Dist
			var fd FloatDist
			x := 0.0
			for i := range n {
				x += float64(rng.IntN(4)) * 0.25
				d.X = append(d.X, new(big.Rat).SetFloat64(x))
				d.W = append(d.W, r(int64(units[i]), 64))
				fd.X = append(fd.X, x)
				fd.W = append(fd.W, float64(units[i])/64)
			}
			return d, fd
		}
		mu, fmu := mk()
		nu, fnu := mk()
		w, err := WInf(mu, nu)
		if err != nil {
			t.Fatal(err)
		}
		wf, err := WInfFloat(fmu, fnu)
		if err != nil {
			t.Fatal(err)
		}
		we, _ := w.Float64()
		if wf < we {
			t.Fatalf("float %g below exact %g", wf, we)
		}
	}
	if _, err := WInfFloat(FloatDist{X: []float64{0, 1}, W: []float64{0.5, 0.4}}, FloatDist{X: []float64{0}, W: []float64{1}}); err == nil {
		t.Fatal("weights summing to 0.9 accepted")
	}
}

// randomFramework draws a framework whose records split into random groups,
// independent across groups, each group with a random joint (with zeros),
// and returns it with the group sizes.
func randomFramework(t *testing.T, rng *rand.Rand, query string) *framework.Framework {
	t.Helper()
	n, k := 1+rng.IntN(4), 2+rng.IntN(2)
	domain := make([]*big.Rat, k)
	for i := range domain {
		domain[i] = r(int64(i*(1+rng.IntN(2))), 1)
	}
	for i := 1; i < k; i++ {
		if domain[i].Cmp(domain[i-1]) <= 0 {
			domain[i] = new(big.Rat).Add(domain[i-1], r(1, 1))
		}
	}
	var q framework.Query
	switch query {
	case "sum":
		q = framework.Sum(domain)
	case "count":
		q = framework.Count(0, "0")
	default:
		q = framework.Histogram(k)
	}
	var thetas []framework.Theta
	perm := rng.Perm(n)
	cut := 1 + rng.IntN(n)
	groups := [][]int{perm[:cut], perm[cut:]}
	for range 1 + rng.IntN(2) {
		// one random joint per group, then the product
		gj := make([]map[int]*big.Rat, 2)
		for gi, g := range groups {
			gj[gi] = map[int]*big.Rat{}
			size := 1
			for range g {
				size *= k
			}
			var tot int64
			w := make([]int64, size)
			for a := range w {
				if rng.IntN(4) > 0 {
					w[a] = rng.Int64N(6) + 1
				}
				tot += w[a]
			}
			if tot == 0 {
				w[0], tot = 1, 1
			}
			for a := range w {
				gj[gi][a] = r(w[a], tot)
			}
		}
		var atoms []framework.Atom
		total := 1
		for range n {
			total *= k
		}
		for code := range total {
			x := make([]int, n)
			c := code
			for i := range x {
				x[i] = c % k
				c /= k
			}
			p := r(1, 1)
			for gi, g := range groups {
				a := 0
				for _, i := range g {
					a = a*k + x[i]
				}
				p.Mul(p, gj[gi][a])
			}
			atoms = append(atoms, framework.Atom{X: x, P: p})
		}
		thetas = append(thetas, framework.Theta{Atoms: atoms})
	}
	names := make([]string, n)
	for i := range names {
		names[i] = string(rune('A' + i))
	}
	f, err := framework.New(names, domain, thetas, nil, q)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTheorem33 is [SWC17] Theorem 3.3 as a property: W never exceeds the
// group-DP global sensitivity, over random frameworks and all three queries.
func TestTheorem33(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 150 {
		for _, q := range []string{"sum", "count", "histogram"} {
			f := randomFramework(t, rng, q)
			res, err := Parameter(f, nil)
			if err != nil {
				continue // every secret of some pair impossible: nothing to compare
			}
			gs, _ := f.GroupSensitivity()
			if res.W.Cmp(gs) > 0 {
				t.Fatalf("trial %d %s: W = %s > group sensitivity %s", trial, q, res.W.RatString(), gs.RatString())
			}
		}
	}
}

// TestPufferfishByBruteForce checks Definition 2.1 directly: the exact
// privacy loss of F + Lap(W/ε) over every θ and pair is at most ε; and that
// the check can fail, by halving the scale.
func TestPufferfishByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	caught := 0
	for trial := range 200 {
		q := "sum"
		if trial%2 == 1 {
			q = "count"
		}
		f := randomFramework(t, rng, q)
		res, err := Parameter(f, nil)
		if err != nil || res.W.Sign() == 0 {
			continue
		}
		eps := 0.2 + 3*rng.Float64()
		b, _ := res.Sigma(eps)
		loss, _, _, err := f.MechanismLoss(b)
		if err != nil {
			t.Fatal(err)
		}
		if loss > eps*(1+1e-12) {
			t.Fatalf("trial %d: loss %.15g > ε = %g (W = %s)", trial, loss, eps, res.W.RatString())
		}
		if l2, _, _, _ := f.MechanismLoss(b / 2); l2 > eps {
			caught++
		}
	}
	if caught == 0 {
		t.Fatal("halving the noise never violated ε: the brute-force check is not sensitive")
	}
}

func TestSigmaRoundsUp(t *testing.T) {
	res := Result{W: r(1, 3)}
	s, err := res.Sigma(0.1)
	if err != nil {
		t.Fatal(err)
	}
	if new(big.Rat).SetFloat64(s).Cmp(new(big.Rat).Quo(r(1, 3), new(big.Rat).SetFloat64(0.1))) < 0 {
		t.Fatalf("σ = %.17g below W/ε", s)
	}
	if _, err := res.Sigma(math.NaN()); err == nil {
		t.Fatal("NaN ε accepted")
	}
}

// Atoms beyond float64's range and atoms that differ below float64's
// resolution are handled exactly (the float filters must not decide).
func TestWInfExtremeAtoms(t *testing.T) {
	huge, _ := new(big.Rat).SetString("1e400")
	hugeish := new(big.Rat).Add(huge, r(3, 1))
	tiny, _ := new(big.Rat).SetString("1e-400")
	half := []*big.Rat{r(1, 2), r(1, 2)}
	cases := []struct {
		mu, nu []*big.Rat
		want   *big.Rat
	}{
		{[]*big.Rat{r(0, 1), huge}, []*big.Rat{r(0, 1), hugeish}, r(3, 1)},
		{[]*big.Rat{r(1, 1), new(big.Rat).Add(r(1, 1), tiny)}, []*big.Rat{r(1, 1), r(1, 1)}, tiny},
		{[]*big.Rat{r(0, 1), r(1, 1)}, []*big.Rat{r(0, 1), huge}, new(big.Rat).Sub(huge, r(1, 1))},
	}
	for i, c := range cases {
		w, err := WInf(Dist{X: c.mu, W: half}, Dist{X: c.nu, W: half})
		if err != nil {
			t.Fatal(err)
		}
		if w.Cmp(c.want) != 0 {
			t.Errorf("case %d: W = %s, want %s", i, w.FloatString(3), c.want.FloatString(3))
		}
	}
}
