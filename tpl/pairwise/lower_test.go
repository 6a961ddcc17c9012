package pairwise

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl"
	"github.com/pufferfish-privacy/pufferfish/tpl/exact"
)

var (
	sticky3 = [][]float64{{0.8, 0.15, 0.05}, {0.1, 0.8, 0.1}, {0.05, 0.15, 0.8}}
	// the banded 4-level chain of docs/math.md §8.10 (rows normalised)
	banded4 = normalise([][]float64{
		{0.6827, 0.2981, 0.0096, 0.0096},
		{0.1538, 0.6827, 0.1538, 0.0096},
		{0.0096, 0.1538, 0.6827, 0.1538},
		{0.0096, 0.0096, 0.2981, 0.6827}})
	cyclic3 = [][]float64{{0.7, 0.25, 0.05}, {0.05, 0.7, 0.25}, {0.25, 0.05, 0.7}}
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

func randChain(rng *rand.Rand, k int) [][]float64 {
	P := make([][]float64, k)
	for i := range P {
		P[i] = randRow(rng, k, 0)
		P[i][i] += 1.5 * rng.Float64() // sticky, as meters are
	}
	return normalise(P)
}

// explicitLoss is the optimised explicit output's loss (the rounding
// margin taken off) for the ordered pair with exactly nb past and nf
// future steps: a stationary stream of nb+1+nf steps, the secret at step
// nb+1.
func explicitLoss(t *testing.T, P [][]float64, a, a2, nb, nf int, b float64) float64 {
	t.Helper()
	fw, err := newCSR(P)
	if err != nil {
		t.Fatal(err)
	}
	pi, err := stationaryGTH(context.Background(), P)
	if err != nil {
		t.Fatal(err)
	}
	lb := &lowerBounder{ctx: context.Background(), fw: fw, bw: reversalCSR(P, pi), eps: 1, sens: 2,
		piErr: gthError(len(P))}
	sides := make([]*side, 2)
	for i, c := range []struct {
		m *csr
		n int
	}{{lb.fw, nf}, {lb.bw, nb}} {
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

// The loss LowerBound evaluates is a true loss: on stationary streams of T
// per-step releases (windows of width 1) the explicit output's loss, for
// every pair and every place of the secret, never exceeds the brute force
// of the definition (tpl/exact), and the best of them attains it.
func TestLowerBoundExplicitOutputAgainstExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	chains := [][][]float64{sticky3, banded4, cyclic3, {{0.9, 0.1}, {0.3, 0.7}}, {{0.3, 0.7}, {0.6, 0.4}}}
	for range 4 {
		chains = append(chains, randChain(rng, 2+rng.IntN(2)))
	}
	for ci, P := range chains {
		k := len(P)
		pi, err := stationaryGTH(context.Background(), P)
		if err != nil {
			t.Fatal(err)
		}
		T := map[int]int{2: 6, 3: 4, 4: 4}[k]
		if ci == 0 {
			T = 5 // 3⁵ sequences × 2¹⁵ outputs: the costliest brute force here
		}
		widths := make([]int, T)
		for i := range widths {
			widths[i] = 1
		}
		bs := []float64{1, 4, 20 + 30*rng.Float64()}
		if k > 2 { // the brute force is costly: one scale
			bs = bs[2:]
		}
		for _, b := range bs {
			ex, err := exact.Loss([]exact.Series{{P: P, Q: pi}}, widths, b)
			if err != nil {
				t.Fatal(err)
			}
			best := 0.0
			for a := range k {
				for a2 := range k {
					if a == a2 {
						continue
					}
					for nb := range T {
						l := explicitLoss(t, P, a, a2, nb, T-1-nb, b)
						if l > ex {
							t.Fatalf("chain %d b=%v pair (%d,%d) nb=%d: explicit loss %.15g above the exact %.15g", ci, b, a, a2, nb, l, ex)
						}
						best = max(best, l)
					}
				}
			}
			if best < ex*(1-1e-9) {
				t.Errorf("chain %d T=%d b=%v: best explicit loss %.12g, exact %.12g", ci, T, b, best, ex)
			}
		}
	}
}

// pairwiseUpperLoss is an upper bound on the unbounded stationary stream's
// loss at scale b by the pairwise certificate of docs/math.md §8.10 with
// the best plans (lpRatio), the fixed point reached by value iteration
// from Λ = 1 and made a certificate by a margin checked with one more
// application of the map.
func pairwiseUpperLoss(t *testing.T, P [][]float64, b float64) float64 {
	t.Helper()
	k := len(P)
	pi, err := stationaryGTH(context.Background(), P)
	if err != nil {
		t.Fatal(err)
	}
	Ps := make([][]float64, k)
	for x := range k {
		Ps[x] = make([]float64, k)
		for y := range k {
			Ps[x][y] = pi[y] * P[y][x] / pi[x]
		}
	}
	R := math.Exp(2 / b)
	phi := func(M [][]float64, L []float64) []float64 {
		G := make([]float64, k*k)
		for i := range k {
			for j := range k {
				G[i*k+j] = 1
				if i != j {
					G[i*k+j] = R * L[i*k+j]
				}
			}
		}
		N := make([]float64, k*k)
		for a := range k {
			for a2 := range k {
				N[a*k+a2] = 1
				if a != a2 {
					tv, ok := lpRatio(M[a], M[a2], G)
					if !ok {
						t.Fatal("lpRatio failed")
					}
					N[a*k+a2] = tv
				}
			}
		}
		return N
	}
	fix := func(M [][]float64) []float64 {
		L := make([]float64, k*k)
		for i := range L {
			L[i] = 1
		}
		for range 20000 {
			N := phi(M, L)
			d := 0.0
			for i := range L {
				d = math.Max(d, N[i]/L[i]-1)
			}
			L = N
			if d < 1e-15 {
				break
			}
		}
		for i := range L {
			L[i] *= 1 + 1e-10
		}
		N := phi(M, L)
		for i := range L {
			if N[i] > L[i] {
				t.Fatalf("not a certificate: Φ(Λ) %v > Λ %v", N[i], L[i])
			}
		}
		return L
	}
	F, B := fix(P), fix(Ps)
	worst := 0.0
	for i := range F {
		worst = math.Max(worst, math.Log(F[i])+math.Log(B[i]))
	}
	return 2/b + worst
}

// LowerBound never exceeds the limit: at b_lo the certified pairwise bound
// and the scalar recursion of package tpl (docs/math.md §8.4), both upper
// bounds on the loss, are ≥ ε; and it is within 1% of the pairwise bound on
// the reversible chains (0.003% on sticky3 and banded4), 8% on random
// ones, 25% on the cyclic chain (where the pairwise bound is 17% above
// the exact limit and b_lo is at it).
func TestLowerBoundBelowUpperBounds(t *testing.T) {
	const eps = 0.5
	rng := rand.New(rand.NewPCG(13, 14))
	chains := [][][]float64{sticky3, banded4, cyclic3, {{0.9, 0.1}, {0.3, 0.7}}}
	for range 3 {
		chains = append(chains, randChain(rng, 3+rng.IntN(2)))
	}
	for ci, P := range chains {
		b, err := LowerBound(context.Background(), P, eps, 2)
		if err != nil {
			t.Fatal(err)
		}
		up := pairwiseUpperLoss(t, P, b)
		if up < eps*(1-1e-12) {
			t.Fatalf("chain %d: at b_lo %.9g the pairwise upper bound is %.12g < ε", ci, b, up)
		}
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := tpl.LeakageSup(ch, 2/b)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Loss < eps*(1-1e-12) {
			t.Fatalf("chain %d: at b_lo %.9g the scalar recursion bounds the loss by %.12g < ε", ci, b, sc.Loss)
		}
		tight := 1.01
		switch {
		case ci == 2: // cyclic: the pairwise bound is loose (+17% over the exact limit)
			tight = 1.25
		case ci > 3:
			// random chains, not reversible: the pairwise bound is up to 7%
			// loose; the explicit output is not (it attains the brute force
			// on every short stream, and 200 random restarts of the ascent
			// on the 7% case find no better output)
			tight = 1.08
		}
		if up := pairwiseUpperLoss(t, P, b*tight); up >= eps {
			t.Errorf("chain %d: b_lo %.9g is more than %v%% below the pairwise bound (loss %.9g at %.9g)", ci, b, 100*(tight-1), up, b*tight)
		}
		t.Logf("chain %d: b_lo %.6f", ci, b)
	}
}

// The two chains of docs/math.md §8.10 at ε = 0.5: b_lo and the pairwise
// bound with the best plans pin the limit to 5 digits (an earlier
// computation from the hull of reachable messages gave 29.285 and
// 49.197; the latter is 0.035% below this certified b_lo, so it is
// slightly low).
func TestLowerBoundTableChains(t *testing.T) {
	for _, c := range []struct {
		name   string
		P      [][]float64
		lo, hi float64
	}{{"sticky3", sticky3, 29.2850, 29.2855}, {"banded4", banded4, 49.2140, 49.2143}} {
		b, err := LowerBound(context.Background(), c.P, 0.5, 2)
		if err != nil || b < c.lo || b > c.hi {
			t.Fatalf("%s: b_lo %.6f (%v), want in [%v, %v]", c.name, b, err, c.lo, c.hi)
		}
		if up := pairwiseUpperLoss(t, c.P, c.hi); up >= 0.5 {
			t.Fatalf("%s: the pairwise bound at %v is %v ≥ 0.5", c.name, c.hi, up)
		}
	}
}

func TestLowerBoundPairsAndSensitivity(t *testing.T) {
	ctx := context.Background()
	all, err := LowerBound(ctx, banded4, 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	// an explicit pair can only give less or the same
	for a := range 4 {
		for a2 := range 4 {
			if a == a2 {
				continue
			}
			b, err := LowerBoundPairs(ctx, banded4, 0.5, 2, [][2]int{{a, a2}})
			if err != nil || b > all*(1+1e-9) {
				t.Fatalf("pair (%d,%d): %v %v, all pairs %v", a, a2, b, err, all)
			}
		}
	}
	// the loss depends on b only through R = e^{sensitivity/b}
	half, err := LowerBound(ctx, banded4, 0.5, 1)
	if err != nil || math.Abs(half-all/2) > 1e-9*all {
		t.Fatalf("sensitivity 1: %v, want %v", half, all/2)
	}
	// a two-state chain's worst pair is its only pair: both orders
	two := [][]float64{{0.9, 0.1}, {0.2, 0.8}}
	b1, _ := LowerBound(ctx, two, 1, 2)
	b2, _ := LowerBoundPairs(ctx, two, 1, 2, [][2]int{{0, 1}, {1, 0}})
	if b1 != b2 {
		t.Fatalf("two states: %v vs %v", b1, b2)
	}
}

func TestLowerBoundBadInput(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		P        [][]float64
		eps, s   float64
		pairs    [][2]int
		contains string
	}{
		{nil, 1, 2, nil, "empty"},
		{[][]float64{{1, 0}}, 1, 2, nil, "row 0 has 2 entries"},
		{[][]float64{{0.5, 0.6}, {0.5, 0.5}}, 1, 2, nil, "row 0 sums"},
		{[][]float64{{1.5, -0.5}, {0.5, 0.5}}, 1, 2, nil, "P[0][1]"},
		{[][]float64{{1, 0}, {0.5, 0.5}}, 1, 2, nil, "not irreducible"},
		{sticky3, 0, 2, nil, "ε"},
		{sticky3, math.NaN(), 2, nil, "ε"},
		{sticky3, 1, -1, nil, "sensitivity"},
		{sticky3, 1, 2, [][2]int{{0, 3}}, "pair"},
		{sticky3, 1, 2, [][2]int{{1, 1}}, "pair"},
	} {
		_, err := LowerBoundPairs(ctx, c.P, c.eps, c.s, c.pairs)
		if err == nil || !strings.Contains(err.Error(), c.contains) {
			t.Errorf("%v ε=%v s=%v %v: error %v, want one with %q", c.P, c.eps, c.s, c.pairs, err, c.contains)
		}
	}
}

// A cancelled context stops the work with its error.
func TestLowerBoundContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	P := banded(51, 2, 0.5)
	if _, err := LowerBound(ctx, P, 0.5, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := LowerBoundPairs(ctx, P, 0.5, 2, [][2]int{{0, 50}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled, given pair: %v", err)
	}
}

// π by GTH elimination against the definition πP = π on chains with
// entries over many orders of magnitude.
func TestStationaryGTH(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for range 50 {
		k := 2 + rng.IntN(30)
		P := make([][]float64, k)
		for i := range P {
			P[i] = make([]float64, k)
			for j := range P[i] {
				P[i][j] = math.Exp(-20 * rng.Float64())
			}
		}
		normalise(P)
		pi, err := stationaryGTH(context.Background(), P)
		if err != nil {
			t.Fatal(err)
		}
		for j := range k {
			s := 0.0
			for i := range k {
				s += pi[i] * P[i][j]
			}
			if math.Abs(s/pi[j]-1) > 1e-12 {
				t.Fatalf("k=%d: (πP)_%d/π_%d = %v", k, j, j, s/pi[j])
			}
		}
	}
}

func BenchmarkLowerBoundBanded51(b *testing.B) {
	P := banded(51, 3, 0.5)
	for i := range P { // a little everywhere, as smoothing leaves
		for j := range P[i] {
			P[i][j] += 1e-3
		}
	}
	normalise(P)
	for b.Loop() {
		if _, err := LowerBound(context.Background(), P, 0.5, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// On fast-mixing chains a short stream already loses nearly what the
// unbounded one does, so the brute force of the definition (tpl/exact,
// windows of width 1, stationary start, the secret anywhere) can check
// b_lo directly: at b_lo the exact loss of a stream of T steps is within
// 0.2–1.6% below ε (what the steps beyond the short stream add), and not
// above ε (the short stream loses no more than the unbounded one, which
// loses exactly ε at the limit: a loss above ε would put b_lo visibly
// below the limit).
func TestLowerBoundExactLossAtBLo(t *testing.T) {
	const eps = 0.5
	for _, c := range []struct {
		P   [][]float64
		T   int
		tol float64
	}{
		{[][]float64{{0.6, 0.4}, {0.4, 0.6}}, 8, 3e-3},
		{[][]float64{{0.7, 0.3}, {0.45, 0.55}}, 8, 6e-3},
		{[][]float64{{0.45, 0.33, 0.22}, {0.3, 0.4, 0.3}, {0.25, 0.33, 0.42}}, 5, 2e-2}, // 2 steps each side
	} {
		b, err := LowerBound(context.Background(), c.P, eps, 2)
		if err != nil {
			t.Fatal(err)
		}
		pi, err := stationaryGTH(context.Background(), c.P)
		if err != nil {
			t.Fatal(err)
		}
		widths := make([]int, c.T)
		for i := range widths {
			widths[i] = 1
		}
		ex, err := exact.Loss([]exact.Series{{P: c.P, Q: pi}}, widths, b)
		if err != nil {
			t.Fatal(err)
		}
		if ex < eps*(1-c.tol) || ex > eps*(1+1e-9) {
			t.Fatalf("%v: at b_lo = %.6f the exact loss of %d steps is %.9f, want within %v of ε = %v", c.P, b, c.T, ex, c.tol, eps)
		}
		t.Logf("%v: b_lo %.6f, exact loss of %d steps %.9f", c.P, b, c.T, ex)
	}
}
