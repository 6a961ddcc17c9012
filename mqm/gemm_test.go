package mqm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
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
