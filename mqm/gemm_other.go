//go:build !amd64 || purego

package mqm

var haveKernel = false

func kernel6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	panic("mqm: no kernel on this architecture")
}
