package mqm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// bandedChain is a meter-like chain: most mass within w of the diagonal,
// plus additive smoothing s on every entry (as `puff fit --smoothing`).
func bandedChain(rng *rand.Rand, k, w int, s float64) [][]float64 {
	P := make([][]float64, k)
	for x := range P {
		P[x] = make([]float64, k)
		sum := 0.0
		for y := range P[x] {
			P[x][y] = s
			if d := x - y; d >= -w && d <= w {
				P[x][y] += rng.Float64() * 100
			}
			sum += P[x][y]
		}
		for y := range P[x] {
			P[x][y] /= sum
		}
	}
	return P
}

// Lazy terms (lazy.go) give every stationary influence bit for bit as the
// full tables do (the previous implementation, still the fallback), on
// random dense, sparse and banded chains with 2 to 40 states (several
// blocks of pairs from 9 states on), and the same σ.
func TestLazyTermsEqualFullTables(t *testing.T) {
	defer func(k int) { lazyMinK = k }(lazyMinK)
	lazyMinK = 2
	rng := rand.New(rand.NewPCG(27, 1))
	lazyUsed := 0
	for trial := range 80 {
		k := 2 + rng.IntN(39)
		var P [][]float64
		switch trial % 4 {
		case 0:
			P = randomChain(rng, k, 0)
		case 1:
			P = randomChain(rng, k, 0.4) // zeros: not clean at small d
		case 2:
			P = bandedChain(rng, k, 2, 0.01)
		case 3:
			P = bandedChain(rng, k, 1, 1e-6)
		}
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Stationary(); err != nil {
			continue
		}
		const T = 200
		lazy, err := newExactOracle(ch, T)
		if err != nil {
			t.Fatal(err)
		}
		full, _ := newExactOracle(ch, T)
		full.lazyState = 2 // the full tables only
		if lazy.lazyOK() {
			lazyUsed++
		}
		for a := 0; a <= 40; a++ {
			for b := 0; b <= 40; b++ {
				if a == 0 && b == 0 {
					continue
				}
				got := lazy.eval(a+1, a, b, a == 0, b == 0)
				want := full.eval(a+1, a, b, a == 0, b == 0)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("trial %d k=%d (%d, %d): lazy %v, full tables %v", trial, k, a, b, got, want)
				}
			}
		}
		for _, eps := range []float64{0.5, 1, 3} {
			lo, _ := newExactOracle(ch, T)
			fo, _ := newExactOracle(ch, T)
			fo.lazyState = 2
			r1, r2 := search(lo, T, eps), search(fo, T, eps)
			if r1.sigma != r2.sigma || r1.quilt != r2.quilt || r1.node != r2.node {
				t.Fatalf("trial %d k=%d ε=%v: lazy %+v, full tables %+v", trial, k, eps, r1, r2)
			}
		}
	}
	if lazyUsed < 40 {
		t.Fatalf("lazy terms used on %d chains only", lazyUsed)
	}
}

