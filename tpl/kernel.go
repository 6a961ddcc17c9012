package tpl

import (
	"math"
	"sort"
)

// pair is one ordered pair of rows (a, b) of a kernel, reduced to what
// docs/math.md (8.1) needs: the cumulative sums q = p(S), d = p'(S) of the
// column prefixes S in the order of decreasing ratio p/p' (§8.2), kept only
// for prefixes ending at a column with p > p' (a prefix ending elsewhere is
// never the unique optimum: dropping its last column does not lower the
// value).
type pair struct {
	a, b int
	q, d []float64
	hint int // the optimal prefix length at the last call (see lam)
}

// columnOrder orders the columns j by p(j)/p2(j), descending (c/0 = +∞),
// columns where both are zero last.
func columnOrder(p, p2 []float64) []int {
	var both, rest []int
	for j := range p {
		if p[j] == 0 && p2[j] == 0 {
			both = append(both, j)
		} else {
			rest = append(rest, j)
		}
	}
	sort.SliceStable(rest, func(i, l int) bool {
		x, y := rest[i], rest[l]
		return p[x]*p2[y] > p[y]*p2[x]
	})
	return append(rest, both...)
}

// makePair accumulates the prefixes of rows p, p2 in the given order. The
// order must sort p/p2 decreasingly up to columns where both vanish.
func makePair(a, b int, order []int, p, p2 []float64) pair {
	pr := pair{a: a, b: b}
	var q, d float64
	for _, j := range order {
		q += p[j]
		d += p2[j]
		if p[j] > p2[j] {
			pr.q = append(pr.q, math.Min(q, 1))
			pr.d = append(pr.d, math.Min(d, 1))
		}
	}
	return pr
}

// lam is log of docs/math.md (8.1) for one pair: the largest over the
// prefixes m = 0..len(q) of f(m) = (1 + (e^A−1)q_m)/(1 + (e^A−1)d_m),
// computed as (w + (1−w)q)/(w + (1−w)d) with w = e^{−A}, stable for every
// A ≥ 0 including +Inf (m = 0, the empty prefix, gives 1).
//
// f is unimodal in m: the columns come in decreasing ratio, f(m+1) > f(m)
// iff the (m+1)-th ratio exceeds f(m), and f(m+1) is a mediant of f(m) and
// that ratio; once a column's ratio is ≤ f, every later one is too, so f
// never rises again, and equal neighbours occur only at the top. So a
// climb from the previous optimum finds the maximum, in few steps when A
// moves little between calls (the recursions of §8.3).
func (pr *pair) lam(A float64) float64 {
	if A <= 0 || len(pr.q) == 0 {
		return 0
	}
	return pr.lamW(math.Exp(-A), -math.Expm1(-A))
}

// lamW is lam with w = e^{−A} and m = 1 − w given (A > 0).
func (pr *pair) lamW(w, m float64) float64 {
	if len(pr.q) == 0 {
		return 0
	}
	f := func(i int) float64 {
		if i == 0 {
			return 1
		}
		return (w + m*pr.q[i-1]) / (w + m*pr.d[i-1])
	}
	i := min(pr.hint, len(pr.q))
	cur := f(i)
	moved := false
	for i < len(pr.q) {
		nx := f(i + 1)
		if !(nx > cur) {
			break
		}
		i, cur, moved = i+1, nx, true
	}
	for !moved && i > 0 {
		pv := f(i - 1)
		if !(pv > cur) {
			break
		}
		i, cur = i-1, pv
	}
	pr.hint = i
	return math.Log(cur)
}

// lamScan is lam by scanning every prefix (the tests compare the two).
func (pr *pair) lamScan(A float64) float64 {
	if A <= 0 {
		return 0
	}
	w := math.Exp(-A)
	m := -math.Expm1(-A)
	best := 1.0
	for i, q := range pr.q {
		if r := (w + m*q) / (w + m*pr.d[i]); r > best {
			best = r
		}
	}
	return math.Log(best)
}

// fixedPoint is the largest over the pair's prefixes of the root of
// β = λ_{q,d}(β) + ε ([CYXX18] Thm 10; docs/math.md §8.4), at least ε.
func (pr *pair) fixedPoint(eps float64) float64 {
	best := eps
	for i, q := range pr.q {
		if d := pr.d[i]; q > d {
			if r := thm10(q, d, eps); r > best || math.IsNaN(r) {
				best = r
			}
		}
	}
	return best
}

