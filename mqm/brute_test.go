package mqm

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// This file checks the mechanism against the Pufferfish definition itself,
// computed by enumerating all k^T sequences — independently of the oracle
// formulas (no P^d tables, no quilt terms).

// joint enumerates every sequence of length T with its probability under
// (q, P).
func joint(q []float64, P [][]float64, T int) (seqs [][]int, probs []float64) {
	k := len(q)
	n := 1
	for range T {
		n *= k
	}
	for code := range n {
		seq := make([]int, T)
		c := code
		for t := range T {
			seq[t] = c % k
			c /= k
		}
		p := q[seq[0]]
		for t := 1; t < T && p > 0; t++ {
			p *= P[seq[t-1]][seq[t]]
		}
		seqs = append(seqs, seq)
		probs = append(probs, p)
	}
	return
}

// bruteInfluence is max over x≠x' with positive probability at node i, and
// over values x_Q, of log P(X_Q=x_Q | X_i=x) / P(X_Q=x_Q | X_i=x'), where Q
// is the set of 0-based positions of the quilt.
func bruteInfluence(seqs [][]int, probs []float64, k, i int, Q []int) float64 {
	marg := make([]float64, k)
	cond := make([]map[string]float64, k)
	for x := range cond {
		cond[x] = map[string]float64{}
	}
	for s, seq := range seqs {
		x := seq[i]
		marg[x] += probs[s]
		key := ""
		for _, t := range Q {
			key += string(rune('a' + seq[t]))
		}
		cond[x][key] += probs[s]
	}
	e := 0.0
	for x := range k {
		for y := range k {
			if x == y || marg[x] == 0 || marg[y] == 0 {
				continue
			}
			for key, p := range cond[x] {
				if p == 0 {
					continue
				}
				py := cond[y][key]
				if py == 0 {
					return math.Inf(1)
				}
				e = math.Max(e, math.Log((p/marg[x])/(py/marg[y])))
			}
		}
	}
	return e
}

func quiltPositions(i, T int, q Quilt) []int { // i 1-based, positions 0-based
	var Q []int
	if q.A < i {
		Q = append(Q, i-q.A-1)
	}
	if q.B < T-i+1 {
		Q = append(Q, i+q.B-1)
	}
	return Q
}

func randomChain(rng *rand.Rand, k int, zeroProb float64) [][]float64 {
	P := make([][]float64, k)
	for x := range P {
		P[x] = make([]float64, k)
		sum := 0.0
		for y := range P[x] {
			if rng.Float64() < zeroProb && y != x {
				continue
			}
			P[x][y] = 0.05 + rng.Float64()
			sum += P[x][y]
		}
		for y := range P[x] {
			P[x][y] /= sum
		}
	}
	return P
}

func randomDist(rng *rand.Rand, k int) []float64 {
	q := make([]float64, k)
	s := 0.0
	for i := range q {
		q[i] = rng.Float64() + 0.01
		s += q[i]
	}
	for i := range q {
		q[i] /= s
	}
	return q
}

func TestExactInfluenceMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		k := 2 + trial%2
		T := 4 + trial%4
		zero := 0.0
		if trial%3 == 2 {
			zero = 0.3 // some structural zeros: exercises the ∞ and skip rules
		}
		P := randomChain(rng, k, zero)
		kinds := []markov.InitKind{markov.InitGiven, markov.InitStationary}
		for _, kind := range kinds {
			var q []float64
			if kind == markov.InitGiven {
				q = randomDist(rng, k)
				if trial%5 == 0 {
					q[0] = 0 // a value impossible at time 1
					s := 0.0
					for _, v := range q {
						s += v
					}
					for j := range q {
						q[j] /= s
					}
				}
			}
			ch, err := markov.New(nil, P, kind, q)
			if err != nil {
				t.Fatal(err)
			}
			qq := q
			if kind == markov.InitStationary {
				qq, err = ch.Stationary()
				if err != nil {
					continue // reducible random chain: no unique π
				}
			}
			o, err := newExactOracle(ch, T)
			if err != nil {
				t.Fatal(err)
			}
			seqs, probs := joint(qq, P, T)
			for i := 1; i <= T; i++ {
				for a := 1; a <= i; a++ {
					for b := 1; b <= T-i+1; b++ {
						got := o.influence(i, a, b)
						want := bruteInfluence(seqs, probs, k, i-1, quiltPositions(i, T, Quilt{a, b}))
						if !near(got, want, 1e-9) {
							t.Fatalf("trial %d %v i=%d a=%d b=%d: oracle %v, brute force %v\nP=%v q=%v", trial, kind, i, a, b, got, want, P, qq)
						}
						if got < want {
							t.Fatalf("trial %d: oracle %v below brute force %v (allowance must round up)", trial, got, want)
						}
					}
				}
			}
		}
	}
}

