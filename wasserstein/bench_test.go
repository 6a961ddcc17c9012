package wasserstein

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/framework"
)

func bigDists(n int) (Dist, Dist, FloatDist, FloatDist) {
	rng := rand.New(rand.NewPCG(1, 1))
	var mu, nu Dist
	var fmu, fnu FloatDist
	var sa, sb float64
	wa, wb := make([]float64, n), make([]float64, n)
	for i := range n {
		a, b := 1+rng.IntN(1000), 1+rng.IntN(1000)
		mu.X = append(mu.X, big.NewRat(int64(i), 1))
		nu.X = append(nu.X, big.NewRat(int64(i+rng.IntN(3)), 1))
		mu.W = append(mu.W, big.NewRat(int64(a), 1))
		nu.W = append(nu.W, big.NewRat(int64(b), 1))
		wa[i], wb[i] = float64(a), float64(b)
		sa += wa[i]
		sb += wb[i]
	}
	for i := range n {
		fmu.X = append(fmu.X, float64(i))
		fmu.W = append(fmu.W, wa[i]/sa)
		x, _ := nu.X[i].Float64()
		fnu.X = append(fnu.X, x)
		fnu.W = append(fnu.W, wb[i]/sb)
	}
	// nu's atoms may be unsorted after jitter for the float path: sort pairs.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && fnu.X[j] < fnu.X[j-1]; j-- {
			fnu.X[j], fnu.X[j-1] = fnu.X[j-1], fnu.X[j]
			fnu.W[j], fnu.W[j-1] = fnu.W[j-1], fnu.W[j]
		}
	}
	return mu, nu, fmu, fnu
}

// W∞ between two distributions with 10^6 support points each.
func BenchmarkWInfExact1e6(b *testing.B) {
	mu, nu, _, _ := bigDists(1_000_000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := WInf(mu, nu); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWInfFloat1e6(b *testing.B) {
	_, _, fmu, fnu := bigDists(1_000_000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := WInfFloat(fmu, fnu); err != nil {
			b.Fatal(err)
		}
	}
}

// The Wasserstein Mechanism on 12 records over 3 values: a joint table with
// all 3^12 = 531,441 assignments (random rational probabilities).
func benchFramework(b *testing.B, q func([]*big.Rat) framework.Query) *framework.Framework {
	rng := rand.New(rand.NewPCG(2, 2))
	n, k := 12, 3
	total := 1
	for range n {
		total *= k
	}
	w := make([]int64, total)
	var s int64
	for i := range w {
		w[i] = 1 + rng.Int64N(100)
		s += w[i]
	}
	atoms := make([]framework.Atom, total)
	for code := range total {
		x := make([]int, n)
		c := code
		for i := range x {
			x[i] = c % k
			c /= k
		}
		atoms[code] = framework.Atom{X: x, P: big.NewRat(w[code], s)}
	}
	dom := []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(2, 1)}
	names := make([]string, n)
	for i := range names {
		names[i] = string(rune('a' + i))
	}
	f, err := framework.New(names, dom, []framework.Theta{{Atoms: atoms}}, nil, q(dom))
	if err != nil {
		b.Fatal(err)
	}
	return f
}

func BenchmarkMechanism12Records3Values(b *testing.B) {
	f := benchFramework(b, framework.Sum)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Parameter(f, nil); err != nil {
			b.Fatal(err)
		}
	}
}
