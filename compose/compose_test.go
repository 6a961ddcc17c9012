package compose

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// lapRelease is F(x) + Lap(b) for a scalar F.
type lapRelease struct {
	F func(x []int) float64
	b float64
}

// sequences enumerates all k^T sequences of the chain with probabilities.
func sequences(q []float64, P [][]float64, T int) ([][]int, []float64) {
	k := len(q)
	var xs [][]int
	var ps []float64
	x := make([]int, T)
	var rec func(t int, p float64)
	rec = func(t int, p float64) {
		if p == 0 {
			return
		}
		if t == T {
			xs = append(xs, slices.Clone(x))
			ps = append(ps, p)
			return
		}
		for v := range k {
			x[t] = v
			if t == 0 {
				rec(1, q[v])
			} else {
				rec(t+1, p*P[x[t-1]][v])
			}
		}
	}
	rec(0, 1)
	return xs, ps
}

// jointLoss is the exact privacy loss of releasing all rel together, over
// secrets X_t = a vs X_t = b for t in positions (1-based): the supremum over
// outputs of the log density ratio. The density of the joint output is, in
// every cell of the grid of F-values, a ratio of multilinear functions of
// e^{2w_c/b_c}, so the supremum is attained at grid vertices, the tails
// (w_c → ±∞) included (see framework.LaplaceLoss for one dimension).
func jointLoss(q []float64, P [][]float64, T int, rel []lapRelease, positions []int) float64 {
	xs, ps := sequences(q, P, T)
	k := len(q)
	vals := make([][]float64, len(rel)) // F values per release per sequence
	grid := make([][]float64, len(rel))
	for c, r := range rel {
		vals[c] = make([]float64, len(xs))
		for s, x := range xs {
			vals[c][s] = r.F(x)
		}
		g := slices.Clone(vals[c])
		slices.Sort(g)
		g = slices.Compact(g)
		grid[c] = append(g, math.Inf(1), math.Inf(-1))
	}
	logK := func(c int, w, f float64) float64 { return logKernel(rel[c].b, w, f) }
	loss := 0.0
	vertex := make([]float64, len(rel))
	for _, t := range positions {
		for a := range k {
			for b := range k {
				if a == b {
					continue
				}
				var ma, mb float64
				for s, x := range xs {
					if x[t-1] == a {
						ma += ps[s]
					}
					if x[t-1] == b {
						mb += ps[s]
					}
				}
				if ma == 0 || mb == 0 {
					continue
				}
				var walk func(c int)
				walk = func(c int) {
					if c == len(rel) {
						la, lb := math.Inf(-1), math.Inf(-1)
						for s, x := range xs {
							l := math.Log(ps[s])
							for cc := range rel {
								l += logK(cc, vertex[cc], vals[cc][s])
							}
							if x[t-1] == a {
								la = logAdd(la, l)
							} else if x[t-1] == b {
								lb = logAdd(lb, l)
							}
						}
						loss = max(loss, la-math.Log(ma)-(lb-math.Log(mb)))
						return
					}
					for _, w := range grid[c] {
						vertex[c] = w
						walk(c + 1)
					}
				}
				walk(0)
			}
		}
	}
	return loss
}

// logKernel is log of the Laplace(b) kernel exp(−|w − f|/b) at w, or, at
// w = ±∞, its limit up to a factor common to every f (exp(±f/b)).
func logKernel(b, w, f float64) float64 {
	switch {
	case math.IsInf(w, 1):
		return f / b
	case math.IsInf(w, -1):
		return -f / b
	}
	return -math.Abs(w-f) / b
}

func logAdd(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	m := max(a, b)
	return m + math.Log(math.Exp(a-m)+math.Exp(b-m))
}

func randomBinary(rng *rand.Rand) (q []float64, P [][]float64) {
	p0, p1 := 0.1+0.8*rng.Float64(), 0.1+0.8*rng.Float64()
	a := rng.Float64()
	return []float64{a, 1 - a}, [][]float64{{p0, 1 - p0}, {1 - p1, p1}}
}

