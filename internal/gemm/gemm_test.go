package gemm

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// TestMulIsGonums: every shape (tiles flush with the ends, fewer rows or
// columns than a tile), signed entries and zeros, with each kernel and
// without: bit for bit gonum's Dgemm.
func TestMulIsGonums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kern, wide := HaveKernel, HaveWide
	defer func() { HaveKernel, HaveWide = kern, wide }()
	for _, path := range []struct{ kernel, wide bool }{{false, false}, {kern, false}, {kern, wide}} {
		HaveKernel, HaveWide = path.kernel, path.wide
		for trial := range 400 {
			m, k, n := 1+rng.IntN(30), 1+rng.IntN(60), 1+rng.IntN(60)
			a, b := make([]float64, m*k), make([]float64, k*n)
			for i := range a {
				if rng.IntN(5) > 0 {
					a[i] = rng.NormFloat64()
				}
			}
			for i := range b {
				b[i] = rng.Float64()
			}
			c := make([]float64, m*n)
			for i := range c {
				c[i] = 7 // overwritten
			}
			Mul(c, a, b, m, k, n)
			want := make([]float64, m*n)
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
				blas64.General{Rows: m, Cols: k, Stride: k, Data: a},
				blas64.General{Rows: k, Cols: n, Stride: n, Data: b}, 0,
				blas64.General{Rows: m, Cols: n, Stride: n, Data: want})
			for i := range want {
				if c[i] != want[i] {
					t.Fatalf("kernel %v wide %v, trial %d (%d×%d by %d×%d): entry %d = %v, gonum %v", path.kernel, path.wide, trial, m, k, k, n, i, c[i], want[i])
				}
			}
		}
	}
}

func BenchmarkMul16x51x51(b *testing.B) {
	m, k, n := 16, 51, 51
	x, y, z := make([]float64, m*k), make([]float64, k*n), make([]float64, m*n)
	for i := range x {
		x[i] = float64(i%7) - 3
	}
	for i := range y {
		y[i] = float64(i%5) / 5
	}
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			Mul(z, x, y, m, k, n)
		}
	})
	b.Run("gonum", func(b *testing.B) {
		for b.Loop() {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
				blas64.General{Rows: m, Cols: k, Stride: k, Data: x},
				blas64.General{Rows: k, Cols: n, Stride: n, Data: y}, 0,
				blas64.General{Rows: m, Cols: n, Stride: n, Data: z})
		}
	})
}
