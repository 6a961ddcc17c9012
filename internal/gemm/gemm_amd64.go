//go:build !purego

package gemm

import "golang.org/x/sys/cpu"

// Kernel6x8 sets the 6×8 tile C[r][j] = Σ_{l<k} A[r][l]·B[l][j] (r < 6,
// j < 8; strides in elements, k ≥ 1): each term a product rounded then
// added, l in increasing order from 0 (gemm_amd64.s, AVX2).
//
//go:noescape
func Kernel6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

// Kernel6x16 is Kernel6x8 on 16 columns with AVX-512.
//
//go:noescape
func Kernel6x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

// HaveKernel and HaveWide say whether Kernel6x8 (AVX2) and Kernel6x16
// (AVX-512) may run (variables so tests can compare the paths).
var (
	HaveKernel = cpu.X86.HasAVX2
	HaveWide   = cpu.X86.HasAVX512F
)