// thm10 solves z(1 + (z−1)d) = e^ε(1 + (z−1)q) for its positive root and
// returns log z (docs/math.md §8.4).
func thm10(q, d, eps float64) float64 {
	E := math.Exp(eps)
	if d == 0 {
		if q*E >= 1 {
			return math.Inf(1)
		}
		return eps + math.Log((1-q)/(1-q*E))
	}
	B := d + q*E - 1
	disc := math.Sqrt(B*B + 4*d*E*(1-q))
	var z float64
	if B >= 0 {
		z = (B + disc) / (2 * d)
	} else {
		z = 2 * E * (1 - q) / (disc - B)
	}
	return math.Log(z)
}

// kernel is one step's kernel reduced to its ordered pairs of rows over
// the states of positive probability (nil rows are skipped). It remembers
// the per-pair values at the last two arguments: the recursions of
// docs/math.md §8.3 reach a floating-point fixed point (or 2-cycle) and
// then ask for the same arguments at every step.
type kernel struct {
	k     int
	pairs []pair
	idx   []int // idx[a*k+b]: position of pair (a, b), or −1
	cache [2]kcache
	next  int
}

type kcache struct {
	ok   bool
	A    float64
	vals []float64
	max  float64
}

// newKernel builds the kernel of rows; orders, when not nil, gives each
// pair's column order (orders[a*k+b]), else it is sorted here.
func newKernel(rows [][]float64, orders [][]int) *kernel {
	k := len(rows)
	kn := &kernel{k: k, idx: make([]int, k*k)}
	for i := range kn.idx {
		kn.idx[i] = -1
	}
	for a := range k {
		for b := range k {
			if a == b || rows[a] == nil || rows[b] == nil {
				continue
			}
			var ord []int
			if orders != nil {
				ord = orders[a*k+b]
			} else {
				ord = columnOrder(rows[a], rows[b])
			}
			kn.idx[a*k+b] = len(kn.pairs)
			kn.pairs = append(kn.pairs, makePair(a, b, ord, rows[a], rows[b]))
		}
	}
	return kn
}

// at returns the per-pair values λ_M(a, b; A) and their maximum λ_M(A).
func (kn *kernel) at(A float64) ([]float64, float64) {
	for i := range kn.cache {
		if c := &kn.cache[i]; c.ok && c.A == A {
			return c.vals, c.max
		}
	}
	c := &kn.cache[kn.next]
	kn.next = 1 - kn.next
	if cap(c.vals) < len(kn.pairs) {
		c.vals = make([]float64, len(kn.pairs))
	}
	c.vals = c.vals[:len(kn.pairs)]
	c.max = 0
	w, m := math.Exp(-A), -math.Expm1(-A)
	for i := range kn.pairs {
		v := 0.0
		if A > 0 {
			v = kn.pairs[i].lamW(w, m)
		}
		c.vals[i] = v
		if v > c.max || math.IsNaN(v) {
			c.max = v
		}
	}
	c.ok, c.A = true, A
	return c.vals, c.max
}

// max is λ_M(A), the largest over the pairs.
func (kn *kernel) max(A float64) float64 {
	_, m := kn.at(A)
	return m
}

// pairValue is λ_M(a, b; A), 0 when (a, b) is not a pair of the kernel.
func (kn *kernel) pairValue(a, b int, A float64) float64 {
	i := kn.idx[a*kn.k+b]
	if i < 0 || A <= 0 {
		return 0
	}
	v, _ := kn.at(A)
	return v[i]
}

// sup is the least fixed point of β = λ_M(β) + ε (docs/math.md §8.4).
func (kn *kernel) sup(eps float64) float64 {
	best := eps
	for i := range kn.pairs {
		if v := kn.pairs[i].fixedPoint(eps); v > best {
			best = v
		}
	}
	return best
}

// columnOrders is the column order of every pair of rows of the backward
// kernels P^B_t(x, y) ∝ q_{t−1}(y)P(y, x) of any start: the ratio
// P^B_t(a, y)/P^B_t(b, y) is P(y, a)/P(y, b) times a factor that does not
// depend on y, and columns with q_{t−1}(y) = 0 vanish in both rows.
func columnOrders(P [][]float64) [][]int {
	k := len(P)
	col := make([][]float64, k)
	for x := range k {
		col[x] = make([]float64, k)
		for y := range k {
			col[x][y] = P[y][x]
		}
	}
	out := make([][]int, k*k)
	for a := range k {
		for b := range k {
			if a != b {
				out[a*k+b] = columnOrder(col[a], col[b])
			}
		}
	}
	return out
}