// segScale is MQMExact's σ for a 1-Lipschitz query on segment [s, e] of the
// chain (q, P): the subchain starts from the marginal q·P^{s−1}.
func segScale(t *testing.T, q []float64, P [][]float64, s, e int, eps float64) float64 {
	t.Helper()
	qs := slices.Clone(q)
	for range s - 1 {
		qs = step(qs, P)
	}
	ch, err := markov.New(nil, P, markov.InitGiven, qs)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := markov.NewClass(ch.States, ch)
	if err != nil {
		t.Fatal(err)
	}
	r, err := mqm.Scale(cl, e-s+1, eps, mqm.Exact)
	if err != nil {
		t.Fatal(err)
	}
	return r.Sigma
}

func countOnes(s, e int) func([]int) float64 {
	return func(x []int) float64 {
		c := 0
		for _, v := range x[s-1 : e] {
			c += v
		}
		return float64(c)
	}
}

func ledger(t *testing.T, q []float64, P [][]float64, T int) *Ledger {
	t.Helper()
	ch, err := markov.New(nil, P, markov.InitGiven, q)
	if err != nil {
		t.Fatal(err)
	}
	cl, _ := markov.NewClass(ch.States, ch)
	l := New()
	if err := l.AddDataset(Dataset{Name: "d", Length: T, Class: cl}); err != nil {
		t.Fatal(err)
	}
	return l
}

func all(T int) []int {
	out := make([]int, T)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// III.7 by brute force: two MQMExact releases on the whole chain.
func TestSequentialByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := range 12 {
		q, P := randomBinary(rng)
		T := 6
		e1, e2 := 0.3+2*rng.Float64(), 0.3+2*rng.Float64()
		rel := []lapRelease{{countOnes(1, T), segScale(t, q, P, 1, T, e1)}, {countOnes(1, 3), segScale(t, q, P, 1, T, e2)}}
		l := ledger(t, q, P, T)
		l.Record(Release{Name: "a", Dataset: "d", Kind: MQMExact, Epsilon: e1})
		l.Record(Release{Name: "b", Dataset: "d", Kind: MQMExact, Epsilon: e2})
		g, err := l.Guarantee("d")
		if err != nil {
			t.Fatal(err)
		}
		if g.Best.Rule != "mqm-sequential" || math.Abs(g.Best.Float()-(e1+e2)) > 1e-12 {
			t.Fatalf("claim %+v", g.Best)
		}
		if loss := jointLoss(q, P, T, rel, all(T)); loss > g.Best.Float()*(1+1e-9) {
			t.Fatalf("trial %d: joint loss %g > claim %g", trial, loss, g.Best.Float())
		}
	}
}

// III.1 (generalised) by brute force on two and three disjoint segments,
// each released with MQMExact calibrated on its own segment.
// The same with every gap evaluated at distance 1 (gapCap = 1): the
// influence at a shorter distance bounds a longer gap's (docs/math.md §4.5,
// "Long gaps"), so the loosened claim must hold as well.
func TestParallelByBruteForce(t *testing.T) {
	for _, c := range []int{gapCap, 1} {
		parallelByBruteForce(t, c)
	}
}

func parallelByBruteForce(t *testing.T, cap int) {
	defer func(old int) { gapCap = old }(gapCap)
	gapCap = cap
	rng := rand.New(rand.NewPCG(33, 34))
	layouts := [][][2]int{{{1, 3}, {5, 8}}, {{1, 2}, {3, 5}}, {{1, 2}, {4, 5}, {7, 8}}, {{2, 3}, {4, 4}, {6, 7}}}
	for trial := range 16 {
		q, P := randomBinary(rng)
		segs := layouts[trial%len(layouts)]
		T := segs[len(segs)-1][1] + trial%2
		l := ledger(t, q, P, T)
		var rel []lapRelease
		var pos []int
		for i, s := range segs {
			eps := 0.3 + 3*rng.Float64()
			rel = append(rel, lapRelease{countOnes(s[0], s[1]), segScale(t, q, P, s[0], s[1], eps)})
			cal := &Calibration{Start: s[0], Length: s[1] - s[0] + 1}
			if err := l.Record(Release{Name: string(rune('a' + i)), Dataset: "d", Kind: MQMExact, Epsilon: eps, Start: s[0], End: s[1], Calibration: cal}); err != nil {
				t.Fatal(err)
			}
			for p := s[0]; p <= s[1]; p++ {
				pos = append(pos, p)
			}
		}
		g, err := l.Guarantee("d")
		if err != nil {
			t.Fatal(err)
		}
		var par Claim
		for _, c := range g.Claims {
			if c.Rule == "mqm-parallel" {
				par = c
			}
		}
		if !par.Applies {
			t.Fatalf("parallel rule did not apply: %+v", par)
		}
		if loss := jointLoss(q, P, T, rel, pos); loss > par.Float()*(1+1e-9) {
			t.Fatalf("trial %d %v: joint loss %g > claim %g (%s)", trial, segs, loss, par.Float(), par.Why)
		}
	}
}

