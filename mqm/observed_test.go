package mqm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// bruteObservedSigma is σ_max for a chain of span S observed at the
// 0-based positions obs, straight from the definition: for every observed
// node, the least card/(ε − e) over every quilt of the full chain — quilt
// nodes at any time, observed or not — where card counts the observed
// readings strictly between the quilt nodes and e is enumerated.
func bruteObservedSigma(seqs [][]int, probs []float64, k, S int, obs []int, eps float64) float64 {
	isObs := make([]bool, S)
	for _, t := range obs {
		isObs[t] = true
	}
	top := 0.0
	for _, i := range obs {
		best := math.Inf(1)
		for l := -1; l < i; l++ { // −1: no left node
			for r := i + 1; r <= S; r++ { // S: no right node
				var Q []int
				if l >= 0 {
					Q = append(Q, l)
				}
				if r < S {
					Q = append(Q, r)
				}
				card := 0
				for t := l + 1; t < r; t++ {
					if isObs[t] {
						card++
					}
				}
				e := 0.0
				if len(Q) > 0 {
					e = bruteInfluence(seqs, probs, k, i, Q)
				}
				if e < eps {
					best = math.Min(best, float64(card)/(eps-e))
				}
			}
		}
		top = math.Max(top, best)
	}
	return top
}

func TestObservedScaleMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 36 {
		k := 2 + trial%2
		S := 6 + trial%3
		if k == 3 {
			S = 6
		}
		// a random subset of at least two observed times
		var obs []int
		for len(obs) < 2 {
			obs = obs[:0]
			for p := range S {
				if rng.Float64() < 0.6 {
					obs = append(obs, p)
				}
			}
		}
		kind := []markov.InitKind{markov.InitGiven, markov.InitStationary, markov.InitGiven}[trial%3]
		var q []float64
		if kind == markov.InitGiven {
			q = randomDist(rng, k)
		}
		P := randomChain(rng, k, 0)
		if trial%4 == 3 {
			P = sticky(k, 0.97)
		}
		ch, err := markov.New(nil, P, kind, q)
		if err != nil {
			t.Fatal(err)
		}
		class, _ := markov.NewClass(ch.States, ch)
		times := make([]int, len(obs))
		for j, p := range obs {
			times[j] = p + 1
		}
		ob, err := At(times)
		if err != nil {
			t.Fatal(err)
		}
		eps := []float64{0.5, 1, 3}[trial%3]
		r, err := ScaleAt(class, ob, eps, Exact)
		if err != nil {
			t.Fatal(err)
		}
		qq, _ := ch.Initial()
		seqs, probs := joint(qq, P, S)
		want := bruteObservedSigma(seqs, probs, k, S, obs, eps)
		if math.Abs(r.Sigma-want) > 1e-6*want {
			t.Fatalf("trial %d (obs %v, %v): σ %v, brute force %v", trial, obs, kind, r.Sigma, want)
		}
		// and the release itself satisfies the definition
		checkObservedRatio(t, qq, P, S, k, obs, eps, r.Sigma)
	}
}

func sticky(k int, stay float64) [][]float64 {
	P := make([][]float64, k)
	for x := range P {
		P[x] = make([]float64, k)
		for y := range P[x] {
			P[x][y] = (1 - stay) / float64(k-1)
		}
		P[x][x] = stay
	}
	return P
}

// checkObservedRatio checks p(w | X_i = a) ≤ e^ε p(w | X_i = b) for the
// count of state 0 among the observed readings plus σ·Lap(1), at every
// observed node, by exact mixtures over all sequences of the full span.
func checkObservedRatio(t *testing.T, q []float64, P [][]float64, S, k int, obs []int, eps, sigma float64) {
	t.Helper()
	seqs, probs := joint(q, P, S)
	for _, i := range obs {
		dist := make([][]float64, k)
		marg := make([]float64, k)
		for x := range dist {
			dist[x] = make([]float64, len(obs)+1)
		}
		for s, seq := range seqs {
			f := 0
			for _, p := range obs {
				if seq[p] == 0 {
					f++
				}
			}
			dist[seq[i]][f] += probs[s]
			marg[seq[i]] += probs[s]
		}
		for w := -4 * sigma; w <= float64(len(obs))+4*sigma; w += sigma / 40 {
			dens := make([]float64, k)
			for x := range k {
				for f, p := range dist[x] {
					if marg[x] > 0 {
						dens[x] += p / marg[x] * math.Exp(-math.Abs(w-float64(f))/sigma)
					}
				}
			}
			for x := range k {
				for y := range k {
					if x != y && marg[x] > 0 && marg[y] > 0 && dens[x] > math.Exp(eps)*dens[y]*(1+1e-9) {
						t.Fatalf("obs %v node %d w=%v: ratio %v > e^ε", obs, i, w, dens[x]/dens[y])
					}
				}
			}
		}
	}
}

