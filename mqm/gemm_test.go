package mqm

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// mulInto must give gonum's Dgemm result bit for bit (gemm.go): every
// table, influence and σ depends on it.
func TestMulIntoEqualsGonum(t *testing.T) {
	if !haveKernel {
		t.Skip("no AVX2 kernel on this machine")
	}
	avail := haveWide
	defer func() { haveWide = avail }()
	for _, wide := range []bool{false, true} {
		if wide && !avail {
			t.Log("no AVX-512 kernel on this machine")
			continue
		}
		haveWide = wide
		testMulInto(t)
	}
}

func testMulInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 27))
	sizes := []int{1, 2, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 23, 31, 47, 48, 49, 51, 64, 101, 130, 201}
	for _, k := range sizes {
		for trial := range 3 {
			a, b := make([]float64, k*k), make([]float64, k*k)
			for i := range a {
				a[i], b[i] = entry(rng, trial), entry(rng, trial)
			}
			want := mat.NewDense(k, k, nil)
			want.Mul(mat.NewDense(k, k, a), mat.NewDense(k, k, b))
			got := make([]float64, k*k)
			for i := range got {
				got[i] = math.NaN() // every entry must be written
			}
			mulInto(got, a, b, k)
			for i, w := range want.RawMatrix().Data {
				if math.Float64bits(got[i]) != math.Float64bits(w) {
					t.Fatalf("k = %d, trial %d, AVX-512 %v: entry (%d, %d) = %v, gonum %v", k, trial, haveWide, i/k, i%k, got[i], w)
				}
			}
		}
	}
}

// entry draws a non-negative matrix entry: uniform, sparse with exact
// zeros, or of widely different magnitudes (products below the normal
// range included).
func entry(rng *rand.Rand, kind int) float64 {
	switch kind {
	case 0:
		return rng.Float64()
	case 1:
		if rng.IntN(3) == 0 {
			return rng.Float64()
		}
		return 0
	}
	return math.Ldexp(rng.Float64(), -rng.IntN(1000))
}

// A chain's powers are the same with and without the kernel.
func TestPowersKernelUnchanged(t *testing.T) {
	if !haveKernel {
		t.Skip("no AVX2 kernel on this machine")
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for _, k := range []int{16, 31, 60} {
		a, b := make([]float64, k*k), make([]float64, k*k)
		for i := range a {
			a[i], b[i] = rng.Float64(), rng.Float64()/float64(k)
		}
		A, B := mat.NewDense(k, k, a), mat.NewDense(k, k, b)
		got, _ := product(A, B)
		haveKernel = false
		want, _ := product(A, B)
		haveKernel = true
		if !mat.Equal(got, want) {
			t.Fatalf("k = %d: product differs without the kernel", k)
		}
	}
}

// The vector product maxima equal the scalar loops on positive inputs of
// every length and on products that overflow or fall below the normal
// range.
func TestProductMaximaVector(t *testing.T) {
	if !haveKernel {
		t.Skip("no AVX2 kernel on this machine")
	}
	rng := rand.New(rand.NewPCG(11, 13))
	for trial := range 2000 {
		n := 1 + rng.IntN(70)
		a, b := make([]float64, n), make([]float64, n)
		for i := range a {
			a[i], b[i] = math.Ldexp(0.5+rng.Float64(), rng.IntN(1200)-600), math.Ldexp(0.5+rng.Float64(), rng.IntN(1200)-600)
			if trial%3 == 0 {
				a[i], b[i] = rng.Float64()+0x1p-60, rng.Float64()+0x1p-60
			}
		}
		haveKernel = false
		lo0, hi0 := minMaxProduct(a, b)
		m0, n0 := maxProduct(a, b), minProduct(a, b)
		haveKernel = true
		lo, hi := minMaxProduct(a, b)
		m, mn := maxProduct(a, b), minProduct(a, b)
		// reference: a plain loop
		rlo, rhi := math.Inf(1), math.Inf(-1)
		for i := range a {
			rlo, rhi = min(rlo, a[i]*b[i]), max(rhi, a[i]*b[i])
		}
		for _, c := range [][2]float64{{lo, rlo}, {hi, rhi}, {m, rhi}, {mn, rlo}, {lo0, rlo}, {hi0, rhi}, {m0, rhi}, {n0, rlo}} {
			if math.Float64bits(c[0]) != math.Float64bits(c[1]) {
				t.Fatalf("trial %d (n = %d): %v, plain loop %v", trial, n, c[0], c[1])
			}
		}
	}
}

// mulMax and minMaxRows equal plain loops.
func TestMulMaxAndMinMaxRows(t *testing.T) {
	if !haveKernel {
		t.Skip("no AVX2 kernel on this machine")
	}
	rng := rand.New(rand.NewPCG(17, 19))
	for trial := range 500 {
		n := 1 + rng.IntN(70)
		a, b, out := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range a {
			a[i], b[i] = math.Ldexp(0.5+rng.Float64(), rng.IntN(1200)-600), math.Ldexp(0.5+rng.Float64(), rng.IntN(1200)-600)
		}
		m := mulMax(a, b, out)
		want := 0.0
		for i := range a {
			if out[i] != a[i]*b[i] {
				t.Fatalf("trial %d: out[%d] = %v, want %v", trial, i, out[i], a[i]*b[i])
			}
			want = max(want, a[i]*b[i])
		}
		if m != want {
			t.Fatalf("trial %d: max %v, want %v", trial, m, want)
		}
		rows := make([][]float64, 1+rng.IntN(5))
		for r := range rows {
			rows[r] = make([]float64, n)
			for i := range rows[r] {
				rows[r][i] = rng.Float64() + 0x1p-900
			}
		}
		hi, lo := slices.Clone(rows[0]), slices.Clone(rows[0])
		minMaxRows(rows[1:], hi, lo)
		for i := range n {
			h, l := rows[0][i], rows[0][i]
			for _, row := range rows {
				h, l = max(h, row[i]), min(l, row[i])
			}
			if hi[i] != h || lo[i] != l {
				t.Fatalf("trial %d column %d: %v %v, want %v %v", trial, i, hi[i], lo[i], h, l)
			}
		}
	}
}

// reciprocals equals 1/x entry by entry, subnormal and huge inputs
// included.
func TestReciprocals(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 29))
	for trial := range 300 {
		n := 1 + rng.IntN(40)
		in, out := make([]float64, n), make([]float64, n)
		for i := range in {
			in[i] = math.Ldexp(0.5+rng.Float64(), rng.IntN(2100)-1070)
		}
		reciprocals(in, out)
		for i, x := range in {
			if math.Float64bits(out[i]) != math.Float64bits(1/x) {
				t.Fatalf("trial %d: 1/%v = %v, want %v", trial, x, out[i], 1/x)
			}
		}
	}
}