// III.3 (reconstructed) by brute force: MQMApprox releases whose σ is
// attained by a two-sided quilt, on segments separated by the quilts' reach,
// jointly cost only max ε.
func TestFarSegmentsByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	checked := 0
	for trial := 0; trial < 200 && checked < 6; trial++ {
		s := 0.55 + 0.1*rng.Float64() // symmetric, fast-mixing chains
		P := [][]float64{{s, 1 - s}, {1 - s, s}}
		ch, _ := markov.New(nil, P, markov.InitStationary, nil)
		cl, _ := markov.NewClass(ch.States, ch)
		n := 4 + rng.IntN(2)
		epsA, epsB := 6+4*rng.Float64(), 6+4*rng.Float64()
		ra, err := mqm.Scale(cl, n, epsA, mqm.Approx)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := mqm.Scale(cl, n, epsB, mqm.Approx)
		if !ra.TwoSided || !rb.TwoSided {
			continue
		}
		gap := max(ra.Quilt.B, rb.Quilt.A)
		T := 2*n + gap - 1
		if T > 12 {
			continue
		}
		q := []float64{0.5, 0.5}
		l := New()
		l.AddDataset(Dataset{Name: "d", Length: T, Class: cl})
		l.Record(Release{Name: "a", Dataset: "d", Kind: MQMApprox, Epsilon: epsA, Start: 1, End: n, Active: &Quilt{A: ra.Quilt.A, B: ra.Quilt.B}})
		l.Record(Release{Name: "b", Dataset: "d", Kind: MQMApprox, Epsilon: epsB, Start: n + gap, End: T, Active: &Quilt{A: rb.Quilt.A, B: rb.Quilt.B}})
		g, err := l.Guarantee("d")
		if err != nil {
			t.Fatal(err)
		}
		var far Claim
		for _, c := range g.Claims {
			if c.Rule == "mqmapprox-far" {
				far = c
			}
		}
		if !far.Applies || far.Float() != max(epsA, epsB) {
			t.Fatalf("far rule: %+v", far)
		}
		rel := []lapRelease{{countOnes(1, n), ra.Sigma}, {countOnes(n+gap, T), rb.Sigma}}
		var pos []int
		for p := 1; p <= T; p++ {
			if p <= n || p >= n+gap {
				pos = append(pos, p)
			}
		}
		if loss := jointLoss(q, P, T, rel, pos); loss > far.Float()*(1+1e-9) {
			t.Fatalf("trial %d: joint loss %g > max ε %g", trial, loss, far.Float())
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no instance met the far-segments conditions")
	}
}

// III.6 (reconstructed) by brute force: with Δ measured as the two-way
// max-divergence between the joint output law and the product of the
// marginals, the pair costs at most ε₁ + ε₂ + 2Δ.
func TestMaxDivergenceByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	for trial := range 8 {
		q, P := randomBinary(rng)
		T := 5
		e1, e2 := 0.5+rng.Float64(), 0.5+rng.Float64()
		rel := []lapRelease{{countOnes(1, T), segScale(t, q, P, 1, T, e1)}, {countOnes(2, 4), segScale(t, q, P, 1, T, e2)}}
		l1 := jointLoss(q, P, T, rel[:1], all(T))
		l2 := jointLoss(q, P, T, rel[1:], all(T))
		delta := dependence(q, P, T, rel)
		l := ledger(t, q, P, T)
		l.Record(Release{Name: "a", Dataset: "d", Kind: Pufferfish, Epsilon: l1})
		l.Record(Release{Name: "b", Dataset: "d", Kind: Pufferfish, Epsilon: l2})
		if _, err := l.Guarantee("d"); !errors.Is(err, ErrNoRule) {
			t.Fatalf("two generic releases without Δ must have no rule, got %v", err)
		}
		l.Dependence("a", "b", delta)
		g, err := l.Guarantee("d")
		if err != nil {
			t.Fatal(err)
		}
		if g.Best.Rule != "max-divergence" {
			t.Fatalf("best %+v", g.Best)
		}
		if loss := jointLoss(q, P, T, rel, all(T)); loss > g.Best.Float()*(1+1e-9) {
			t.Fatalf("trial %d: joint %g > ε₁ + ε₂ + 2Δ = %g", trial, loss, g.Best.Float())
		}
	}
}

