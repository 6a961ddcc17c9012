package framework

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The estimate of each query kind is an answer the query can give on n
// records (a histogram non-negative summing to n, a count in [0, n], a sum
// in [n·min, n·max]), leaves an answer already there unchanged, and reads
// nothing but the noisy values and n (docs/math.md §4.14).
func TestQueryEstimates(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	domain := []*big.Rat{big.NewRat(-1, 2), big.NewRat(3, 1), big.NewRat(0, 1)}
	for range 500 {
		n := 1 + rng.IntN(20)
		h, err := Histogram(3).Estimate([]float64{rng.NormFloat64() * 10, rng.NormFloat64() * 10, rng.NormFloat64() * 10}, n)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, v := range h {
			if v < 0 {
				t.Fatalf("histogram estimate %v has a negative bin", h)
			}
			sum += v
		}
		if math.Abs(sum-float64(n)) > 1e-9*float64(n) {
			t.Fatalf("histogram estimate %v sums to %v, want %d", h, sum, n)
		}
		c, _ := Count(0, "a").Estimate([]float64{rng.NormFloat64() * 30}, n)
		if c[0] < 0 || c[0] > float64(n) {
			t.Fatalf("count estimate %v outside [0, %d]", c, n)
		}
		s, _ := Sum(domain).Estimate([]float64{rng.NormFloat64() * 100}, n)
		if s[0] < -0.5*float64(n) || s[0] > 3*float64(n) {
			t.Fatalf("sum estimate %v outside [%v, %v]", s, -0.5*float64(n), 3*float64(n))
		}
	}
	if s, _ := Sum(domain).Estimate([]float64{2.25}, 4); s[0] != 2.25 {
		t.Fatalf("a feasible sum moved: %v", s)
	}
	if h, _ := Histogram(2).Estimate([]float64{1, 3}, 4); h[0] != 1 || h[1] != 3 {
		t.Fatalf("a feasible histogram moved: %v", h)
	}
	if _, err := Count(0, "a").Estimate([]float64{1, 2}, 3); err == nil {
		t.Fatal("two values for a count accepted")
	}
}