// minOf4 is the least entry, or NaN when any entry is NaN.
func TestMinOf4(t *testing.T) {
	if !haveKernel {
		t.Skip("no AVX2 kernel on this machine")
	}
	rng := rand.New(rand.NewPCG(31, 37))
	for trial := range 500 {
		n := 4 * (1 + rng.IntN(20))
		x := make([]float64, n)
		want := math.Inf(1)
		for i := range x {
			x[i] = math.Ldexp(rng.Float64(), -rng.IntN(1100))
			want = min(want, x[i])
		}
		if trial%5 == 0 {
			x[rng.IntN(n)] = math.NaN()
			want = math.NaN()
		}
		got := minOf4(&x[0], n)
		if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && got != want {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
	}
}

// Powers produced ahead on a second goroutine (powers.bg) are the
// sequential table's, entry for entry and bit for bit, for any order of
// requests (increasing, revisits, jumps beyond the cap, convergence), and
// known() reports what the sequential table holds after the same
// requests.
func TestPipelinedPowersEqualSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	defer func(f, a int) { pipeFrom, pipeAhead = f, a }(pipeFrom, pipeAhead)
	for trial := range 60 {
		k := 2 + rng.IntN(30)
		if trial%4 == 1 {
			k = parFrom + rng.IntN(20) // products shared in chunks (stepShared)
		}
		P := randomChain(rng, k, []float64{0, 0.3, 0.8}[trial%3])
		if trial%5 == 4 {
			// converges quickly to a float fixed point
			P = bandedChain(rng, k, k, 1)
		}
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			ch, err = markov.New(nil, P, markov.InitAny, nil)
			if err != nil {
				t.Fatal(err)
			}
		}
		pipeFrom, pipeAhead = 1<<30, 2
		seq := newPowers(ch)
		pipeFrom, pipeAhead = 1, 1+rng.IntN(4)
		bg := newPowers(ch)
		if !bg.bg && runtime.GOMAXPROCS(0) > 1 {
			t.Fatal("not pipelined")
		}
		limit := 3 + rng.IntN(40)
		seq.limit = limit
		if bg.bg {
			bg.limit, bg.table = limit, bg.table[:limit]
		}
		d := 0
		for range 60 {
			switch rng.IntN(4) {
			case 0:
				d = rng.IntN(limit + 20) // anywhere, beyond the cap too
			case 1:
				d = max(0, d-rng.IntN(5))
			default:
				d += rng.IntN(3)
			}
			a, b := seq.at(d), bg.at(d)
			if !samePower(a, b) || !samePattern(a.z, b.z) {
				t.Fatalf("trial %d k=%d: P^%d differs between sequential and pipelined", trial, k, d)
			}
			n1, c1 := seq.known()
			n2, c2 := bg.known()
			if n1 != n2 || c1 != c2 {
				t.Fatalf("trial %d k=%d after P^%d: sequential holds %d (converged %v), pipelined reports %d (%v)", trial, k, d, n1, c1, n2, c2)
			}
		}
	}
}