// dependence is Δ = max over secrets X_t = a of sup_w |log p(w₁,w₂|s) −
// log p(w₁|s)p(w₂|s)|, at grid vertices (both sides are multilinear ratios
// in each cell, as in jointLoss).
func dependence(q []float64, P [][]float64, T int, rel []lapRelease) float64 {
	xs, ps := sequences(q, P, T)
	grid := make([][]float64, 2)
	for c := range 2 {
		for _, x := range xs {
			grid[c] = append(grid[c], rel[c].F(x))
		}
		slices.Sort(grid[c])
		grid[c] = append(slices.Compact(grid[c]), math.Inf(1), math.Inf(-1))
	}
	logK := func(c int, w, f float64) float64 { return logKernel(rel[c].b, w, f) }
	delta := 0.0
	for t := 1; t <= T; t++ {
		for a := range 2 {
			for _, w1 := range grid[0] {
				for _, w2 := range grid[1] {
					j, m1, m2 := math.Inf(-1), math.Inf(-1), math.Inf(-1)
					for s, x := range xs {
						if x[t-1] != a {
							continue
						}
						l := math.Log(ps[s])
						k1, k2 := logK(0, w1, rel[0].F(x)), logK(1, w2, rel[1].F(x))
						j = logAdd(j, l+k1+k2)
						m1 = logAdd(m1, l+k1)
						m2 = logAdd(m2, l+k2)
					}
					if math.IsInf(j, -1) {
						continue
					}
					// normalise: p(s) cancels once in j, twice in m1·m2
					ma := math.Inf(-1)
					for s, x := range xs {
						if x[t-1] == a {
							ma = logAdd(ma, math.Log(ps[s]))
						}
					}
					delta = max(delta, math.Abs((j-ma)-(m1-ma+m2-ma)))
				}
			}
		}
	}
	return delta
}

// [SC17] Theorem III.4's phenomenon on a Markov chain (three independent fair
// bits, i.e. a chain with uniform rows): M₁ = RR(X₁⊕X₂⊕X₃) and
// M₂ = RR(X₂⊕X₃) (keep 3/4) are each 0-Pufferfish for every secret X_t = a,
// since each parity is independent of any single bit; together they reveal
// X₁ = M₁⊕M₂ up to noise: at M₁ = M₂ = 0 the ratio for X₁ is 5/3 > e^{0+0}.
func TestTwoPrivateReleasesThatDoNotCompose(t *testing.T) {
	keep, flip := big.NewRat(3, 4), big.NewRat(1, 4)
	rr := func(out, in int) *big.Rat {
		if out == in {
			return keep
		}
		return flip
	}
	eighth := big.NewRat(1, 8)
	// P(outputs | X_t = a) for the chosen outputs (nil = marginalise).
	prob := func(t, a int, m1, m2 *int) *big.Rat {
		s := new(big.Rat)
		for code := range 8 {
			x := []int{code & 1, code >> 1 & 1, code >> 2 & 1}
			if x[t] != a {
				continue
			}
			p := new(big.Rat).Set(eighth)
			if m1 != nil {
				p.Mul(p, rr(*m1, x[0]^x[1]^x[2]))
			}
			if m2 != nil {
				p.Mul(p, rr(*m2, x[1]^x[2]))
			}
			s.Add(s, p)
		}
		return s.Quo(s, big.NewRat(1, 2)) // P(X_t = a) = 1/2
	}
	worst := func(use1, use2 bool) *big.Rat {
		w := big.NewRat(1, 1)
		for t := range 3 {
			for o := range 4 {
				m1, m2 := o&1, o>>1
				var p1, p2 *int
				if use1 {
					p1 = &m1
				}
				if use2 {
					p2 = &m2
				}
				r := new(big.Rat).Quo(prob(t, 0, p1, p2), prob(t, 1, p1, p2))
				if r.Cmp(big.NewRat(1, 1)) < 0 {
					r.Inv(r)
				}
				if r.Cmp(w) > 0 {
					w = r
				}
			}
		}
		return w
	}
	if r := worst(true, false); r.Cmp(big.NewRat(1, 1)) != 0 {
		t.Fatalf("M₁ alone has ratio %s", r.RatString())
	}
	if r := worst(false, true); r.Cmp(big.NewRat(1, 1)) != 0 {
		t.Fatalf("M₂ alone has ratio %s", r.RatString())
	}
	if r := worst(true, true); r.Cmp(big.NewRat(5, 3)) != 0 {
		t.Fatalf("the pair has ratio %s, want 5/3", r.RatString())
	}
}

