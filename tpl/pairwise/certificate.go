package pairwise

import (
	"context"
	"math"
	"runtime"
	"sync"
)

// kernel is one transition kernel M (the chain P forward, its time
// reversal P* backward, or a backward kernel of a given start) with the
// column range of every row's support, for the sparse products of the
// closed-form plan (docs/math.md §8.11).
type kernel struct {
	k      int
	rows   []float64 // k×k row-major; a row of a state of zero probability is all zero and marked in dead
	dead   []bool    // rows not defined (a state of zero probability at that time)
	lo, hi []int     // support of row a is within columns lo[a]..hi[a]−1
	// rowErr bounds the entrywise relative error of the computed rows
	// against the exact kernel (0: exact, as P itself; the time reversal
	// carries π's error). A plan's ratio for the computed rows times
	// (1+3·rowErr)/(1−3·rowErr) bounds the exact rows' (docs/math.md §8.11).
	rowErr float64
	// cfWork, lpWork cache sweepWork (0: not computed yet).
	cfWork, lpWork float64
}

// rowCharge is the factor every plan's ratio is charged for the rows'
// own error when rounding up (up > 1: rowFactor), else 1 (docs/math.md
// §8.11, "Finding a certificate").
func (kn *kernel) rowCharge(up float64) float64 {
	if up > 1 {
		return kn.rowFactor()
	}
	return 1
}

// cfRounded is cfRatio, multiplied by safety(k) when rounding up (up > 1):
// the closed form's ratio for the computed rows, never below its exact
// value (the rows' own error is rowCharge's).
func (kn *kernel) cfRounded(a, b int, G, buf []float64, up float64) float64 {
	t := kn.cfRatio(a, b, G, buf)
	if up > 1 {
		t *= safety(kn.k)
	}
	return t
}

// rowFactor is (1+3·rowErr)/(1−3·rowErr), rounded up.
func (kn *kernel) rowFactor() float64 {
	if kn.rowErr == 0 {
		return 1
	}
	return (1 + 3*kn.rowErr) / (1 - 3*kn.rowErr) * (1 + 4*unitRound)
}

func newKernel(M [][]float64) *kernel {
	k := len(M)
	kn := &kernel{k: k, rows: make([]float64, k*k), dead: make([]bool, k), lo: make([]int, k), hi: make([]int, k)}
	for a, row := range M {
		if row == nil {
			kn.dead[a] = true
			continue
		}
		copy(kn.rows[a*k:], row)
		kn.lo[a], kn.hi[a] = k, 0
		for j, v := range row {
			if v > 0 {
				kn.lo[a] = min(kn.lo[a], j)
				kn.hi[a] = j + 1
			}
		}
		if kn.hi[a] == 0 {
			kn.dead[a] = true
		}
	}
	return kn
}

// safety is the factor by which a computed quantity of an n-term chain of
// positive sums, products and quotients may be below the exact one: every
// operation errs by at most one unit roundoff, so (1+u)^{4n} covers it.
func safety(n int) float64 { return 1 + 8*float64(n+4)*unitRound }

// closure returns the min-times closure of Λ (Λ̂_ij = min over paths
// i→l→…→j of the products of Λ along the path): every message bounded by
// Λ is bounded by Λ̂ (m_i ≤ Λ_il m_l ≤ Λ_il Λ_lj m_j). Floyd–Warshall,
// O(k³); up multiplies every product by a factor covering its rounding,
// so the result is never below the exact closure (docs/math.md §8.11).
func closure(lam []float64, k int, up float64) []float64 {
	c := append([]float64(nil), lam...)
	for l := range k {
		rl := c[l*k : (l+1)*k]
		for i := range k {
			cil := c[i*k+l] * up
			if math.IsInf(cil, 1) {
				continue
			}
			ri := c[i*k : (i+1)*k]
			for j, v := range rl {
				if w := cil * v; w < ri[j] {
					ri[j] = w
				}
			}
		}
	}
	return c
}

// gamma is Γ_ij = R·Λ̂_ij (i ≠ j), Γ_jj = 1 (docs/math.md §8.11): the bound
// on v_i/v_j for v = h∘m, h ∈ K_R.
func gamma(lam []float64, k int, R float64, up float64) []float64 {
	g := closure(lam, k, up)
	for i := range k {
		for j := range k {
			if i == j {
				g[i*k+j] = 1
			} else {
				g[i*k+j] *= R
			}
		}
	}
	return g
}

// cfRatio is the closed-form plan's ratio for the ordered pair of rows
// p = M(a,·), p' = M(b,·) against Γ (docs/math.md (8.11)): with
// e = (p − p')⁺ of mass s, m = min(p, p') and ĝ = (e/s)ᵀΓ,
//
//	t = (s + Σ_j m_j/ĝ_j) / Σ_j p'_j/ĝ_j,
//
// the least t for which the plan diag(m) + e·wᵀ is feasible. buf holds k
// floats. It returns 1 when p ≤ p' (the diagonal plan).
func (kn *kernel) cfRatio(a, b int, G []float64, buf []float64) float64 {
	k := kn.k
	p, q := kn.rows[a*k:(a+1)*k], kn.rows[b*k:(b+1)*k]
	lo, hi := kn.lo[b], kn.hi[b]
	g := buf[lo:hi]
	clear(g)
	s := 0.0
	for i := kn.lo[a]; i < kn.hi[a]; i++ {
		e := p[i] - q[i]
		if e <= 0 {
			continue
		}
		s += e
		gi := G[i*k+lo : i*k+hi]
		for j, v := range gi {
			g[j] += e * v
		}
	}
	if s == 0 {
		return 1
	}
	num, den := s, 0.0
	for j, gj := range g {
		qj := q[lo+j]
		if qj == 0 {
			continue
		}
		gn := gj / s // ĝ_j ≥ 1 when Γ is finite
		if math.IsInf(gn, 1) {
			continue
		}
		num += min(p[lo+j], qj) / gn
		den += qj / gn
	}
	if den == 0 {
		return math.Inf(1)
	}
	return num / den
}

// pairsOf lists the ordered pairs (a, b), a ≠ b, of defined rows.
func (kn *kernel) pairsOf() [][2]int {
	var out [][2]int
	for a := range kn.k {
		for b := range kn.k {
			if a != b && !kn.dead[a] && !kn.dead[b] {
				out = append(out, [2]int{a, b})
			}
		}
	}
	return out
}

// workers is the number of goroutines a sweep uses.
var workers = min(runtime.GOMAXPROCS(0), 8)

// sweep sets out[a*k+b] = f(a, b) for every ordered pair of defined rows,
// in parallel; it returns ctx.Err() if the context ends first (checked
// every few pairs, so a sweep stops well within a second).
func (kn *kernel) sweep(ctx context.Context, out []float64, f func(a, b int, buf []float64) float64) error {
	k := kn.k
	nw := workers
	if k < 24 {
		nw = 1
	}
	var wg sync.WaitGroup
	var stop bool
	var mu sync.Mutex
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]float64, k)
			for a := w; a < k; a += nw {
				if ctx.Err() != nil {
					mu.Lock()
					stop = true
					mu.Unlock()
					return
				}
				for b := range k {
					if a == b {
						out[a*k+b] = 1
						continue
					}
					if kn.dead[a] || kn.dead[b] {
						out[a*k+b] = math.Inf(1)
						continue
					}
					out[a*k+b] = f(a, b, buf)
				}
			}
		}()
	}
	wg.Wait()
	if stop {
		return ctx.Err()
	}
	return nil
}