// rightMax is the maximum of the full right table over the pairs, bit for
// bit, and lazy blocks are the full tables' entries.
func TestRightMaxAndBlocks(t *testing.T) {
	defer func(k int) { lazyMinK = k }(lazyMinK)
	lazyMinK = 2
	rng := rand.New(rand.NewPCG(27, 2))
	for trial := range 40 {
		k := 2 + rng.IntN(60)
		ch, err := markov.New(nil, bandedChain(rng, k, 1+rng.IntN(3), 0.001), markov.InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		o, err := newExactOracle(ch, 100)
		if err != nil {
			t.Fatal(err)
		}
		if !o.lazyOK() {
			t.Fatalf("trial %d: a positive chain is not lazy", trial)
		}
		for _, d := range []int{1, 2, 7, 30} {
			if !o.cleanPower(d) {
				t.Fatalf("trial %d: P^%d not clean", trial, d)
			}
			R, L := o.rightRatio(d), o.leftRatio(d, o.suppID(1))
			want := 0.0
			for _, p := range o.pairs {
				want = max(want, R[p])
			}
			if got := o.rightMax(d); got != want {
				t.Fatalf("trial %d d=%d: rightMax %v, table %v", trial, d, got, want)
			}
			tl, tr := o.lazyAt(d, termLeftNode), o.lazyAt(d, termRight)
			for i := range tl.ub {
				ul, ur := tl.ub[i], tr.ub[i]
				bl, br := o.block(tl, i), o.block(tr, i)
				if maxOf(bl) > ul || maxOf(br) > ur {
					t.Fatalf("trial %d d=%d block %d: maxima %v %v above the bounds %v %v", trial, d, i, maxOf(bl), maxOf(br), ul, ur)
				}
				for j := range bl {
					p := o.pairs[i*pairBlock+j]
					if bl[j] != L[p]*o.nr[i*pairBlock+j] || br[j] != R[p] {
						t.Fatalf("trial %d d=%d pair %d: lazy %v %v, table %v %v", trial, d, p, bl[j], br[j], L[p]*o.nr[i*pairBlock+j], R[p])
					}
				}
			}
		}
	}
}

// For "any" chains the lazy path (the node term a reversed left term, one
// logarithm of a product of ratios) agrees with the log tables (a sum of
// three logarithms, the previous implementation, still the fallback) to
// rounding on every quilt of random dense, sparse and banded chains, and σ
// agrees to the last bits.
func TestAnyLazyEqualsLogTables(t *testing.T) {
	defer func(k int) { lazyMinK = k }(lazyMinK)
	lazyMinK = 2
	rng := rand.New(rand.NewPCG(27, 3))
	lazyUsed := 0
	for trial := range 60 {
		k := 2 + rng.IntN(30)
		var P [][]float64
		switch trial % 3 {
		case 0:
			P = randomChain(rng, k, 0)
		case 1:
			P = randomChain(rng, k, 0.5)
		case 2:
			P = bandedChain(rng, k, 1+trial%3, 0.01)
		}
		ch, err := markov.New(nil, P, markov.InitAny, nil)
		if err != nil {
			t.Fatal(err)
		}
		const T = 120
		lazy, err := newExactOracle(ch, T)
		if err != nil {
			t.Fatal(err)
		}
		logs, _ := newExactOracle(ch, T)
		logs.lazyState = 2 // the log tables only
		if lazy.anyLazyOK() {
			lazyUsed++
		}
		for i := 1; i <= 30; i++ {
			for a := 0; a < i; a++ {
				for b := 0; b <= 30; b++ {
					if a == 0 && b == 0 {
						continue
					}
					got := lazy.eval(i, a, b, a == 0, b == 0)
					want := logs.eval(i, a, b, a == 0, b == 0)
					if !near(got, want, 1e-13) {
						t.Fatalf("trial %d k=%d node %d (%d, %d): lazy %v, log tables %v", trial, k, i, a, b, got, want)
					}
				}
			}
		}
		for _, eps := range []float64{0.5, 1, 3} {
			lo, _ := newExactOracle(ch, T)
			fo, _ := newExactOracle(ch, T)
			fo.lazyState = 2
			r1, r2 := search(lo, T, eps), search(fo, T, eps)
			if !near(r1.sigma, r2.sigma, 1e-12) {
				t.Fatalf("trial %d k=%d ε=%v: lazy %+v, log tables %+v", trial, k, eps, r1, r2)
			}
		}
	}
	if lazyUsed < 30 {
		t.Fatalf("lazy terms used on %d chains only", lazyUsed)
	}
}

// The approx walk's right-only scan reads δ from the table; it finds the
// same quilt as the generic scan at every node, for slowly and quickly
// mixing bounds.
func TestApproxRightOnlyTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 4))
	skipped := 0 // trials whose scans looked at block minima
	for trial := range 200 {
		T := 1 + rng.IntN(5000)
		if trial%4 == 0 {
			T = 1 + rng.IntN(1_000_000)
		}
		o1 := &approxOracle{T: T, piMin: 0.001 + rng.Float64()*0.3, gap: math.Exp(-rng.Float64() * 8), reversible: trial%2 == 0}
		o2 := *o1
		eps := []float64{0.1, 1, 5}[trial%3]
		s1, s2 := 1, 1
		for i := 1; i <= min(T, 2000); i += 1 + rng.IntN(50) {
			b1 := nodeResult{sigma: float64(T) / eps, node: i, quilt: Quilt{i, T - i + 1}}
			b2 := b1
			o1.rightOnlyBest(i, T, eps, &s1, &b1)
			rightOnlyBest(o2.rightOnly, i, T, eps, &s2, &b2)
			if b1 != b2 || s1 != s2 {
				t.Fatalf("trial %d node %d: table %+v (start %d), generic %+v (start %d)", trial, i, b1, s1, b2, s2)
			}
		}
		if len(o1.bmin[len(rLevel)-1]) > 0 {
			skipped++
		}
	}
	if skipped < 20 {
		t.Fatalf("only %d trials reached the block bounds", skipped)
	}
}