func TestLedgerRules(t *testing.T) {
	indep, _ := markov.New(nil, [][]float64{{0.3, 0.7}, {0.3, 0.7}}, markov.InitStationary, nil)
	corr, _ := markov.New(nil, [][]float64{{0.9, 0.1}, {0.2, 0.8}}, markov.InitStationary, nil)
	ci, _ := markov.NewClass(indep.States, indep)
	cc, _ := markov.NewClass(corr.States, corr)
	l := New()
	l.AddDataset(Dataset{Name: "i", Length: 10, Class: ci})
	l.AddDataset(Dataset{Name: "c", Length: 10, Class: cc, Theta: "fitted"})
	for _, d := range []string{"i", "c"} {
		l.Record(Release{Name: d + "1", Dataset: d, Kind: DP, Epsilon: 0.5, Start: 1, End: 5})
		l.Record(Release{Name: d + "2", Dataset: d, Kind: DP, Epsilon: 0.25, Start: 4, End: 10})
	}
	g, err := l.Guarantee("i")
	if err != nil || g.Best.Rule != "dp" || g.Best.Float() != 0.75 {
		t.Fatalf("independent DP: %+v %v", g.Best, err)
	}
	g, err = l.Guarantee("c")
	// records 1-3: 0.5 each, 4-5: 0.75 each, 6-10: 0.25 each → 4.25
	if err != nil || g.Best.Rule != "dp-group" || math.Abs(g.Best.Float()-4.25) > 1e-12 {
		t.Fatalf("correlated DP: %+v %v", g.Best, err)
	}
	if err := l.Record(Release{Name: "x", Dataset: "c", Kind: MQMExact, Epsilon: 1, Start: 5, End: 11}); err == nil {
		t.Fatal("segment beyond the chain accepted")
	}
	if err := l.Record(Release{Name: "x", Dataset: "nope", Kind: MQMExact, Epsilon: 1}); err == nil {
		t.Fatal("unknown dataset accepted")
	}
	l2 := New()
	l2.AddDataset(Dataset{Name: "c", Length: 10, Class: cc, Theta: "fitted"})
	l2.Record(Release{Name: "a", Dataset: "c", Kind: MQMExact, Epsilon: 1, Start: 1, End: 6})
	l2.Record(Release{Name: "b", Dataset: "c", Kind: MQMExact, Epsilon: 1, Start: 4, End: 10})
	if _, err := l2.Guarantee("c"); !errors.Is(err, ErrNoRule) {
		t.Fatalf("overlapping segments: %v", err)
	}
	l3 := New()
	l3.AddDataset(Dataset{Name: "c", Length: 10, Class: cc, Theta: "fitted"})
	l3.Record(Release{Name: "a", Dataset: "c", Kind: MQMExact, Epsilon: 1, Theta: "other"})
	if _, err := l3.Guarantee("c"); !errors.Is(err, ErrNoRule) {
		t.Fatalf("different Θ: %v", err)
	}
}

