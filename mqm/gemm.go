package mqm

import (
	"runtime"
	"sync"

	"github.com/pufferfish-privacy/pufferfish/internal/gemm"
)

// Products of powers without gonum's Dgemm, bit for bit the same.
//
// gonum's Dgemm (alpha = 1, beta = 0, neither matrix transposed) computes
// every entry as ((0 + a_0·b_0) + a_1·b_1) + … over l = 0, 1, …, k−1 in
// that order, each product rounded and then added (MULPD, ADDPD), skipping
// the terms whose a_l is 0 (for non-negative finite entries, adding
// 0·b = +0 changes nothing). Its blocking only changes which entries are
// computed when, never the order of one entry's terms. mulInto keeps that
// order and those roundings and only changes the blocking: an AVX2 kernel
// keeps a 6×8 tile of C in registers (kernel6x8: a multiply and an add per
// term, no fused multiply-add), and the row tiles are shared among
// GOMAXPROCS goroutines. The result is the same float64s as gonum's for
// every input of non-negative finite entries (tested bit for bit), so
// every table, influence and σ is unchanged (docs/math.md §4.2,
// arithmetic that changes no bit).

// mulInto sets c = a·b for k×k row-major matrices (stride k).
func mulInto(c, a, b []float64, k int) { mulIntoW(c, a, b, k, 0) }

// mulIntoW is mulInto on at most workers goroutines (0: GOMAXPROCS). The
// result does not depend on the number: each entry is computed by one
// goroutine, in the same order.
func mulIntoW(c, a, b []float64, k, workers int) {
	tiles := k / 6
	nw := 1
	if k >= parFrom {
		if workers <= 0 {
			workers = runtime.GOMAXPROCS(0)
		}
		nw = min(workers, tiles)
	}
	if nw <= 1 {
		mulRows(c, a, b, k, 0, k)
		return
	}
	var wg sync.WaitGroup
	for w := range nw {
		r0, r1 := tiles*w/nw*6, tiles*(w+1)/nw*6
		if w == nw-1 {
			r1 = k // the last worker takes the rows below the last tile
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mulRows(c, a, b, k, r0, r1)
		}()
	}
	wg.Wait()
}

// parFrom is the size from which a product is shared among goroutines
// (below it one product takes a few µs, about a goroutine's start).
const parFrom = 48

// mulRows computes rows [r0, r1) of c = a·b: tiles of 6 rows and 8
// columns by the kernel. When the rows or columns do not divide into
// tiles, the last tile is placed flush with the end (rows r1−6.., columns
// k−8..) and recomputes a few entries already written, with the same
// values (the same computation); these rows belong to this call alone.
// Smaller ranges go entry by entry in the same order.
func mulRows(c, a, b []float64, k, r0, r1 int) {
	if k < 8 || r1-r0 < 6 {
		mulRowsScalar(c, a, b, k, r0, r1)
		return
	}
	if haveWide && k >= 16 {
		for j := 0; j < k; j += 16 {
			j = min(j, k-16)
			for i := r0; i < r1; i += 6 {
				i = min(i, r1-6)
				gemm.Kernel6x16(k, &a[i*k], k, &b[j], k, &c[i*k+j], k)
			}
		}
		return
	}
	for j := 0; j < k; j += 8 {
		j = min(j, k-8)
		for i := r0; i < r1; i += 6 {
			i = min(i, r1-6)
			gemm.Kernel6x8(k, &a[i*k], k, &b[j], k, &c[i*k+j], k)
		}
	}
}

// mulRowsScalar is mulRows entry by entry (gemm.MulScalar on the rows).
func mulRowsScalar(c, a, b []float64, k, r0, r1 int) {
	if r1 > r0 {
		gemm.MulScalar(c[r0*k:r1*k], a[r0*k:r1*k], b, r1-r0, k, k)
	}
}
