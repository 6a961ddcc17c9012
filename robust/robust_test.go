package robust

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/framework"
	"github.com/pufferfish-privacy/pufferfish/wasserstein"
)

var dom = []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)}

func product(p, q *big.Rat) framework.Theta {
	one := big.NewRat(1, 1)
	var atoms []framework.Atom
	for a := range 2 {
		for b := range 2 {
			pa, qb := p, q
			if a == 0 {
				pa = new(big.Rat).Sub(one, p)
			}
			if b == 0 {
				qb = new(big.Rat).Sub(one, q)
			}
			atoms = append(atoms, framework.Atom{X: []int{a, b}, P: new(big.Rat).Mul(pa, qb)})
		}
	}
	return framework.Theta{Atoms: atoms}
}

// Two independent bits: given X1 = a the database is X2's law, so Δ is the
// two-way max-divergence between Bernoulli(1/2) and Bernoulli(3/4): ratios
// 3/2 and 1/2 one way, 2/3 and 2 the other, Δ = log 2.
func TestHandExample(t *testing.T) {
	half, q3 := big.NewRat(1, 2), big.NewRat(3, 4)
	f, err := framework.New([]string{"a", "b"}, dom, []framework.Theta{product(half, half)}, nil, framework.Sum(dom))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Bound(f, product(half, q3), 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Delta-math.Log(2)) > 1e-15 || r.Delta < math.Log(2) || r.Guarantee < 1+2*math.Log(2) {
		t.Fatalf("Δ = %.17g, guarantee %g", r.Delta, r.Guarantee)
	}
	// θ̃ ∈ Θ: Δ = 0, attained by that θ.
	f2, _ := framework.New([]string{"a", "b"}, dom, []framework.Theta{product(half, half), product(half, q3)}, nil, framework.Sum(dom))
	if r, _ = Bound(f2, product(half, q3), 1); r.Delta != 0 || r.Theta != 1 {
		t.Fatalf("member: %+v", r)
	}
	// A secret impossible under Θ but possible for the adversary: +∞.
	f3, _ := framework.New([]string{"a", "b"}, dom, []framework.Theta{product(big.NewRat(1, 1), half)}, nil, framework.Sum(dom))
	if r, _ = Bound(f3, product(half, half), 1); !math.IsInf(r.Delta, 1) {
		t.Fatalf("unsupported secret: %+v", r)
	}
}

func randomTheta(rng *rand.Rand, n int) framework.Theta {
	total := 1 << n
	w := make([]int64, total)
	var s int64
	for i := range w {
		w[i] = 1 + rng.Int64N(9)
		s += w[i]
	}
	var atoms []framework.Atom
	for code := range total {
		x := make([]int, n)
		for i := range x {
			x[i] = code >> i & 1
		}
		atoms = append(atoms, framework.Atom{X: x, P: big.NewRat(w[code], s)})
	}
	return framework.Theta{Atoms: atoms}
}

// Theorem 2.4 by brute force: the Wasserstein Mechanism calibrated on Θ has,
// against a random outside belief θ̃, an exact privacy loss at most ε + 2Δ.
func TestTheorem24ByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 150 {
		n := 2 + rng.IntN(3)
		var thetas []framework.Theta
		for range 1 + rng.IntN(3) {
			thetas = append(thetas, randomTheta(rng, n))
		}
		names := make([]string, n)
		for i := range names {
			names[i] = string(rune('a' + i))
		}
		f, err := framework.New(names, dom, thetas, nil, framework.Sum(dom))
		if err != nil {
			t.Fatal(err)
		}
		res, err := wasserstein.Parameter(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		eps := 0.1 + 2*rng.Float64()
		b, _ := res.Sigma(eps)
		adv := randomTheta(rng, n)
		bound, err := Bound(f, adv, eps)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := framework.New(names, dom, []framework.Theta{adv}, nil, framework.Sum(dom))
		loss, _, _, err := g.MechanismLoss(b)
		if err != nil {
			t.Fatal(err)
		}
		if loss > bound.Guarantee*(1+1e-12) {
			t.Fatalf("trial %d: loss %g under θ̃ exceeds ε + 2Δ = %g", trial, loss, bound.Guarantee)
		}
		// Δ is the minimum over Θ of the per-θ values.
		for _, d := range bound.PerTheta {
			if d < bound.Delta {
				t.Fatalf("Δ = %g is not the minimum of %v", bound.Delta, bound.PerTheta)
			}
		}
	}
}