// Forward and Backward equal the max-influence computed from the joint
// distribution of all sequences (chains with positive marginals).
func TestInfluenceAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	for range 40 {
		q, P := randomBinary(rng)
		T := 7
		j, k := 1+rng.IntN(3), 4+rng.IntN(4)
		xs, ps := sequences(q, P, T)
		joint := [2][2]float64{}
		for s, x := range xs {
			joint[x[j-1]][x[k-1]] += ps[s]
		}
		mj := [2]float64{joint[0][0] + joint[0][1], joint[1][0] + joint[1][1]}
		mk := [2]float64{joint[0][0] + joint[1][0], joint[0][1] + joint[1][1]}
		fwd, bwd := 0.0, 0.0
		for a := range 2 {
			for b := range 2 {
				for v := range 2 {
					fwd = max(fwd, math.Log(joint[a][v]/mj[a]/(joint[b][v]/mj[b])))
					bwd = max(bwd, math.Log(joint[v][a]/mk[a]/(joint[v][b]/mk[b])))
				}
			}
		}
		ch, _ := markov.New(nil, P, markov.InitGiven, q)
		cl, _ := markov.NewClass(ch.States, ch)
		f, err := Forward(cl, k-j, j)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(f-fwd) > 1e-9 || f < fwd {
			t.Fatalf("forward %g, enumeration %g", f, fwd)
		}
		b, err := Backward(cl, k-j, k)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(b-bwd) > 1e-9 || b < bwd {
			t.Fatalf("backward %g, enumeration %g", b, bwd)
		}
	}
}

func step(q []float64, P [][]float64) []float64 {
	out := make([]float64, len(q))
	for u, w := range q {
		for v, p := range P[u] {
			out[v] += w * p
		}
	}
	return out
}

// A segment release must be calibrated at its start: with q = (1, 0) the
// segment [5, 6] calibrated at time 1 gets σ = 0.25 for ε = 4 while its true
// loss is 7.47; the ledger refuses it without a matching calibration.
func TestSegmentCalibrationChecked(t *testing.T) {
	q := []float64{1, 0}
	P := [][]float64{{0.9993414172575612, 0.0006585827424387219}, {0.4008305458724634, 0.5991694541275365}}
	if at1, at5 := segScale(t, q, P, 1, 2, 4), segScale(t, q, P, 5, 6, 4); at5 <= at1 {
		t.Fatalf("σ at time 1 %v, at time 5 %v: the example should need more noise later", at1, at5)
	}
	for _, c := range []struct {
		cal  *Calibration
		want string
	}{
		{nil, "fixed initial distribution"},
		{&Calibration{Start: 1, Length: 2}, "was calibrated for [1, 2]"},
		{&Calibration{Start: 5, Length: 3}, "was calibrated for [5, 7]"},
		{&Calibration{Start: 5, Length: 2}, ""},
	} {
		l := ledger(t, q, P, 6)
		err := l.Record(Release{Name: "seg", Dataset: "d", Kind: MQMExact, Epsilon: 4, Start: 5, End: 6, Calibration: c.cal})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("calibration %+v: error %v, want %q", c.cal, err, c.want)
		}
	}
}

// A recorded ε is an exact decimal: ten releases of 0.1 spend exactly 1,
// 0.1 + 0.2 exactly 0.3 (float sums give 0.9999999999999999 and
// 0.30000000000000004).
func TestExactSums(t *testing.T) {
	ch, _ := markov.New(nil, [][]float64{{0.9, 0.1}, {0.2, 0.8}}, markov.InitStationary, nil)
	cl, _ := markov.NewClass(ch.States, ch)
	for _, c := range []struct {
		eps  []float64
		want *big.Rat
	}{
		{[]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, big.NewRat(1, 1)},
		{[]float64{0.1, 0.2}, big.NewRat(3, 10)},
		{[]float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, big.NewRat(9999999999999999, 1e16)},
	} {
		l := New()
		l.AddDataset(Dataset{Name: "d", Length: 10, Class: cl})
		for i, e := range c.eps {
			if err := l.Record(Release{Name: fmt.Sprint(i), Dataset: "d", Kind: MQMExact, Epsilon: e}); err != nil {
				t.Fatal(err)
			}
		}
		g, err := l.Guarantee("d")
		if err != nil {
			t.Fatal(err)
		}
		if g.Best.Rule != "mqm-sequential" || g.Best.Epsilon.Cmp(c.want) != 0 {
			t.Errorf("%v: %s %v, want %v", c.eps, g.Best.Rule, g.Best.Epsilon, c.want)
		}
		if fmt.Sprint(g.Best.Float()) != c.want.FloatString(16) && g.Best.Float() != guarantee.Up(c.want) {
			t.Errorf("shown %v", g.Best.Float())
		}
	}
}
