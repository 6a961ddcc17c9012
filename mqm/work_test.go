package mqm

import (
	"context"
	"errors"
	"math/bits"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// birthDeath is the k-state birth–death chain with P(i, i±1) = p where
// the neighbour exists and the rest on the diagonal, started stationary.
func birthDeath(t testing.TB, k int, p float64) *markov.Class {
	P := make([][]float64, k)
	for i := range P {
		P[i] = make([]float64, k)
		s := 0.0
		if i > 0 {
			P[i][i-1], s = p, s+p
		}
		if i < k-1 {
			P[i][i+1], s = p, s+p
		}
		P[i][i] = 1 - s
	}
	ch, err := markov.New(nil, P, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &markov.Class{Chains: []*markov.Chain{ch}}
}

func TestSearchWorkClosedForm(t *testing.T) {
	for n := range 300 {
		ones, lens := 0, 0
		for e := 1; e <= n; e++ {
			ones += bits.OnesCount(uint(e))
			lens += bits.Len(uint(e))
		}
		if onesUpTo(n) != ones || bitLenUpTo(n) != lens {
			t.Fatalf("n=%d: ones %d want %d, lens %d want %d", n, onesUpTo(n), ones, bitLenUpTo(n), lens)
		}
	}
	class := birthDeath(t, 40, 0.1)
	for _, D := range []int{1, 10, 700, 900, 5000} {
		want := 0.0
		for d := 1; d <= D; d++ {
			want += distanceWork(d, 40)
		}
		if got := searchWork(class, D); got != want {
			t.Fatalf("D=%d: closed form %g, sum %g", D, got, want)
		}
	}
}

// The estimate grows with the states and the length; small chains are
// admitted, and the slowly mixing 300-state birth–death chain at T = 2000
// (issue 40: minutes of search) is not.
func TestSearchWork(t *testing.T) {
	ctx := context.Background()
	prev := 0.0
	for _, k := range []int{2, 5, 10, 20, 40, 80} {
		last := 0.0
		for _, T := range []int{10, 100, 1000, 10000} {
			w, D, err := SearchWork(ctx, birthDeath(t, k, 0.01), T, 1)
			if err != nil {
				t.Fatal(err)
			}
			if w < last || D > T || D < 1 {
				t.Fatalf("k=%d T=%d: work %g (shorter: %g), D=%d", k, T, w, last, D)
			}
			last = w
			if T == 1000 {
				if w < prev {
					t.Fatalf("k=%d: work %g below fewer states' %g", k, w, prev)
				}
				prev = w
			}
		}
	}
	two, _ := markov.New([]string{"0", "1"}, [][]float64{{0.8, 0.2}, {0.3, 0.7}}, markov.InitStationary, nil)
	for _, T := range []int{100, 1000000} {
		if w, _, err := SearchWork(ctx, &markov.Class{Chains: []*markov.Chain{two}}, T, 1); err != nil || w > DefaultMaxSearchWork/100 {
			t.Fatalf("two states, T=%d: work %g, err %v", T, w, err)
		}
	}
	start := time.Now()
	w, D, err := SearchWork(ctx, birthDeath(t, 300, 0.01), 2000, 1)
	if err != nil || w <= DefaultMaxSearchWork || D != 2000 {
		t.Fatalf("birth–death 300, T=2000: work %g, D=%d, err %v; want over %g", w, D, err, DefaultMaxSearchWork)
	}
	if n := LengthWithin(birthDeath(t, 300, 0.01), 2000, DefaultMaxSearchWork); n < 1 || n >= 2000 || searchWork(birthDeath(t, 300, 0.01), n) > DefaultMaxSearchWork || searchWork(birthDeath(t, 300, 0.01), n+1) <= DefaultMaxSearchWork {
		t.Fatalf("LengthWithin: %d", n)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("the estimate took %v", el)
	}
}

// The search counts its work as it runs (the same model as the
// estimate): under a small limit it stops with a *WorkError, and its
// count stays within the estimate.
func TestSearchWorkCounted(t *testing.T) {
	class := birthDeath(t, 30, 0.05)
	const T = 400
	est, _, err := SearchWork(context.Background(), class, T, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithMaxWork(context.Background(), 1e6)
	_, err = ScaleContext(ctx, class, T, 1, Exact)
	var we *WorkError
	if !errors.As(err, &we) || !we.Running {
		t.Fatalf("error %v, want a running *WorkError", err)
	}
	ctx = WithMaxWork(context.Background(), 1e15)
	want, err := Scale(class, T, 1, Exact)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ScaleContext(ctx, class, T, 1, Exact)
	if err != nil || got != want {
		t.Fatalf("with a limit: %+v, %v; without: %+v", got, err, want)
	}
	used := float64(ctx.Value(workKey{}).(*workBudget).used.Load())
	if used <= 0 || used > est {
		t.Fatalf("counted %g, estimated %g", used, est)
	}
	t.Logf("counted %g, estimated %g", used, est)
}

// A ratio whose numerator is structurally 0 is 0 even when its
// denominator, structurally positive, underflowed to 0 (it was 0/0 = NaN,
// and the search failed with "undefined (NaN)": the 300-state birth–death
// chain at T = 348, found with issue 40's estimate).
func TestRatioBoundUnderflowedDenominator(t *testing.T) {
	if m, seen := ratioBound(0, false, 0, 0, false, true); m != 0 || !seen {
		t.Fatalf("first: %v %v", m, seen)
	}
	if m, seen := ratioBound(3, true, 0, 0, false, true); m != 3 || !seen {
		t.Fatalf("later: %v %v", m, seen)
	}
	// P(i, i±1) = 1e-10: P^35(34, 0) ≈ 1e-350 underflows, P^35(39, 0) = 0
	// structurally; the right-only scan of node 1 visits distance 35.
	r, err := Scale(birthDeath(t, 40, 1e-10), 60, 1, Exact)
	if err != nil || r.Sigma != 60 {
		t.Fatalf("σ %v, err %v; want 60 (T/ε)", r.Sigma, err)
	}
}
