package compose

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// The lemma behind gapCap (docs/math.md §4.5, "Long gaps"), checked from
// the definition on random 3-state chains with a random initial law: the
// max-influence of X_{k−d} on the secret X_k, and of X_{j+d} on X_j, never
// grows with d. Conditionals are computed here from the joint law (Bayes
// on the marginals), independently of package mqm.
func TestInfluenceNeverGrowsWithTheGap(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	const k = 3
	for trial := range 200 {
		P := make([][]float64, k)
		for x := range P {
			P[x] = make([]float64, k)
			s := 0.0
			for y := range P[x] {
				P[x][y] = 0.02 + rng.Float64()
				s += P[x][y]
			}
			for y := range P[x] {
				P[x][y] /= s
			}
		}
		q := []float64{rng.Float64() + 0.01, rng.Float64() + 0.01, rng.Float64() + 0.01}
		s := q[0] + q[1] + q[2]
		for i := range q {
			q[i] /= s
		}
		// marginals m[t] for t = 0..T
		const T = 14
		m := [][]float64{q}
		for range T {
			m = append(m, step(m[len(m)-1], P))
		}
		pow := func(d int) [][]float64 { // P^d
			out := make([][]float64, k)
			for x := range out {
				out[x] = make([]float64, k)
				out[x][x] = 1
				for range d {
					out[x] = step(out[x], P)
				}
			}
			return out
		}
		maxRatio := func(cond func(x, y int) float64) float64 {
			e := 0.0
			for x := range k {
				for x2 := range k {
					for y := range k {
						e = max(e, math.Log(cond(x, y)/cond(x2, y)))
					}
				}
			}
			return e
		}
		kt := T // the secret's time
		prevB, prevF := math.Inf(1), math.Inf(1)
		for d := 1; d <= 10; d++ {
			Pd := pow(d)
			// backward: P(X_{kt−d} = y | X_kt = x) = m[kt−d](y) P^d(y, x) / m[kt](x)
			back := maxRatio(func(x, y int) float64 { return m[kt-d][y] * Pd[y][x] / m[kt][x] })
			fwd := maxRatio(func(x, y int) float64 { return Pd[x][y] })
			if back > prevB*(1+1e-12)+1e-15 || fwd > prevF*(1+1e-12)+1e-15 {
				t.Fatalf("trial %d, d = %d: backward %g after %g, forward %g after %g", trial, d, back, prevB, fwd, prevF)
			}
			prevB, prevF = back, fwd
		}
	}
}

// A release a billion steps after another composes at once (the gap is
// evaluated at gapCap) and no lower than with the gap evaluated exactly
// at a distance the oracle can still walk.
func TestLongGapComposesAtOnce(t *testing.T) {
	ch, _ := markov.New(nil, [][]float64{{0.999, 0.001}, {0.002, 0.998}}, markov.InitStationary, nil)
	cl, _ := markov.NewClass(ch.States, ch)
	total := func(gap int) *Total {
		rec := func(first int) *record.Release {
			return &record.Release{Mechanism: MQMExact, Epsilon: 0.5, Class: cl.Hash(), Segments: []record.Segment{{First: first, Last: first + 9}}}
		}
		lg, _, _, err := Append(nil, "d", cl, rec(1))
		if err != nil {
			t.Fatal(err)
		}
		_, _, tot, err := Append(lg, "d", cl, rec(10+gap))
		if err != nil {
			t.Fatal(err)
		}
		return &tot
	}
	far := total(1_000_000_000)
	if far.Rule != "mqm-parallel" || far.Epsilon.Cmp(big.NewRat(1, 2)) <= 0 {
		t.Fatalf("a billion steps apart: %v", far.Guarantee)
	}
	defer func(old int) { gapCap = old }(gapCap)
	gapCap = 1 << 20
	exact := total(gapCap - 1)
	if far.Epsilon.Cmp(exact.Epsilon) < 0 {
		t.Fatalf("capped %v below the gap evaluated at %d: %v", far.Guarantee, gapCap-1, exact.Guarantee)
	}
}
