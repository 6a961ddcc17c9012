package pairwise

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// referenceLP solves lpRatio's LP with gonum's general simplex on the full
// k×k formulation (no supports, no structure): variables γ (k²), column
// slacks (k) and t; rows Σ_j γ_ij = p_i, columns Σ_i G_ij γ_ij + s_j −
// q_j t = 0; minimise t. Entries G = +Inf are left out as variables.
func referenceLP(t *testing.T, p, q, G []float64) float64 {
	t.Helper()
	k := len(p)
	var cols [][]float64
	var cost []float64
	for i := range k {
		for j := range k {
			if math.IsInf(G[i*k+j], 1) {
				continue
			}
			c := make([]float64, 2*k)
			c[i] = 1
			c[k+j] = G[i*k+j]
			cols = append(cols, c)
			cost = append(cost, 0)
		}
	}
	for j := range k {
		c := make([]float64, 2*k)
		c[k+j] = 1
		cols = append(cols, c)
		cost = append(cost, 0)
	}
	c := make([]float64, 2*k)
	for j := range k {
		c[k+j] = -q[j]
	}
	cols = append(cols, c)
	cost = append(cost, 1)
	A := mat.NewDense(2*k, len(cols), nil)
	for v, col := range cols {
		for r, x := range col {
			A.Set(r, v, x)
		}
	}
	b := make([]float64, 2*k)
	copy(b, p)
	opt, _, err := lp.Simplex(cost, A, b, 1e-13, nil)
	if errors.Is(err, lp.ErrInfeasible) {
		return math.Inf(1) // a row that no plan can send anywhere
	}
	if err != nil {
		t.Fatalf("reference simplex: %v", err)
	}
	return opt
}

// closedForm is the closed-form plan's t of docs/math.md §8.10:
// γ = diag(m) + e·wᵀ with m = min(p, q), e = (p − q)⁺, g = eᵀG, feasible
// iff t ≥ (1 + Σ_j m_j/g_j)/(Σ_j q_j/g_j).
func closedForm(p, q, G []float64) float64 {
	k := len(p)
	e := make([]float64, k)
	any := false
	for i := range k {
		e[i] = math.Max(p[i]-q[i], 0)
		any = any || e[i] > 0
	}
	if !any {
		return 1
	}
	num, den := 1.0, 0.0
	for j := range k {
		g := 0.0
		for i := range k {
			if e[i] > 0 {
				g += e[i] * G[i*k+j]
			}
		}
		num += math.Min(p[j], q[j]) / g
		den += q[j] / g
	}
	return num / den
}

// randRow is a random probability row with about a fraction zero of zeros
// (never all zero).
func randRow(rng *rand.Rand, k int, zero float64) []float64 {
	r := make([]float64, k)
	s := 0.0
	for j := range r {
		if rng.Float64() >= zero {
			r[j] = rng.ExpFloat64()
			s += r[j]
		}
	}
	if s == 0 {
		r[rng.IntN(k)] = 1
		s = 1
	}
	for j := range r {
		r[j] /= s
	}
	return r
}

// randG is R·Λ off the diagonal with Λ_ij ∈ [1, spread], 1 on it.
func randG(rng *rand.Rand, k int, R, spread float64) []float64 {
	G := make([]float64, k*k)
	for i := range k {
		for j := range k {
			if i == j {
				G[i*k+j] = 1
			} else {
				G[i*k+j] = R * (1 + (spread-1)*rng.Float64())
			}
		}
	}
	return G
}

// banded returns the k×k chain with P(i, j) ∝ decay^|i−j| for |i−j| ≤ w.
func banded(k, w int, decay float64) [][]float64 {
	P := make([][]float64, k)
	for i := range k {
		P[i] = make([]float64, k)
		s := 0.0
		for j := max(0, i-w); j <= min(k-1, i+w); j++ {
			P[i][j] = math.Pow(decay, math.Abs(float64(i-j)))
			s += P[i][j]
		}
		for j := range k {
			P[i][j] /= s
		}
	}
	return P
}