// A segment [s, e] of a chain with a fixed start is calibrated from
// q·P^{s−1} (the example that under-protected when calibrated at time 1).
func TestSegmentCalibratedAtItsStart(t *testing.T) {
	P := [][]float64{{0.9993414172575612, 0.0006585827424387219}, {0.4008305458724634, 0.5991694541275365}}
	ch, err := markov.New(nil, P, markov.InitGiven, []float64{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	class, _ := markov.NewClass(ch.States, ch)
	r, err := ScaleAt(class, Consecutive(5, 2), 4, Exact)
	if err != nil {
		t.Fatal(err)
	}
	seqs, probs := joint([]float64{1, 0}, P, 6)
	want := bruteObservedSigma(seqs, probs, 2, 6, []int{4, 5}, 4)
	if math.Abs(r.Sigma-want) > 1e-9*want || r.Sigma <= 0.25 {
		t.Fatalf("segment [5, 6]: σ %v, brute force %v (σ at time 1 would be 0.25)", r.Sigma, want)
	}
	checkObservedRatio(t, []float64{1, 0}, P, 6, 2, []int{4, 5}, 4, r.Sigma)
}

// With consecutive readings ScaleAt is Scale; a stationary chain gives the
// same σ at every start; "any" at a later start is never above time 1.
func TestScaleAtConsecutive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 20 {
		k, T := 3, 30+trial
		kind := []markov.InitKind{markov.InitStationary, markov.InitAny}[trial%2]
		ch, err := markov.New(nil, randomChain(rng, k, 0.2), kind, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ch.CheckErgodic() != nil {
			continue
		}
		class, _ := markov.NewClass(ch.States, ch)
		base, err := Scale(class, T, 1, Exact)
		if err != nil {
			t.Fatal(err)
		}
		at1, _ := ScaleAt(class, Consecutive(1, T), 1, Exact)
		at7, _ := ScaleAt(class, Consecutive(7, T), 1, Exact)
		if at1.Sigma != base.Sigma {
			t.Fatalf("start 1: %v vs Scale %v", at1.Sigma, base.Sigma)
		}
		if kind == markov.InitStationary && at7.Sigma != base.Sigma {
			t.Fatalf("stationary start 7: %v vs %v", at7.Sigma, base.Sigma)
		}
		if at7.Sigma > base.Sigma {
			t.Fatalf("any: later start %v above start 1 %v", at7.Sigma, base.Sigma)
		}
		// the monotone walk on shifted nodes equals the full search
		o := &observedOracle{ob: Consecutive(7, T)}
		o.exact, _ = newExactOracle(ch, 7+T)
		if full := fullSearch(o, T, 1); math.Abs(full.sigma-at7.Sigma) > 1e-12 {
			t.Fatalf("start 7: ScaleAt %v, full search %v", at7.Sigma, full.sigma)
		}
	}
}

// A long gap costs almost nothing: two readings blocks of a mixing chain
// far apart need about the noise of one block.
func TestLongGapCostsLittle(t *testing.T) {
	ch, _ := markov.New(nil, [][]float64{{0.8, 0.2}, {0.3, 0.7}}, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	times := []int{}
	for t := 1; t <= 200; t++ {
		times = append(times, t)
	}
	for t := 100001; t <= 100200; t++ {
		times = append(times, t)
	}
	ob, _ := At(times)
	gapped, err := ScaleAt(class, ob, 1, Exact)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := Scale(class, 200, 1, Exact)
	if gapped.Sigma < one.Sigma || gapped.Sigma > one.Sigma*1.01 {
		t.Fatalf("two far blocks: σ %v, one block %v", gapped.Sigma, one.Sigma)
	}
}

// The hinted scan equals the unpruned search on longer random patterns.
func TestObservedScanEqualsFullSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := range 30 {
		k := 2 + trial%3
		var times []int
		for p := 1; p <= 70; p++ {
			if rng.Float64() < 0.7 || (trial%5 == 0 && p > 30 && p < 50) {
				if !(trial%5 == 0 && p > 30 && p < 50) {
					times = append(times, p)
				}
			}
		}
		kind := []markov.InitKind{markov.InitGiven, markov.InitStationary, markov.InitAny}[trial%3]
		var q []float64
		if kind == markov.InitGiven {
			q = randomDist(rng, k)
		}
		P := randomChain(rng, k, 0.2)
		if trial%2 == 1 {
			P = sticky(k, 0.9)
		}
		ch, err := markov.New(nil, P, kind, q)
		if err != nil {
			t.Fatal(err)
		}
		if kind != markov.InitGiven && !ch.Irreducible() {
			continue
		}
		class, _ := markov.NewClass(ch.States, ch)
		ob, _ := At(times)
		eps := []float64{0.3, 1, 4}[trial%3]
		r, err := ScaleAt(class, ob, eps, Exact)
		if err != nil {
			t.Fatal(err)
		}
		inner, _ := newExactOracle(ch, ob.End())
		full := fullSearch(&observedOracle{ob: ob, exact: inner}, ob.Len, eps)
		if r.Sigma != full.sigma {
			t.Fatalf("trial %d: ScaleAt %v, full search %v", trial, r.Sigma, full.sigma)
		}
	}
}

// A fixed initial distribution: the scan jumps over nodes once the
// marginal is a float fixed point; it must equal the unpruned search, and
// very long chains finish.
func TestGivenInitialJumpEqualsFullSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for trial := range 24 {
		k := 2 + trial%3
		T := 60 + 10*trial
		P := randomChain(rng, k, 0.15)
		if trial%3 == 1 {
			P = sticky(k, 0.8)
		}
		ch, err := markov.New(nil, P, markov.InitGiven, randomDist(rng, k))
		if err != nil {
			t.Fatal(err)
		}
		class, _ := markov.NewClass(ch.States, ch)
		eps := []float64{0.5, 1, 3}[trial%3]
		start := 1 + trial%4
		r, err := ScaleAt(class, Consecutive(start, T), eps, Exact)
		if err != nil {
			t.Fatal(err)
		}
		inner, _ := newExactOracle(ch, start+T)
		full := fullSearch(&observedOracle{ob: Consecutive(start, T), exact: inner}, T, eps)
		if r.Sigma != full.sigma {
			t.Fatalf("trial %d (k=%d T=%d start %d): scan %v, full search %v", trial, k, T, start, r.Sigma, full.sigma)
		}
	}
	ch, _ := markov.New(nil, [][]float64{{0.8, 0.15, 0.05}, {0.1, 0.7, 0.2}, {0.3, 0.3, 0.4}}, markov.InitGiven, []float64{1, 0, 0})
	class, _ := markov.NewClass(ch.States, ch)
	long, err := Scale(class, 1_000_000_000, 1, Exact)
	if err != nil {
		t.Fatal(err)
	}
	short, _ := Scale(class, 2000, 1, Exact)
	if long.Sigma != short.Sigma {
		t.Fatalf("T = 10⁹: σ %v, T = 2000: %v (both long past mixing)", long.Sigma, short.Sigma)
	}
}

// Past its evaluation budget the exact search over missing readings falls
// back to the whole span's σ, a valid upper bound, and says so.
func TestObservedBudgetFallsBackToSpan(t *testing.T) {
	ch, _ := markov.New(nil, sticky(2, 0.95), markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	var times []int
	for m := 1; m <= 400; m++ {
		if m%7 != 0 {
			times = append(times, m)
		}
	}
	ob, _ := At(times)
	exact, err := ScaleAt(class, ob, 1, Exact)
	if err != nil || exact.UpperBound {
		t.Fatalf("exact: %+v %v", exact, err)
	}
	saved := evalBudget
	evalBudget = func(int) int { return 10 }
	defer func() { evalBudget = saved }()
	bound, err := ScaleAt(class, ob, 1, Exact)
	if err != nil {
		t.Fatal(err)
	}
	span, _ := Scale(class, ob.End(), 1, Exact)
	if !bound.UpperBound || bound.Sigma != span.Sigma || bound.Sigma < exact.Sigma {
		t.Fatalf("bound %+v, span σ %v, exact σ %v", bound, span.Sigma, exact.Sigma)
	}
}
