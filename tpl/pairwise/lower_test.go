package pairwise

import (
	"context"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/tpl/exact"
)

var (
	sticky3 = [][]float64{{0.8, 0.15, 0.05}, {0.1, 0.8, 0.1}, {0.05, 0.15, 0.8}}
	banded4 = normalise([][]float64{
		{0.6827, 0.2981, 0.0096, 0.0096},
		{0.1538, 0.6827, 0.1538, 0.0096},
		{0.0096, 0.1538, 0.6827, 0.1538},
		{0.0096, 0.0096, 0.2981, 0.6827}})
)

func normalise(P [][]float64) [][]float64 {
	for _, r := range P {
		s := 0.0
		for _, x := range r {
			s += x
		}
		for j := range r {
			r[j] /= s
		}
	}
	return P
}

func TestLowerBoundQuick(t *testing.T) {
	for _, c := range []struct {
		P     [][]float64
		exact float64
	}{{sticky3, 29.285}, {banded4, 49.197}} {
		b, err := LowerBound(context.Background(), c.P, 0.5, 2)
		t.Logf("b_lo %.6f exact %.3f (%.3f%%) err %v", b, c.exact, 100*(b/c.exact-1), err)
	}
}

// explicitLoss is the optimised explicit output's loss (the rounding
// margin included) for the ordered pair with exactly nb past and nf
// future steps: a stream of nb+1+nf steps, the secret at step nb+1.
func explicitLoss(t *testing.T, P [][]float64, a, a2, nb, nf int, b float64) float64 {
	t.Helper()
	fw, err := newCSR(P)
	if err != nil {
		t.Fatal(err)
	}
	pi, err := stationaryGTH(P)
	if err != nil {
		t.Fatal(err)
	}
	k := len(P)
	lb := &lowerBounder{ctx: context.Background(), fw: fw, bw: reversalCSR(P, pi), eps: 1, sens: 2,
		piErr: 2 * float64(k*k*k) * unitRound}
	sides := make([]*side, 2)
	for i, c := range []struct {
		m *csr
		n int
	}{{lb.fw, nf}, {lb.bw, nb}} {
		if c.n == 0 {
			sides[i] = &side{m: c.m, a: a, b: a2}
			continue
		}
		if sides[i], err = lb.newSideN(c.m, a, a2, c.n, 0); err != nil {
			t.Fatal(err)
		}
	}
	l, err := lb.optimise(sides[0], sides[1], b)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestExplicitVsExactProbe(t *testing.T) {
	for _, P := range [][][]float64{sticky3, banded4} {
		k := len(P)
		pi, _ := stationaryGTH(P)
		T := 4
		if k == 3 {
			T = 5
		}
		for _, b := range []float64{5, 29.285, 49.197} {
			widths := make([]int, T)
			for i := range widths {
				widths[i] = 1
			}
			ex, err := exact.Loss([]exact.Series{{P: P, Q: pi}}, widths, b)
			if err != nil {
				t.Fatal(err)
			}
			mine := 0.0
			for a := range k {
				for a2 := range k {
					if a == a2 {
						continue
					}
					for nb := 0; nb < T; nb++ {
						mine = max(mine, explicitLoss(t, P, a, a2, nb, T-1-nb, b))
					}
				}
			}
			t.Logf("k=%d T=%d b=%v exact %.12f mine %.12f", k, T, b, ex, mine)
		}
	}
}