// twoScan's far feasibility by bounds and its tighter limit change no σ,
// node or quilt: stationary and "any" walks on slowly mixing banded chains
// (the case that reaches far distances) and random ones, against the same
// walk with every feasibility evaluated exactly, and against the full
// search where it is affordable.
func TestFeasibleBoundsKeepSigma(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	defer func() { feasibleBounds = true }()
	for trial := range 40 {
		k := 2 + rng.IntN(14)
		P := bandedChain(rng, k, 1, []float64{0.001, 0.01, 1}[trial%3])
		if trial%4 == 3 {
			P = randomChain(rng, k, 0)
		}
		T := []int{30, 300, 100_000}[trial%3]
		eps := []float64{0.3, 1, 4}[rng.IntN(3)]
		for _, init := range []markov.InitKind{markov.InitStationary, markov.InitAny} {
			ch, err := markov.New(nil, P, init, nil)
			if err != nil {
				t.Fatal(err)
			}
			run := func(bounds bool) nodeResult {
				feasibleBounds = bounds
				o, err := newExactOracle(ch, T)
				if err != nil {
					t.Fatal(err)
				}
				return search(o, T, eps)
			}
			with, without := run(true), run(false)
			if with != without {
				t.Fatalf("trial %d k=%d %v T=%d ε=%v: with bounds %+v, exact %+v", trial, k, init, T, eps, with, without)
			}
			if T <= 30 {
				o, _ := newExactOracle(ch, T)
				if full := fullSearch(o, T, eps); full.sigma != with.sigma {
					t.Fatalf("trial %d k=%d %v T=%d ε=%v: walk %v, full search %v", trial, k, init, T, eps, with.sigma, full.sigma)
				}
			}
		}
	}
}

// The brute-force and full-search checks again, with lazy terms on every
// chain (the package uses them from lazyMinK states on).
func TestBruteForceWithLazyTerms(t *testing.T) {
	defer func(k int) { lazyMinK = k }(lazyMinK)
	lazyMinK = 2
	t.Run("influence", TestExactInfluenceMatchesBruteForce)
	t.Run("any", TestAnyInitialIsSupremum)
	t.Run("search", TestFastSearchEqualsFullSearch)
	t.Run("walkAny", TestWalkAnyEqualsFullSearch)
	t.Run("release", TestReleaseIsPufferfishPrivate)
	t.Run("feasible", TestFeasibleBoundsKeepSigma)
}

// cleanPower says whether every entry of P^d is at least tiny, on chains
// with zeros (banded, no smoothing), entries below tiny and none.
func TestCleanPowerDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 41))
	seen := [2]int{}
	for trial := range 60 {
		k := 2 + rng.IntN(30)
		P := bandedChain(rng, k, 1+rng.IntN(3), []float64{0, 1e-300, 0.01}[trial%3])
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		o, err := newExactOracle(ch, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []int{1, 2, 3, 5, 8, 13, 40} {
			want := true
			for _, row := range o.pw.at(d).v {
				for _, x := range row {
					want = want && x >= tiny
				}
			}
			if got := o.cleanPower(d); got != want {
				t.Fatalf("trial %d (k = %d) d = %d: clean %v, want %v", trial, k, d, got, want)
			}
			if want {
				seen[1]++
			} else {
				seen[0]++
			}
		}
	}
	if seen[0] < 20 || seen[1] < 20 {
		t.Fatalf("too few of one kind: %v", seen)
	}
}

// Resuming approx scans ahead of β (scanAhead) and skipping nested blocks
// of right distances (rLevel) change no σ, node, quilt or influence: the
// walk on random approx bounds against the same walk resuming to β, and
// against the full search where it is affordable. Slowly mixing bounds
// (small gap, small π_Θ) walk hundreds of nodes, with hundreds of scans.
func TestApproxWalkAheadKeepsResult(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 6))
	defer func() { scanAheadOn = true }()
	far := 0 // trials that walked past 100 nodes
	for trial := range 200 {
		T := 1 + rng.IntN(400)
		if trial%3 == 0 {
			T = 1 + rng.IntN(100_000)
		}
		o := &approxOracle{T: T, piMin: 0.001 + rng.Float64()*0.3, gap: math.Exp(-rng.Float64() * 6), reversible: trial%2 == 0}
		eps := []float64{0.1, 0.5, 1, 5}[trial%4]
		scanAheadOn = true
		on := walkHomogeneous(o, T, eps)
		scanAheadOn = false
		o2 := *o
		o2.table, o2.bmin, o2.rHint = nil, [len(rLevel)][]float64{}, 0
		off := walkHomogeneous(&o2, T, eps)
		if on != off {
			t.Fatalf("trial %d T=%d eps=%v %+v: ahead %+v, to β %+v", trial, T, eps, *o, on, off)
		}
		if T <= 60 {
			o3 := *o
			o3.table, o3.bmin, o3.rHint = nil, [len(rLevel)][]float64{}, 0
			if full := fullSearch(&o3, T, eps); full.sigma != on.sigma {
				t.Fatalf("trial %d T=%d: walk σ %v (node %d %v), full σ %v (node %d %v)", trial, T, on.sigma, on.node, on.quilt, full.sigma, full.node, full.quilt)
			}
		}
		if on.node > 100 {
			far++
		}
	}
	if far < 20 {
		t.Fatalf("only %d trials walked past 100 nodes", far)
	}
}