func near(a, b, tol float64) bool {
	if math.IsInf(a, 1) || math.IsInf(b, 1) {
		return a == b
	}
	return math.Abs(a-b) <= tol*(1+math.Abs(b))
}

// For "any" the influence is a supremum over initial distributions. It must
// dominate every particular q, and q close to a vertex must come close to it.
func TestAnyInitialIsSupremum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 15 {
		k, T := 2+trial%2, 5
		P := randomChain(rng, k, 0)
		anyCh, _ := markov.New(nil, P, markov.InitAny, nil)
		o, _ := newExactOracle(anyCh, T)
		for i := 2; i <= T; i++ {
			for a := 1; a <= i; a++ {
				for b := 1; b <= T-i+1; b++ {
					sup := o.influence(i, a, b)
					Q := quiltPositions(i, T, Quilt{a, b})
					best := 0.0
					for w := 0; w <= k; w++ {
						var q []float64
						if w == k {
							q = randomDist(rng, k)
						} else { // concentrate on w, keep full support
							q = make([]float64, k)
							for j := range q {
								q[j] = 1e-9
							}
							q[w] = 1 - float64(k-1)*1e-9
						}
						seqs, probs := joint(q, P, T)
						e := bruteInfluence(seqs, probs, k, i-1, Q)
						if e > sup+1e-9 {
							t.Fatalf("trial %d i=%d a=%d b=%d: q=%v gives %v > sup %v", trial, i, a, b, q, e, sup)
						}
						best = math.Max(best, e)
					}
					if best < sup-1e-6 {
						t.Fatalf("trial %d i=%d a=%d b=%d: sup %v not approached (best %v)", trial, i, a, b, sup, best)
					}
				}
			}
		}
	}
}

func TestApproxBoundsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 30 {
		k, T := 2+trial%2, 9
		P := randomChain(rng, k, 0)
		if trial%2 == 0 && k == 2 { // binary chains are reversible ([SWC16] Lemma B.12)
			P = [][]float64{{0.6 + 0.3*rng.Float64(), 0}, {0, 0.6 + 0.3*rng.Float64()}}
			P[0][1], P[1][0] = 1-P[0][0], 1-P[1][1]
		}
		anyCh, _ := markov.New(nil, P, markov.InitAny, nil)
		class, _ := markov.NewClass(anyCh.States, anyCh)
		p, err := ApproxParameters(class)
		if err != nil {
			t.Fatal(err)
		}
		ap := &approxOracle{T: T, piMin: p.PiMin, gap: p.Gap, reversible: p.Reversible}
		// approx holds for every initial distribution: compare with "any"
		// (the supremum) and with brute force for one random q.
		ex, _ := newExactOracle(anyCh, T)
		q := randomDist(rng, k)
		seqs, probs := joint(q, P, T)
		for i := 1; i <= T; i++ {
			for a := 1; a <= i; a++ {
				for b := 1; b <= T-i+1; b++ {
					bound := ap.influence(i, a, b)
					if e := ex.influence(i, a, b); bound < e-1e-9 {
						t.Fatalf("trial %d (rev=%v) i=%d a=%d b=%d: approx %v < exact sup %v", trial, p.Reversible, i, a, b, bound, e)
					}
					if e := bruteInfluence(seqs, probs, k, i-1, quiltPositions(i, T, Quilt{a, b})); bound < e-1e-9 {
						t.Fatalf("trial %d: approx %v < brute force %v", trial, bound, e)
					}
				}
			}
		}
	}
}