func checkAgainstReference(t *testing.T, name string, p, q, G []float64) {
	t.Helper()
	got, ok := lpRatio(p, q, G)
	if !ok {
		t.Fatalf("%s: lpRatio failed", name)
	}
	want := referenceLP(t, p, q, G)
	if math.IsInf(want, 1) || math.IsInf(got, 1) {
		if got != want {
			t.Fatalf("%s: lpRatio %v, reference LP %v", name, got, want)
		}
		return
	}
	if got < want*(1-1e-12) || got > want*(1+1e-9) {
		t.Fatalf("%s: lpRatio %.15g, reference LP %.15g (p=%v q=%v)", name, got, want, p, q)
	}
	var s lpSolver
	if t2, _ := s.ratio(p, q, G); t2 != got || !verifyPlanExact(got, p, q, G, s.plan()) {
		t.Fatalf("%s: the plan does not prove t = %v", name, got)
	}
	if cf := closedForm(p, q, G); got > cf*(1+1e-12) {
		t.Fatalf("%s: lpRatio %.15g above the closed form %.15g", name, got, cf)
	}
}

// verifyPlanExact checks, in exact rational arithmetic, that the plan the
// solver certified has row sums ≥ p and column loads ≤ t·q: the returned
// t is backed by a plan whatever the rounding.
func verifyPlanExact(tv float64, p, q, G, plan []float64) bool {
	k := len(p)
	for i := range k {
		s := new(big.Rat)
		for j := range k {
			s.Add(s, new(big.Rat).SetFloat64(plan[i*k+j]))
		}
		if s.Cmp(new(big.Rat).SetFloat64(p[i])) < 0 {
			return false
		}
	}
	for j := range k {
		s := new(big.Rat)
		for i := range k {
			if plan[i*k+j] < 0 {
				return false
			}
			if plan[i*k+j] > 0 {
				s.Add(s, new(big.Rat).Mul(new(big.Rat).SetFloat64(plan[i*k+j]), new(big.Rat).SetFloat64(G[i*k+j])))
			}
		}
		if s.Cmp(new(big.Rat).Mul(new(big.Rat).SetFloat64(tv), new(big.Rat).SetFloat64(q[j]))) > 0 {
			return false
		}
	}
	return true
}

func TestLPRatioAgainstReferenceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		k := 2 + rng.IntN(11)
		zero := []float64{0, 0.3, 0.6}[trial%3]
		p, q := randRow(rng, k, zero), randRow(rng, k, zero)
		R := math.Exp(2 / (1 + 40*rng.Float64()))
		G := randG(rng, k, R, 1+3*rng.Float64())
		if trial%5 == 4 { // some pairs of states that no plan may join
			for range k {
				i, j := rng.IntN(k), rng.IntN(k)
				if i != j {
					G[i*k+j] = math.Inf(1)
				}
			}
		}
		checkAgainstReference(t, "random", p, q, G)
	}
}

func TestLPRatioAgainstReferenceBanded(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		k := 3 + rng.IntN(10)
		P := banded(k, 1+rng.IntN(3), 0.2+0.6*rng.Float64())
		a, b := rng.IntN(k), rng.IntN(k)
		if a == b {
			b = (a + 1) % k
		}
		// a closed cost matrix, as a fixed point gives: G = R·Λ with Λ
		// from a metric (Λ_ij = e^{c|i−j|}), so G is max-times closed.
		R := math.Exp(2 / (5 + 50*rng.Float64()))
		c := 0.01 + 0.3*rng.Float64()
		G := make([]float64, k*k)
		for i := range k {
			for j := range k {
				if i != j {
					G[i*k+j] = R * math.Exp(c*math.Abs(float64(i-j)))
				} else {
					G[i*k+j] = 1
				}
			}
		}
		checkAgainstReference(t, "banded", P[a], P[b], G)
	}
}

// With G = R off the diagonal the LP is the dual of docs/math.md (8.1):
// the optimum is max over subsets S of (1 + (R−1)p(S))/(1 + (R−1)q(S)).
func TestLPRatioUniformIsEquation81(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		k := 2 + rng.IntN(7)
		p, q := randRow(rng, k, 0.3), randRow(rng, k, 0.3)
		R := 1 + 3*rng.Float64()
		G := randG(rng, k, R, 1)
		want := 0.0
		for S := range 1 << k {
			ps, qs := 0.0, 0.0
			for j := range k {
				if S>>j&1 == 1 {
					ps += p[j]
					qs += q[j]
				}
			}
			want = math.Max(want, (1+(R-1)*ps)/(1+(R-1)*qs))
		}
		got, ok := lpRatio(p, q, G)
		if !ok || got < want*(1-1e-12) || got > want*(1+1e-9) {
			t.Fatalf("k=%d R=%v: lpRatio %v ok=%v, (8.1) %v", k, R, got, ok, want)
		}
	}
}

func TestLPRatioWarmStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var s lpSolver
	for trial := range 100 {
		k := 3 + rng.IntN(8)
		p, q := randRow(rng, k, 0.2), randRow(rng, k, 0.2)
		G := randG(rng, k, 1.1, 2)
		cold, ok := s.ratio(p, q, G)
		if !ok {
			t.Fatal("cold failed")
		}
		for step := range 5 {
			for i := range G {
				if G[i] != 1 {
					G[i] *= 1 + 0.01*rng.Float64()
				}
			}
			warm, ok := s.ratioWarm(p, q, G)
			want, ok2 := lpRatio(p, q, G)
			if !ok || !ok2 || math.Abs(warm-want) > 1e-9*want || !verifyPlanExact(warm, p, q, G, s.plan()) {
				t.Fatalf("trial %d step %d: warm %v (%v), cold %v (%v)", trial, step, warm, ok, want, ok2)
			}
			if warm < cold*(1-1e-12) {
				t.Fatalf("G grew but t fell: %v < %v", warm, cold)
			}
			cold = warm
		}
	}
}

// A basis saved per pair restarts that pair warm after other solves.
func TestLPRatioFromSavedBasis(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var s lpSolver
	for range 50 {
		k := 4 + rng.IntN(8)
		P := make([][]float64, k)
		for i := range P {
			P[i] = randRow(rng, k, 0.2)
		}
		G := randG(rng, k, 1.05, 1.5)
		saved := map[[2]int]lpBasis{}
		for a := range k {
			for b := range k {
				if a != b {
					if _, ok := s.ratio(P[a], P[b], G); !ok {
						t.Fatal("cold failed")
					}
					saved[[2]int{a, b}] = s.savedBasis()
				}
			}
		}
		for i := range G {
			if G[i] != 1 {
				G[i] *= 1 + 0.001*rng.Float64()
			}
		}
		for a := range k {
			for b := range k {
				if a == b {
					continue
				}
				warm, ok := s.ratioFrom(P[a], P[b], G, saved[[2]int{a, b}])
				cold, ok2 := lpRatio(P[a], P[b], G)
				if !ok || !ok2 || math.Abs(warm-cold) > 1e-9*cold || !verifyPlanExact(warm, P[a], P[b], G, s.plan()) {
					t.Fatalf("pair (%d,%d): warm %v %v, cold %v %v", a, b, warm, ok, cold, ok2)
				}
			}
		}
	}
	// a basis of another pair's supports is dropped, not trusted
	p, q := []float64{0.5, 0.5, 0}, []float64{0, 0.5, 0.5}
	G := randG(rng, 3, 1.1, 1)
	s.ratio(p, q, G)
	b := s.savedBasis()
	got, ok := s.ratioFrom(q, p, G, b)
	want, _ := lpRatio(q, p, G)
	if !ok || got != want {
		t.Fatalf("foreign basis: %v %v, want %v", got, ok, want)
	}
	if got, ok := s.ratioFrom(q, p, G, lpBasis{1, 2, 99}); !ok || got != want {
		t.Fatalf("bad basis: %v %v, want %v", got, ok, want)
	}
}

