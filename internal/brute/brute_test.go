package brute

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/tpl/exact"
)

// Independent checks of the oracle: a closed form, numbers computed by a
// separate evaluator (docs/math.md §4.8 cites them), and random real
// outputs that never beat the grid.

func TestIIDOneHotLosesTwoOverB(t *testing.T) {
	c := Chain{Q: []float64{0.3, 0.7}, P: [][]float64{{0.3, 0.7}, {0.3, 0.7}}, T: 4}
	for _, b := range []float64{0.5, 2, 7} {
		l, _, _, _, err := Loss(c, Windows(2, 4, []int{1, 1, 1, 1}, nil, []float64{b}))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(l-2/b) > 1e-12 {
			t.Errorf("b = %g: loss %.15g, want 2/b = %.15g", b, l, 2/b)
		}
	}
}

// The smallest per-bin scale at which one window of 8 hourly readings of
// [[0.8,0.2],[0.1,0.9]] (stationary start) is 1-Pufferfish: 8.794, as an
// independent evaluator found (and, for two states, the temporal-leakage
// allocation of [CYXX17] for T = 8).
func TestMinScaleOfOneWindow(t *testing.T) {
	P := [][]float64{{0.8, 0.2}, {0.1, 0.9}}
	c := Chain{Q: []float64{1.0 / 3, 2.0 / 3}, P: P, T: 8}
	for _, widths := range [][]int{{8}, {4, 4}} {
		b, err := MinScale(c, 1, 1, 40, func(b float64) []Release { return Windows(2, 8, widths, nil, []float64{b}) })
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(b-8.794) > 0.001 {
			t.Errorf("widths %v: b* = %.6g, want 8.794", widths, b)
		}
	}
}

func TestGridIsTheSupremum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := Chain{Q: []float64{0.5, 0.2, 0.3}, P: [][]float64{{0.6, 0.3, 0.1}, {0.1, 0.6, 0.3}, {0.3, 0.1, 0.6}}, T: 4}
	rels := Windows(3, 4, []int{1, 3}, nil, []float64{1.3})
	grid, _, _, _, err := Loss(c, rels)
	if err != nil {
		t.Fatal(err)
	}
	// the loss at a real output y, by direct summation over sequences
	at := func(y []float64) float64 {
		k := 3
		sum := make([]float64, c.T*k)
		marg := make([]float64, c.T*k)
		x := make([]int, c.T)
		for n := 0; n < 81; n++ {
			m := n
			for i := range x {
				x[i] = m % 3
				m /= 3
			}
			p := c.Q[x[0]]
			for i := 1; i < c.T; i++ {
				p *= c.P[x[i-1]][x[i]]
			}
			lik := 1.0
			j := 0
			for _, r := range rels {
				for _, v := range r.Coords(x) {
					lik *= math.Exp(-math.Abs(y[j]-float64(v)) / r.Scale)
					j++
				}
			}
			for i, v := range x {
				sum[i*k+v] += p * lik
				marg[i*k+v] += p
			}
		}
		best := 0.0
		for i := 0; i < c.T; i++ {
			for u := range k {
				for v := range k {
					best = max(best, math.Log(sum[i*k+u]/marg[i*k+u])-math.Log(sum[i*k+v]/marg[i*k+v]))
				}
			}
		}
		return best
	}
	for range 3000 {
		y := make([]float64, 6)
		for i := range y {
			y[i] = rng.Float64()*5 - 1
		}
		if l := at(y); l > grid+1e-12 {
			t.Fatalf("output %v loses %.15g > grid maximum %.15g", y, l, grid)
		}
	}
}

// The two exact evaluators of the repository — this package and tpl/exact,
// written independently — agree on random chains, starts, windowings and
// missing readings: each is a check of the other.
func TestAgreesWithTheOtherOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 40 {
		k := 2 + trial%2
		T := 4 + trial%3
		if k == 3 {
			T = 4
		}
		P := make([][]float64, k)
		for i := range P {
			P[i] = make([]float64, k)
			s := 0.0
			for j := range P[i] {
				P[i][j] = rng.Float64()
				s += P[i][j]
			}
			for j := range P[i] {
				P[i][j] /= s
			}
		}
		q := make([]float64, k)
		q[rng.IntN(k)] = 0.5
		q[rng.IntN(k)] += 0.5
		var widths []int
		for left := T; left > 0; {
			w := min(left, 1+rng.IntN(3))
			widths = append(widths, w)
			left -= w
		}
		missing := -1
		if trial%4 == 0 {
			missing = rng.IntN(T)
		}
		b := 0.5 + 3*rng.Float64()
		var miss []int
		mask := make([]bool, T)
		if missing >= 0 {
			miss, mask[missing] = []int{missing}, true
		}
		mine, _, _, _, err := Loss(Chain{Q: q, P: P, T: T}, Windows(k, T, widths, miss, []float64{b}))
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := exact.Loss([]exact.Series{{P: P, Q: q, Missing: mask}}, widths, b)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(mine-theirs) > 1e-9*max(1, theirs) {
			t.Fatalf("trial %d: %.15g here, %.15g in tpl/exact (P %v, q %v, widths %v, missing %d, b %g)", trial, mine, theirs, P, q, widths, missing, b)
		}
	}
}