// σ, node, quilt and influence are the same with the powers pipelined and
// sequential, for every initial kind, on chains small enough to pipeline
// only when told to.
func TestPipelinedSearchSameResult(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 53))
	defer func(f, l int) { pipeFrom, lazyMinK = f, l }(pipeFrom, lazyMinK)
	lazyMinK = 2 // the producer also fills pre for lazy stationary chains
	for trial := range 40 {
		k := 2 + rng.IntN(14)
		P := bandedChain(rng, k, 1, []float64{0.001, 0.01, 1}[trial%3])
		T := []int{30, 300, 3000}[trial%3]
		eps := []float64{0.3, 1, 4}[rng.IntN(3)]
		for _, init := range []markov.InitKind{markov.InitStationary, markov.InitAny, markov.InitGiven} {
			var q []float64
			if init == markov.InitGiven {
				if T > 30 {
					continue // slow either way: every node is visited
				}
				q = randomDist(rng, k)
			}
			ch, err := markov.New(nil, P, init, q)
			if err != nil {
				t.Fatal(err)
			}
			run := func(from int) nodeResult {
				pipeFrom = from
				o, err := newExactOracle(ch, T)
				if err != nil {
					t.Fatal(err)
				}
				return search(o, T, eps)
			}
			seq, bg := run(1<<30), run(1)
			if init == markov.InitStationary && k >= 4 {
				// pre was used: every block bound, clean flag and
				// right-only maximum came from the producer or the search
				o, _ := newExactOracle(ch, T)
				pipeFrom = 1
				search(o, T, eps)
				if o.lazyOK() && o.pre == nil {
					t.Fatalf("trial %d: lazy pipelined chain without pre", trial)
				}
			}
			if seq != bg {
				t.Fatalf("trial %d %v k=%d T=%d: sequential %+v, pipelined %+v", trial, init, k, T, seq, bg)
			}
		}
	}
}

// mulPattern is the boolean matrix product.
func TestMulPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(59, 61))
	for trial := range 300 {
		k := 1 + rng.IntN(12)
		a, b := make([][]bool, k), make([][]bool, k)
		for i := range k {
			a[i], b[i] = make([]bool, k), make([]bool, k)
			full := rng.IntN(3) == 0
			for j := range k {
				a[i][j] = rng.IntN(3) == 0
				b[i][j] = full || rng.IntN(2) == 0
			}
		}
		got := mulPattern(a, b)
		for i := range k {
			for j := range k {
				want := false
				for l := range k {
					want = want || a[i][l] && b[l][j]
				}
				if got[i][j] != want {
					t.Fatalf("trial %d: (%d,%d) = %v, want %v", trial, i, j, got[i][j], want)
				}
			}
		}
	}
}

// The same on chains large enough to be pipelined by default (shared
// products, the producer's bounds): σ, node, quilt and influence equal
// the sequential powers'.
func TestPipelinedLargeChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(67, 71))
	defer func(f int) { pipeFrom = f }(pipeFrom)
	for trial := range 2 {
		k := 48 + rng.IntN(8)
		P := bandedChain(rng, k, 2, []float64{0.01, 0.1}[trial%2])
		for _, init := range []markov.InitKind{markov.InitStationary, markov.InitAny} {
			ch, err := markov.New(nil, P, init, nil)
			if err != nil {
				t.Fatal(err)
			}
			run := func(from int) nodeResult {
				pipeFrom = from
				o, err := newExactOracle(ch, 1_000_000)
				if err != nil {
					t.Fatal(err)
				}
				return search(o, 1_000_000, 1)
			}
			if seq, bg := run(1<<30), run(48); seq != bg {
				t.Fatalf("trial %d %v k=%d: sequential %+v, pipelined %+v", trial, init, k, seq, bg)
			}
		}
	}
}