// The fast walk must return exactly the σ_max of the full O(T·quilts)
// search of [SWC16] Algorithms 3–4, for every oracle kind.
func TestFastSearchEqualsFullSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 60 {
		k := 2 + trial%3
		T := []int{1, 2, 3, 7, 15, 40, 90}[trial%7]
		eps := []float64{0.2, 1, 3, 8}[trial%4]
		P := randomChain(rng, k, 0)
		if trial%2 == 1 {
			// The time reversal P* swaps the roles of the two ends of a
			// stationary chain, so the maximum moves to the right end, which
			// the walk handles separately.
			fwd, _ := markov.New(nil, P, markov.InitStationary, nil)
			P, _ = fwd.Reversal()
		}
		for _, kind := range []markov.InitKind{markov.InitGiven, markov.InitStationary, markov.InitAny} {
			var q []float64
			if kind == markov.InitGiven {
				q = randomDist(rng, k)
			}
			ch, _ := markov.New(nil, P, kind, q)
			mk := func() oracle { o, _ := newExactOracle(ch, T); return o }
			full := fullSearch(mk(), T, eps)
			fast := search(mk(), T, eps)
			if full.sigma != fast.sigma {
				t.Fatalf("trial %d %v T=%d eps=%v: fast σ=%v (node %d %v), full σ=%v (node %d %v)", trial, kind, T, eps, fast.sigma, fast.node, fast.quilt, full.sigma, full.node, full.quilt)
			}
		}
		class, _ := markov.NewClass([]string{"0", "1", "2", "3"}[:k], mustChain(t, P))
		p, err := ApproxParameters(class)
		if err != nil {
			t.Fatal(err)
		}
		ap := &approxOracle{T: T, piMin: p.PiMin, gap: p.Gap, reversible: p.Reversible}
		if full, fast := fullSearch(ap, T, eps), search(ap, T, eps); full.sigma != fast.sigma {
			t.Fatalf("trial %d approx: fast %v full %v", trial, fast.sigma, full.sigma)
		}
	}
}