// Masses and costs over many orders of magnitude: whatever the simplex
// makes of them, a returned t is backed by a plan that holds in exact
// arithmetic, or the call says it could not solve (and the caller falls
// back to the closed form). Over 30 orders of masses and 6 of costs
// nearly every call solves; over 300 and 200 many give up, none lies.
func TestLPRatioExtremeScalesCertified(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, c := range []struct {
		mass, cost float64
		minSolved  int
	}{{30, 6, 290}, {300, 200, 50}} {
		solved := 0
		for range 300 {
			k := 2 + rng.IntN(9)
			row := func() []float64 {
				r := make([]float64, k)
				s := 0.0
				for j := range r {
					if rng.IntN(4) > 0 {
						r[j] = math.Pow(10, -c.mass*rng.Float64()*rng.Float64())
						s += r[j]
					}
				}
				if s == 0 {
					r[0], s = 1, 1
				}
				for j := range r {
					r[j] /= s
				}
				return r
			}
			p, q := row(), row()
			G := make([]float64, k*k)
			for i := range k {
				for j := range k {
					G[i*k+j] = 1
					if i != j {
						G[i*k+j] = math.Pow(10, c.cost*rng.Float64()*rng.Float64()*rng.Float64())
					}
				}
			}
			var s lpSolver
			tv, ok := s.ratio(p, q, G)
			if !ok || math.IsInf(tv, 1) {
				continue
			}
			solved++
			if !(tv >= 1) || !verifyPlanExact(tv, p, q, G, s.plan()) {
				t.Fatalf("t = %v is not backed by its plan (p=%v q=%v)", tv, p, q)
			}
		}
		if solved < c.minSolved {
			t.Fatalf("10^%v masses, 10^%v costs: only %d of 300 solved", c.mass, c.cost, solved)
		}
	}
}

