// Package gemm multiplies dense row-major matrices with the project's
// vector kernels, in gonum's order and roundings.
//
// gonum's Dgemm (alpha = 1, beta = 0, neither matrix transposed) computes
// every entry as ((0 + a_0·b_0) + a_1·b_1) + … over l = 0, 1, …, k−1 in
// that order, each product rounded and then added, skipping the terms
// whose a_l is 0 (which, for finite b, changes nothing but the sign of a
// zero). The kernels keep that order and those roundings — a multiply and
// an add per term, no fused multiply-add — and only change the blocking:
// a 6×8 (AVX2) or 6×16 (AVX-512) tile of C in registers. So a dot
// product's rounding error is the textbook one, γ_k·Σ|a_l·b_l|, whatever
// the kernel (docs/math.md §8.12's rounding-safe check relies on no more).
package gemm

// Mul sets c = a·b for a m×k, b k×n and c m×n, row-major with strides k,
// n and n: tiles of 6 rows and 8 (or 16) columns by the kernel; when the
// rows or columns do not divide into tiles the last tile is placed flush
// with the end and recomputes a few entries with the same values. Smaller
// matrices, or no kernel, go entry by entry in the same order.
func Mul(c, a, b []float64, m, k, n int) {
	if m == 0 || n == 0 {
		return
	}
	_, _, _ = c[m*n-1], a[m*k-1], b[k*n-1] // bounds, once
	switch {
	case !HaveKernel || k == 0 || m < 6 || n < 8:
		MulScalar(c, a, b, m, k, n)
	case HaveWide && n >= 16:
		for j := 0; j < n; j += 16 {
			j = min(j, n-16)
			for i := 0; i < m; i += 6 {
				i = min(i, m-6)
				Kernel6x16(k, &a[i*k], k, &b[j], n, &c[i*n+j], n)
			}
		}
	default:
		for j := 0; j < n; j += 8 {
			j = min(j, n-8)
			for i := 0; i < m; i += 6 {
				i = min(i, m-6)
				Kernel6x8(k, &a[i*k], k, &b[j], n, &c[i*n+j], n)
			}
		}
	}
}

// MulScalar is Mul entry by entry, without the kernels: rows of c as sums
// of scaled rows of b, each entry's terms in the order l = 0, 1, …,
// product then add.
func MulScalar(c, a, b []float64, m, k, n int) {
	for i := range m {
		ci := c[i*n : (i+1)*n]
		clear(ci)
		for l, x := range a[i*k : (i+1)*k] {
			if x == 0 {
				continue
			}
			for j, y := range b[l*n : (l+1)*n] {
				ci[j] += float64(x * y)
			}
		}
	}
}
