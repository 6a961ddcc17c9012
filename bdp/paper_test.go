package bdp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

func rr(t *testing.T, rho float64) Mechanism {
	t.Helper()
	m, err := RandomizedResponse(rho, rho)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sym(t *testing.T, theta float64) *markov.Chain {
	t.Helper()
	ch, err := SymmetricChain(theta)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// The authors' logged values ([CGSSY]; docs/math.md §6).
func TestPublishedFlipValues(t *testing.T) {
	for _, c := range []struct{ theta, eps, want float64 }{
		{0.02, 0.5, 0.49742235755151176},
		{0.2, 2, 0.35905696276880567},
		{0.1, 4, 0.31311209791734296},
		{0.4, 0.5, 0.41696515113471583},
	} {
		got, err := PublishedFlip(c.theta, c.eps)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-15 {
			t.Errorf("ρ*(%v, %v) = %.17g, want %.17g", c.theta, c.eps, got, c.want)
		}
		// θ > 1/2 folds onto 1−θ; θ = 1/2 is plain DP.
		if g2, _ := PublishedFlip(1-c.theta, c.eps); math.Abs(g2-got) > 1e-14 {
			t.Errorf("ρ*(%v) = %v differs from ρ*(%v) = %v", 1-c.theta, g2, c.theta, got)
		}
	}
	if got, _ := PublishedFlip(0.5, 1.3); math.Abs(got-DPFlip(1.3)) > 1e-15 {
		t.Errorf("ρ*(1/2, ε) = %v, want the DP flip %v", got, DPFlip(1.3))
	}
	for _, bad := range [][2]float64{{-0.1, 1}, {1.1, 1}, {0.3, 0}, {0.3, -1}, {math.NaN(), 1}, {0.3, math.Inf(1)}} {
		if _, err := PublishedFlip(bad[0], bad[1]); err == nil {
			t.Errorf("PublishedFlip(%v, %v) accepted", bad[0], bad[1])
		}
	}
}

// [CGSSY] (docs/math.md §6): ρ* at n = 5, θ = 0.4, ε = 4 leaks 4.1109124264609616 to the
// adversary knowing the first and last readings (equal), target in the
// middle, outputs on the three middle readings all the other value.
func TestPublishedFlipExceedsAgainstKnownNeighbours(t *testing.T) {
	rho, _ := PublishedFlip(0.4, 4)
	l, err := Worst(sym(t, 0.4), rr(t, rho), 5, AnyKnown)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(l.Loss-4.1109124264609616) > 1e-12 {
		t.Fatalf("loss %.17g, want 4.1109124264609616", l.Loss)
	}
	a := l.Adversary
	if a.Target != 3 || len(a.Known) != 2 || a.Known[0].Index != 1 || a.Known[1].Index != 5 || a.Known[0].Value != a.Known[1].Value ||
		len(l.Output) != 1 || l.Output[0] != (Run{2, 4, 1 - a.Known[0].Value}) {
		t.Fatalf("adversary %+v output %+v, want target 3 knowing readings 1 and 5 (equal), outputs 2..4 the other value", a, l.Output)
	}
}

// The plain-DP flip gives exactly ε against K = all others, and more
// than ε against some K on correlated chains.
func TestDPFlipAgainstAllOthers(t *testing.T) {
	for _, theta := range []float64{0.02, 0.2, 0.45} {
		for _, eps := range []float64{0.5, 2} {
			mech := rr(t, DPFlip(eps))
			for _, n := range []int{1, 2, 5, 40} {
				all, err := Worst(sym(t, theta), mech, n, AllKnown)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(all.Loss-eps) > 1e-12 {
					t.Errorf("θ=%v ε=%v n=%d: K = all others gives %v", theta, eps, n, all.Loss)
				}
			}
			any, _ := Worst(sym(t, theta), mech, 40, AnyKnown)
			none, _ := Worst(sym(t, theta), mech, 40, NoneKnown)
			if !(any.Loss > eps+1e-3) || !(none.Loss > eps+1e-3) {
				t.Errorf("θ=%v ε=%v: DP flip leaks only %v (any K), %v (K=∅)", theta, eps, any.Loss, none.Loss)
			}
		}
	}
}

// At θ = 1/2 the readings are independent: every mechanism's worst case
// over any K is its local DP level.
func TestIndependentReadingsGiveLocalDP(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ch := sym(t, 0.5)
	for trial := range 20 {
		m := 2 + trial%3
		E := [][]float64{randRow(rng, m, false), randRow(rng, m, false)}
		mech, _ := NewMechanism(E)
		for _, know := range []Knowledge{AnyKnown, NoneKnown, AllKnown} {
			l, err := Worst(ch, mech, 9, know)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(l.Loss-mech.LocalDP()) > 1e-12 {
				t.Fatalf("E=%v %v: worst %v, local DP %v", E, know, l.Loss, mech.LocalDP())
			}
		}
		if l, _ := Limit(ch, mech, AnyKnown); math.Abs(l.Loss-mech.LocalDP()) > 1e-11 {
			t.Fatalf("E=%v limit %v, local DP %v", E, l.Loss, mech.LocalDP())
		}
	}
}

// ρ* keeps the K = ∅ adversary at or below ε for every n, approaching ε;
// the limit bound equals the closed form.
func TestPublishedFlipAgainstNoKnowledge(t *testing.T) {
	for _, theta := range []float64{0.02, 0.1, 0.3, 0.6} {
		for _, eps := range []float64{0.5, 1, 4} {
			rho, _ := PublishedFlip(theta, eps)
			mech := rr(t, rho)
			ch := sym(t, theta)
			prev := 0.0
			for _, n := range []int{1, 2, 3, 5, 10, 30, 100, 1000, 5000} {
				l, err := Worst(ch, mech, n, NoneKnown)
				if err != nil {
					t.Fatal(err)
				}
				if l.Loss > eps+1e-12 || l.Loss < prev-1e-12 {
					t.Errorf("θ=%v ε=%v n=%d: K=∅ loss %v (previous %v)", theta, eps, n, l.Loss, prev)
				}
				prev = l.Loss
			}
			if prev < eps-1e-3*eps {
				t.Errorf("θ=%v ε=%v: K=∅ loss at n=5000 is %v, not near ε", theta, eps, prev)
			}
			lim, err := Limit(ch, mech, NoneKnown)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(lim.Loss-eps) > 1e-9 || math.Abs(PublishedLeak(theta, rho)-eps) > 1e-9 {
				t.Errorf("θ=%v ε=%v: K=∅ limit %v, closed form %v", theta, eps, lim.Loss, PublishedLeak(theta, rho))
			}
		}
	}
}

// Limit bounds every finite length from above and is approached by them.
func TestLimitBoundsEveryLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 12 {
		P := [][]float64{randRow(rng, 2, false), randRow(rng, 2, false)}
		q := randRow(rng, 2, trial%3 == 0)
		ch, _ := markov.New(nil, P, markov.InitGiven, q)
		mech, _ := NewMechanism([][]float64{randRow(rng, 2+trial%2, false), randRow(rng, 2+trial%2, false)})
		for _, know := range []Knowledge{AnyKnown, NoneKnown, AllKnown} {
			lim, err := Limit(ch, mech, know)
			if err != nil {
				t.Fatal(err)
			}
			if lim.Attained > lim.Loss {
				t.Fatalf("witness attains %v above the bound %v", lim.Attained, lim.Loss)
			}
			w, _ := Worst(ch, mech, lim.Length, know)
			if w.Loss < lim.Attained-1e-12 {
				t.Fatalf("witness claims %v at n=%d, Worst says %v", lim.Attained, lim.Length, w.Loss)
			}
			var last float64
			for _, n := range []int{1, 2, 7, 50, 400} {
				l, _ := Worst(ch, mech, n, know)
				if l.Loss > lim.Loss {
					t.Fatalf("trial %d %v: n=%d loss %v exceeds the limit %v", trial, know, n, l.Loss, lim.Loss)
				}
				last = l.Loss
			}
			if lim.Loss-last > 1e-6 {
				t.Errorf("trial %d %v: limit %v, n=400 gives %v", trial, know, lim.Loss, last)
			}
		}
	}
	// Zero transitions are refused with a reason.
	ch, _ := markov.New(nil, [][]float64{{1, 0}, {0.3, 0.7}}, markov.InitGiven, []float64{0.5, 0.5})
	if _, err := Limit(ch, rr(t, 0.2), AnyKnown); err == nil {
		t.Error("Limit accepted a chain with a zero transition")
	}
}

// The worst case is non-increasing in the flip probability on [0, 1/2]:
// the property CertifiedFlip's bisection relies on.
func TestWorstMonotoneInFlip(t *testing.T) {
	for _, theta := range []float64{0.05, 0.3, 0.8} {
		ch := sym(t, theta)
		prevN, prevL := math.Inf(1), math.Inf(1)
		for rho := 0.0; rho <= 0.5; rho += 1.0 / 64 {
			l, _ := Worst(ch, rr(t, rho), 12, AnyKnown)
			if l.Loss > prevN+1e-12 {
				t.Fatalf("θ=%v: loss rises from %v to %v at ρ=%v", theta, prevN, l.Loss, rho)
			}
			prevN = l.Loss
			if rho > 0 {
				lim, _ := Limit(ch, rr(t, rho), AnyKnown)
				if lim.Loss > prevL+1e-12 {
					t.Fatalf("θ=%v: limit rises from %v to %v at ρ=%v", theta, prevL, lim.Loss, rho)
				}
				prevL = lim.Loss
			}
		}
		if math.Abs(prevN) > 1e-12 {
			t.Fatalf("θ=%v: loss %v at ρ = 1/2", theta, prevN)
		}
	}
}

// The certified flip keeps every adversary within ε — checked against the
// definition by brute force for short chains — and is the least such flip
// (a slightly smaller flip exceeds ε).
func TestCertifiedFlip(t *testing.T) {
	for _, theta := range []float64{0.1, 0.4} {
		ch := sym(t, theta)
		for _, eps := range []float64{0.5, 4} {
			for _, n := range []int{3, 6} {
				c, err := CertifiedFlip(ch, eps, n)
				if err != nil {
					t.Fatal(err)
				}
				j := newJoint(ch.P, ch.Q, rr(t, c.Flip).Emit, n)
				if got := j.worst(AnyKnown); got > eps {
					t.Errorf("θ=%v ε=%v n=%d: certified flip %v leaks %v by brute force", theta, eps, n, c.Flip, got)
				}
				if below := newJoint(ch.P, ch.Q, rr(t, c.Flip-1e-9).Emit, n).worst(AnyKnown); below <= eps {
					t.Errorf("θ=%v ε=%v n=%d: flip %v − 1e-9 still satisfies ε (%v)", theta, eps, n, c.Flip, below)
				}
			}
			c, err := CertifiedFlip(ch, eps, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{5, 60, 2000} {
				if l, _ := Worst(ch, rr(t, c.Flip), n, AnyKnown); l.Loss > eps {
					t.Errorf("θ=%v ε=%v: certified flip %v (every length) leaks %v at n=%d", theta, eps, c.Flip, l.Loss, n)
				}
			}
			// It is more noise than ρ* (ρ* fails some K) and than the DP flip.
			rho, _ := PublishedFlip(theta, eps)
			if !(c.Flip > rho) || !(c.Flip > DPFlip(eps)) {
				t.Errorf("θ=%v ε=%v: certified %v, published %v, DP %v", theta, eps, c.Flip, rho, DPFlip(eps))
			}
		}
	}
}

func TestPublishedFlipPair(t *testing.T) {
	// Symmetric chain: the pair's expected flip is ρ* (no better symmetric
	// or asymmetric choice was found, and ρ* itself is feasible).
	for _, c := range [][2]float64{{0.1, 1}, {0.3, 4}} {
		p, err := PublishedFlipPair(sym(t, c[0]), c[1])
		if err != nil {
			t.Fatal(err)
		}
		rho, _ := PublishedFlip(c[0], c[1])
		if p.Leak > c[1] || p.Expected > rho+1e-9 || math.Abs(p.Expected-rho) > 1e-3 {
			t.Errorf("θ=%v ε=%v: pair %+v, ρ* = %v", c[0], c[1], p, rho)
		}
	}
	// The heart-rate chain of [CGSSY]'s synthetic experiment.
	ch, _ := markov.New(nil, [][]float64{{1 - 0.08937981353871098, 0.08937981353871098}, {0.10924092409240924, 1 - 0.10924092409240924}}, markov.InitStationary, nil)
	for _, eps := range []float64{1, 3} {
		p, err := PublishedFlipPair(ch, eps)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := RandomizedResponse(p.Rho0, p.Rho1)
		for _, n := range []int{3, 30, 300} {
			if l, _ := Worst(ch, m, n, NoneKnown); l.Loss > eps {
				t.Errorf("ε=%v: pair %+v leaks %v at n=%d", eps, p, l.Loss, n)
			}
		}
		t.Logf("ε=%v: %+v", eps, p)
	}
}

// A deterministic chain needs a fair coin: with K = ∅ the loss of any
// flip below 1/2 grows as n·ln((1−ρ)/ρ).
func TestCertifiedFlipDeterministic(t *testing.T) {
	for _, theta := range []float64{0, 1} {
		c, err := CertifiedFlipSymmetric(theta, 2)
		if err != nil || c.Flip != 0.5 {
			t.Fatalf("θ=%v: %+v %v", theta, c, err)
		}
		rho := 0.45
		for _, n := range []int{1, 4, 16} {
			l, _ := Worst(sym(t, theta), rr(t, rho), n, NoneKnown)
			if math.Abs(l.Loss-float64(n)*flipLevel(rho)) > 1e-9 {
				t.Errorf("θ=%v n=%d: K=∅ loss %v, want %v", theta, n, l.Loss, float64(n)*flipLevel(rho))
			}
		}
	}
	c, _ := CertifiedFlipSymmetric(0.4, 4)
	if math.Abs(c.Flip-0.041848) > 1e-6 {
		t.Errorf("θ=0.4: %v", c.Flip)
	}
}