func mustChain(t *testing.T, P [][]float64) *markov.Chain {
	ch, err := markov.New(nil, P, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// The released mechanism F(X) + σ·Lap(1) for the 1-Lipschitz query
// F = number of entries equal to state 0 must satisfy, for every θ in Θ,
// every node i and every pair a ≠ b with positive probability,
// p(w | X_i=a) ≤ e^ε p(w | X_i=b) at every output w. The densities are
// exact mixtures of Laplace densities over all k^T sequences.
func TestReleaseIsPufferfishPrivate(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 12 {
		k, T := 2+trial%2, 6+trial%3
		if k == 3 {
			T = 6
		}
		eps := []float64{0.5, 1, 2}[trial%3]
		var chains []*markov.Chain
		for range 2 {
			kind := []markov.InitKind{markov.InitStationary, markov.InitGiven}[trial%2]
			var q []float64
			if kind == markov.InitGiven {
				q = randomDist(rng, k)
			}
			ch, err := markov.New(nil, randomChain(rng, k, 0), kind, q)
			if err != nil {
				t.Fatal(err)
			}
			chains = append(chains, ch)
		}
		class, _ := markov.NewClass(chains[0].States, chains...)
		for _, m := range []Method{Exact, Approx} {
			r, err := Scale(class, T, eps, m)
			if err != nil {
				t.Fatal(err)
			}
			if r.Sigma > float64(T)/eps {
				t.Fatalf("σ %v exceeds GroupDP's T/ε = %v", r.Sigma, float64(T)/eps)
			}
			for _, ch := range chains {
				q, _ := ch.Initial()
				checkRatio(t, q, ch.P, T, k, eps, r.Sigma)
			}
		}
	}
}

func checkRatio(t *testing.T, q []float64, P [][]float64, T, k int, eps, sigma float64) {
	t.Helper()
	seqs, probs := joint(q, P, T)
	for i := range T {
		// distribution of F given X_i = x
		dist := make([][]float64, k)
		marg := make([]float64, k)
		for x := range dist {
			dist[x] = make([]float64, T+1)
		}
		for s, seq := range seqs {
			f := 0
			for _, v := range seq {
				if v == 0 {
					f++
				}
			}
			dist[seq[i]][f] += probs[s]
			marg[seq[i]] += probs[s]
		}
		for w := -4 * sigma; w <= float64(T)+4*sigma; w += sigma / 50 {
			dens := make([]float64, k)
			for x := range k {
				if marg[x] == 0 {
					continue
				}
				for f, p := range dist[x] {
					dens[x] += p / marg[x] * math.Exp(-math.Abs(w-float64(f))/sigma) / (2 * sigma)
				}
			}
			for x := range k {
				for y := range k {
					if marg[x] == 0 || marg[y] == 0 || x == y {
						continue
					}
					if dens[x] > math.Exp(eps)*dens[y]*(1+1e-9) {
						t.Fatalf("node %d, w=%v: p(w|%d)/p(w|%d) = %v > e^ε = %v (σ=%v)", i+1, w, x, y, dens[x]/dens[y], math.Exp(eps), sigma)
					}
				}
			}
		}
	}
}

// Theorem 4.10 ([SWC17]): for a rapidly mixing chain σ_max stops growing
// with T; with the stationary initial distribution it is then constant.
func TestSigmaIndependentOfLength(t *testing.T) {
	ch, _ := markov.New(nil, [][]float64{{0.8, 0.2}, {0.3, 0.7}}, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	var prev float64
	for _, T := range []int{1000, 10000, 100000, 1000000} {
		for _, m := range []Method{Exact, Approx} {
			r, err := Scale(class, T, 1, m)
			if err != nil {
				t.Fatal(err)
			}
			if r.Sigma > 100 {
				t.Fatalf("%v T=%d: σ=%v does not look T-independent", m, T, r.Sigma)
			}
			if m == Exact {
				if prev != 0 && r.Sigma != prev {
					t.Fatalf("exact σ changed with T: %v → %v", prev, r.Sigma)
				}
				prev = r.Sigma
			}
		}
	}
}

func TestPeriodicChainGetsTrivialQuilt(t *testing.T) {
	ch, _ := markov.New(nil, [][]float64{{0, 1}, {1, 0}}, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	r, err := Scale(class, 50, 1, Exact)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sigma != 50 {
		t.Fatalf("periodic chain: σ=%v, want T/ε=50", r.Sigma)
	}
	// Cross-check the shortcut with the full search on a short chain.
	o, _ := newExactOracle(ch, 8)
	if full := fullSearch(o, 8, 1); full.sigma != 8 {
		t.Fatalf("full search on periodic chain: %v", full.sigma)
	}
	if _, err := Scale(class, 50, 1, Approx); err == nil {
		t.Fatal("approx accepted a periodic chain")
	}
}

// The class-level Scale over an interval class must equal the maximum over
// its chains of the full reference search.
func TestIntervalClassAgainstFullSearch(t *testing.T) {
	class, err := markov.BinaryInterval(0.1, 0.9, 0.2, markov.InitAny)
	if err != nil {
		t.Fatal(err)
	}
	for _, eps := range []float64{0.2, 1, 5} {
		T := 40
		r, err := Scale(class, T, eps, Exact)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for _, ch := range class.Chains {
			o, _ := newExactOracle(ch, T)
			want = math.Max(want, fullSearch(o, T, eps).sigma)
		}
		if r.Sigma != want {
			t.Fatalf("ε=%v: Scale %v, max of full searches %v", eps, r.Sigma, want)
		}
	}
}

// Products that underflow to zero are not structural zeros: both P²
// entries below underflow, yet X_3 says a lot about X_1 (influence ≈ 92).
// The exact per-node scales are all T/ε = 3 (the trivial quilt); an oracle
// that skips the underflowed pair reports 2 for nodes 1 and 3.
func TestUnderflowIsNotAStructuralZero(t *testing.T) {
	P := [][]float64{{0.5, 0.5, 1e-150, 0}, {0.5, 0.5, 1e-190, 0}, {0.5, 0.5, 0, 1e-180}, {0.5, 0.5, 0, 0}}
	ch, err := markov.New([]string{"0", "1", "2", "3"}, P, markov.InitGiven, []float64{0.5, 0.5, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	class, _ := markov.NewClass(ch.States, ch)
	got, err := NodeScales(class, 3, 1, Exact)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		if s < 3 {
			t.Fatalf("node %d: σ = %v < 3 (per-node %v)", i+1, s, got)
		}
	}
	r, err := Scale(class, 3, 1, Exact)
	if err != nil || r.Sigma < 3 {
		t.Fatalf("σ_max = %v, %v; want 3", r.Sigma, err)
	}
}

// The stationary oracle works in ratio form (one logarithm per influence,
// reciprocal products, minima for the reverse direction, the shared
// maximiser shortcut); the general path sums logarithms of quotients. The
// two agree to rounding on every quilt of random chains — dense, sparse
// (0 and +Inf ratios, the log-domain fallback) and with entries near
// underflow — and both report the same undefined influences.
func TestStationaryRatioFormEqualsLogForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for trial := range 60 {
		k := 2 + trial%7
		zero := []float64{0, 0.3, 0.6}[trial%3]
		P := randomChain(rng, k, zero)
		if trial%4 == 3 {
			// a state almost never left and almost never entered: tiny
			// entries in the powers
			for x := range P {
				s := 0.0
				for y := range P[x] {
					if y == 0 && x != 0 {
						P[x][y] *= 1e-200
					}
					s += P[x][y]
				}
				for y := range P[x] {
					P[x][y] /= s
				}
			}
		}
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			continue
		}
		if _, err := ch.Stationary(); err != nil {
			continue
		}
		const T = 40
		ratio, err := newExactOracle(ch, T)
		if err != nil {
			t.Fatal(err)
		}
		logs, _ := newExactOracle(ch, T)
		logs.memo = nil // the general path
		for a := 0; a <= 12; a++ {
			for b := 0; b <= 12; b++ {
				if a == 0 && b == 0 {
					continue
				}
				i := a + 1 // a node with room for the left end
				got := ratio.eval(i, a, b, a == 0, b == 0)
				want := logs.eval(i, a, b, a == 0, b == 0)
				if (ratio.nan == nil) != (logs.nan == nil) {
					t.Fatalf("trial %d (%d, %d): NaN reported %v by the ratio form, %v by the log form", trial, a, b, ratio.nan, logs.nan)
				}
				if !near(got, want, 1e-13) {
					t.Fatalf("trial %d k=%d (%d, %d): ratio form %v, log form %v\nP=%v", trial, k, a, b, got, want, P)
				}
			}
		}
	}
}

// The pruned block maximum equals the full one bit for bit, whatever the
// order of the pairs (sorted, reversed, random) and the length.
func TestMaxProductPruned(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := 1 + rng.IntN(400)
		a, b := make([]float64, n), make([]float64, n)
		for j := range a {
			a[j] = math.Exp(rng.NormFloat64() * 3)
			b[j] = math.Exp(rng.NormFloat64() * 3)
		}
		switch trial % 3 {
		case 0:
			slices.SortFunc(a, func(x, y float64) int { return cmp.Compare(y, x) })
		case 1:
			slices.Sort(b)
		}
		t1, t2 := newPairTerm(a), newPairTerm(b)
		if got, want := maxProductPruned(t1, t2), maxProduct(a, b); got != want {
			t.Fatalf("trial %d n=%d: pruned %v, full %v", trial, n, got, want)
		}
		brute := 0.0
		for j := range a {
			brute = max(brute, a[j]*b[j])
		}
		if got := maxProduct(a, b); got != brute {
			t.Fatalf("trial %d: maxProduct %v, loop %v", trial, got, brute)
		}
		lo, hi := minMaxProduct(a, b)
		bl := math.Inf(1)
		for j := range a {
			bl = min(bl, a[j]*b[j])
		}
		if lo != bl || hi != brute {
			t.Fatalf("trial %d: minMaxProduct %v %v, loop %v %v", trial, lo, hi, bl, brute)
		}
	}
}
