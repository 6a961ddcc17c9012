//go:build !amd64 || purego

package gemm

// HaveKernel and HaveWide: no vector kernel on this architecture.
var (
	HaveKernel = false
	HaveWide   = false
)

// Kernel6x8 is not available here (HaveKernel is false).
func Kernel6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no kernel on this architecture")
}

// Kernel6x16 is not available here (HaveWide is false).
func Kernel6x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("gemm: no kernel on this architecture")
}