// lpRatio may be called from many goroutines at once (its solvers are
// pooled): the same answers as one at a time.
func TestLPRatioConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	type inst struct{ p, q, G []float64 }
	var ins []inst
	var want []float64
	for range 64 {
		k := 2 + rng.IntN(12)
		in := inst{randRow(rng, k, 0.3), randRow(rng, k, 0.3), randG(rng, k, 1.1, 2)}
		v, ok := lpRatio(in.p, in.q, in.G)
		if !ok {
			t.Fatal("failed")
		}
		ins, want = append(ins, in), append(want, v)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(ins))
	for g := range 4 {
		wg.Go(func() {
			for i := range ins {
				j := (i + 17*g) % len(ins)
				if v, ok := lpRatio(ins[j].p, ins[j].q, ins[j].G); !ok || v != want[j] {
					errs <- fmt.Sprintf("instance %d: %v %v, want %v", j, v, ok, want[j])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestLPRatioEdges(t *testing.T) {
	// identical rows: t = 1
	p := []float64{0.2, 0.3, 0.5}
	G := randG(rand.New(rand.NewPCG(1, 1)), 3, 2, 2)
	if got, ok := lpRatio(p, p, G); !ok || got < 1 || got > 1+1e-12 {
		t.Fatalf("p = q: %v %v", got, ok)
	}
	// a row whose mass can go nowhere: +Inf (the trivial bound)
	inf := math.Inf(1)
	G2 := []float64{1, inf, inf, 1}
	if got, ok := lpRatio([]float64{1, 0}, []float64{0, 1}, G2); !ok || !math.IsInf(got, 1) {
		t.Fatalf("no route: %v %v", got, ok)
	}
	// bad input is refused, not solved
	for _, bad := range [][]float64{{1, 1.5, 0.5, 1}, {1, math.NaN(), 2, 1}, {2, 2, 2, 1}, {1, 2, 2, 0.5}} {
		if _, ok := lpRatio([]float64{0.5, 0.5}, []float64{0.3, 0.7}, bad); ok {
			t.Fatalf("G %v accepted", bad)
		}
	}
	if _, ok := lpRatio([]float64{0.5, -0.5}, []float64{0.3, 0.7}, []float64{1, 2, 2, 1}); ok {
		t.Fatal("negative p accepted")
	}
}

func benchBanded(b *testing.B, k int) {
	P := banded(k, 3, 0.5)
	R := math.Exp(2.0 / 50)
	G := make([]float64, k*k)
	for i := range k {
		for j := range k {
			if i != j {
				G[i*k+j] = R * math.Exp(0.05*math.Abs(float64(i-j)))
			} else {
				G[i*k+j] = 1
			}
		}
	}
	var s lpSolver
	b.ResetTimer()
	n := 0
	for b.Loop() {
		a := n % k
		a2 := (n/k + a + 1) % k
		if a2 == a {
			a2 = (a + 1) % k
		}
		if _, ok := s.ratio(P[a], P[a2], G); !ok {
			b.Fatal("failed")
		}
		n++
	}
}

func BenchmarkLPRatioBanded51(b *testing.B)  { benchBanded(b, 51) }
func BenchmarkLPRatioBanded101(b *testing.B) { benchBanded(b, 101) }
func BenchmarkLPRatioBanded201(b *testing.B) { benchBanded(b, 201) }

// benchDense is the UCI-like case: every entry positive (a fitted chain
// with smoothing), most of the mass near the diagonal.
func benchDense(b *testing.B, k int) {
	P := banded(k, k, 0.3)
	for i := range P {
		for j := range P[i] {
			P[i][j] += 1e-4
		}
	}
	R := math.Exp(2.0 / 500)
	G := make([]float64, k*k)
	for i := range k {
		for j := range k {
			if i != j {
				G[i*k+j] = R * math.Exp(0.002*math.Abs(float64(i-j)))
			} else {
				G[i*k+j] = 1
			}
		}
	}
	var s lpSolver
	pivots := 0
	n := 0
	for b.Loop() {
		a := n % k
		a2 := (n/k + a + 1) % k
		if a2 == a {
			a2 = (a + 1) % k
		}
		if _, ok := s.ratio(P[a], P[a2], G); !ok {
			b.Fatal("failed")
		}
		pivots += s.pivots
		n++
	}
	b.ReportMetric(float64(pivots)/float64(n), "pivots/op")
}

func BenchmarkLPRatioDense51(b *testing.B) { benchDense(b, 51) }

// BenchmarkLPRatioDense51Warm restarts every pair from its saved basis
// after G grew by 0.1%, as a fixed-point sweep does.
func BenchmarkLPRatioDense51Warm(b *testing.B) {
	const k = 51
	P := banded(k, k, 0.3)
	for i := range P {
		for j := range P[i] {
			P[i][j] += 1e-4
		}
	}
	normalise(P)
	G := make([]float64, k*k)
	for i := range k {
		for j := range k {
			G[i*k+j] = 1
			if i != j {
				G[i*k+j] = math.Exp(2.0/500) * math.Exp(0.002*math.Abs(float64(i-j)))
			}
		}
	}
	var s lpSolver
	saved := make([]lpBasis, k)
	for a := range k {
		s.ratio(P[a], P[(a+7)%k], G)
		saved[a] = s.savedBasis()
	}
	for i := range G {
		if G[i] != 1 {
			G[i] *= 1.001
		}
	}
	n, pivots := 0, 0
	for b.Loop() {
		a := n % k
		if _, ok := s.ratioFrom(P[a], P[(a+7)%k], G, saved[a]); !ok {
			b.Fatal("failed")
		}
		pivots += s.pivots
		n++
	}
	b.ReportMetric(float64(pivots)/float64(n), "pivots/op")
}

// A kernel computed with rounding (P* from a computed π) carries an
// entrywise error: the certified map must charge (1+3ρ)/(1−3ρ) to the LP's
// and the closed form's plans alike (docs/math.md §8.11). Checked with an
// exaggerated ρ = 10⁻³, so the charge is visible.
func TestBestPlanChargesRowError(t *testing.T) {
	P := randChain(rand.New(rand.NewPCG(7, 33)), 6)
	k := len(P)
	lam := make([]float64, k*k)
	for i := range lam {
		lam[i] = 1.3
		if i/k == i%k {
			lam[i] = 1
		}
	}
	R, up := 1.5, safety(k)
	exact, rounded := newKernel(P), newKernel(P)
	rounded.rowErr = 1e-3
	want := rounded.rowFactor()
	o0, o1 := make([]float64, k*k), make([]float64, k*k)
	for _, m := range []ratioMap{bestPlan, cfMap} {
		if err := m(context.Background(), exact, lam, R, up, o0); err != nil {
			t.Fatal(err)
		}
		if err := m(context.Background(), rounded, lam, R, up, o1); err != nil {
			t.Fatal(err)
		}
		for i := range o0 {
			if i/k != i%k && o0[i] > 1 && !(o1[i] >= o0[i]*want*(1-1e-15)) {
				t.Fatalf("pair %d: ratio %v with row error, %v without: want ×%v", i, o1[i], o0[i], want)
			}
		}
	}
}
