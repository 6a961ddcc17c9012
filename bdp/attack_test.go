package bdp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// [CGSSY] (docs/math.md §6): DP noise at ε = 0.5, θ = 0.02, n = 30, target in the
// middle: the correlation-aware adversary succeeds with 0.831215
// (implied ε ≈ 1.594), the single-reading one with 0.622459.
func TestAttackHeadline(t *testing.T) {
	ch := sym(t, 0.02)
	mech := rr(t, DPFlip(0.5))
	for _, target := range []int{15, 16} {
		r, err := Attack(ch, mech, 30, target)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.CorrelationAware.Success-0.831215) > 5e-7 || math.Abs(r.SingleReading.Success-0.622459) > 5e-7 {
			t.Fatalf("target %d: %+v", target, r)
		}
		if math.Abs(r.CorrelationAware.ImpliedEpsilon-1.594) > 5e-4 {
			t.Fatalf("implied ε %v", r.CorrelationAware.ImpliedEpsilon)
		}
	}
}

// Exact success and posteriors against the joint enumeration; Monte Carlo
// within its interval.
func TestAttackMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 10 {
		P := [][]float64{randRow(rng, 2, false), randRow(rng, 2, false)}
		q := randRow(rng, 2, trial%4 == 0)
		m := 2 + trial%2
		E := [][]float64{randRow(rng, m, false), randRow(rng, m, false)}
		ch, _ := markov.New(nil, P, markov.InitGiven, q)
		mech, _ := NewMechanism(E)
		n := 1 + trial%6
		j := newJoint(P, q, E, n)
		for target := 1; target <= n; target++ {
			want, single := 0.0, 0.0
			for y := range ipow(m, n) {
				var p [2]float64
				for x, px := range j.px {
					p[digit(x, target-1, 2)] += px * j.pyx[x][y]
				}
				want += max(p[0], p[1])
			}
			for y := range m {
				var p [2]float64
				for x, px := range j.px {
					p[digit(x, target-1, 2)] += px * E[digit(x, target-1, 2)][y]
				}
				single += max(p[0], p[1])
			}
			r, err := Attack(ch, mech, n, target)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(r.CorrelationAware.Success-want) > 1e-12 || math.Abs(r.SingleReading.Success-single) > 1e-12 {
				t.Fatalf("trial %d target %d: %+v, want %v / %v", trial, target, r, want, single)
			}
			if target == n/2+1 && n >= 3 {
				s, _ := SimulateAttack(ch, mech, n, target, 20000, rand.New(rand.NewPCG(uint64(trial), 1)))
				if ci := s.CorrelationAware.CI; want < ci[0]-0.01 || want > ci[1]+0.01 {
					t.Errorf("trial %d: Monte Carlo %v, exact %v", trial, *ci, want)
				}
			}
		}
		// Posterior of one random output sequence.
		y := make([]int, n)
		for t := range y {
			y[t] = rng.IntN(m)
		}
		yc := 0
		for t := n - 1; t >= 0; t-- {
			yc = yc*m + y[t]
		}
		post, err := Posterior(ch, mech, y)
		if err != nil {
			t.Fatal(err)
		}
		for target := range n {
			var p [2]float64
			for x, px := range j.px {
				p[digit(x, target, 2)] += px * j.pyx[x][yc]
			}
			if math.Abs(post[target][0]-p[0]/(p[0]+p[1])) > 1e-12 {
				t.Fatalf("posterior at %d: %v, want %v", target, post[target], p[0]/(p[0]+p[1]))
			}
		}
	}
}

// With the certified flip the correlation-aware adversary stays within ε.
func TestCertifiedFlipResistsAttack(t *testing.T) {
	for _, theta := range []float64{0.02, 0.1, 0.3} {
		ch := sym(t, theta)
		c, err := CertifiedFlip(ch, 0.5, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Attack(ch, rr(t, c.Flip), 30, 15)
		if err != nil {
			t.Fatal(err)
		}
		if r.CorrelationAware.ImpliedEpsilon > 0.5 {
			t.Errorf("θ=%v: certified flip %v, implied ε %v", theta, c.Flip, r.CorrelationAware.ImpliedEpsilon)
		}
	}
}

// Posterior stays finite and normalised on a million readings.
func TestPosteriorLong(t *testing.T) {
	ch := sym(t, 0.02)
	mech := rr(t, DPFlip(0.5))
	md, _ := newModel(ch, mech)
	n := 1_000_000
	x, y := make([]int, n), make([]int, n)
	md.draw(rand.New(rand.NewPCG(1, 1)), x, y)
	post, err := Posterior(ch, mech, y)
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for i, p := range post {
		if math.IsNaN(p[0]) || math.Abs(p[0]+p[1]-1) > 1e-12 {
			t.Fatalf("posterior %v at %d", p, i)
		}
		if (p[0] >= p[1]) == (x[i] == 0) {
			right++
		}
	}
	if acc := float64(right) / float64(n); acc < 0.8 || acc > 0.86 {
		t.Errorf("posterior accuracy %v on 10⁶ readings, expected ≈ 0.83", acc)
	}
}

type seqSource struct{ r *rand.Rand }

func (s seqSource) Uint64() uint64 { return s.r.Uint64() }

func TestSanitizeFlipRates(t *testing.T) {
	src := seqSource{rand.New(rand.NewChaCha8([32]byte{1}))}
	n := 200000
	x := make([]int, n)
	for i := range x {
		x[i] = i % 2
	}
	y, err := Sanitize(x, 0.1, 0.3, src)
	if err != nil {
		t.Fatal(err)
	}
	var flips [2]int
	for i := range x {
		if x[i] != y[i] {
			flips[x[i]]++
		}
	}
	for v, want := range []float64{0.1, 0.3} {
		got := float64(flips[v]) / float64(n/2)
		if sd := math.Sqrt(want * (1 - want) / float64(n/2)); math.Abs(got-want) > 5*sd {
			t.Errorf("state %d flipped at rate %v, want %v", v, got, want)
		}
	}
	if y, _ := Sanitize(x, 0, 0, src); !slicesEqual(x, y) {
		t.Error("a flip probability of 0 changed readings")
	}
	for _, bad := range [][2]float64{{-0.1, 0.2}, {0.6, 0.2}, {math.NaN(), 0}} {
		if _, err := Sanitize(x, bad[0], bad[1], src); err == nil {
			t.Errorf("accepted flips %v", bad)
		}
	}
	if _, err := Sanitize([]int{0, 2}, 0.1, 0.1, src); err == nil {
		t.Error("accepted a reading 2")
	}
	// The secure source works too.
	if _, err := Sanitize(x[:10], 0.2, 0.2, nil); err != nil {
		t.Fatal(err)
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
