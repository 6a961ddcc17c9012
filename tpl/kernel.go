package tpl

import (
	"github.com/pufferfish-privacy/pufferfish/markov"
	"math"
	"slices"
)

// pair is one ordered pair of rows (a, b) of a kernel, reduced to what
// docs/math.md (8.1) needs: the cumulative sums q = p(S), d = p'(S) of the
// column prefixes S in the order of decreasing ratio p/p' (§8.2), kept only
// for prefixes ending at a column with p > p' (a prefix ending elsewhere is
// never the unique optimum: dropping its last column does not lower the
// value). Each prefix also keeps its complements qc = 1 − q, dc = 1 − d
// and its excess qd = q − d, each summed from the entries themselves
// rather than by subtraction: near-deterministic rows (q ≈ 1 − d) and tiny
// budgets make the differences carry the whole answer (docs/math.md §8.9).
type pair struct {
	a, b    int
	q, d    []float64
	qc, dc  []float64
	qd      []float64
	hint    int     // the optimal prefix length at the last call (see lam)
	roundUp float64 // 1 + the relative error bound of one value (§8.9)
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
	slices.SortStableFunc(rest, func(x, y int) int {
		switch l, r := p[x]*p2[y], p[y]*p2[x]; {
		case l > r:
			return -1
		case l < r:
			return 1
		}
		return 0
	})
	return append(rest, both...)
}

// makePair accumulates the prefixes of rows p, p2 in the given order. The
// order must sort p/p2 decreasingly up to columns where both vanish; up
// rounds every value of the pair up (roundUp).
func makePair(a, b int, order []int, p, p2 []float64, up float64) pair {
	pr := pair{a: a, b: b, roundUp: up}
	// suffix sums, from the last column back: the complements
	sq, sd := make([]float64, len(order)+1), make([]float64, len(order)+1)
	for n := len(order) - 1; n >= 0; n-- {
		sq[n] = sq[n+1] + p[order[n]]
		sd[n] = sd[n+1] + p2[order[n]]
	}
	kept := 0
	for _, j := range order {
		if p[j] > p2[j] {
			kept++
		}
	}
	// one allocation for the five slices (at k states a kernel holds k²
	// pairs of up to k prefixes each)
	buf := make([]float64, 5*kept)
	pr.q, pr.d, pr.qc, pr.dc, pr.qd = buf[:0:kept], buf[kept:kept:2*kept], buf[2*kept:2*kept:3*kept], buf[3*kept:3*kept:4*kept], buf[4*kept:4*kept:5*kept]
	var q, d, qd float64
	for n, j := range order {
		q += p[j]
		d += p2[j]
		qd += p[j] - p2[j] // ≥ 0 on every kept prefix: ratios ≥ 1 come first
		if p[j] > p2[j] {
			pr.q = append(pr.q, math.Min(q, 1))
			pr.d = append(pr.d, math.Min(d, 1))
			pr.qc, pr.dc, pr.qd = append(pr.qc, sq[n+1]), append(pr.dc, sd[n+1]), append(pr.qd, qd)
		}
	}
	return pr
}

// roundUp is the factor 1 + γ that docs/math.md §8.9 proves covers the
// relative error of every value λ and every fixed point computed from the
// rows (k columns): each row is taken to be within relative δ of a
// stochastic row, δ = its distance |Σ − 1| from summing to 1 plus the
// rounding of that sum, and every quantity of a pair is a sum of at most k
// non-negative entries, then a bounded number of correctly rounded
// operations. entryErr is a bound on the rows' own entrywise relative
// error when they were computed (a time reversal through π), 0 for rows
// as given. Every value is multiplied by it, so the computed bound is
// never below the exact one for the stochastic chain the rows stand for.
func roundUp(rows [][]float64, entryErr float64) float64 {
	const u = 0x1p-53
	k := len(rows)
	delta := entryErr
	for _, r := range rows {
		if r == nil {
			continue
		}
		s := 0.0
		for _, v := range r {
			s += v
		}
		delta = max(delta, math.Abs(s-1)+float64(k)*u, entryErr+math.Abs(s-1))
	}
	return 1 + 4*delta + float64(2*k+16)*u
}

// lam is log of docs/math.md (8.1) for one pair: the largest over the
// prefixes m = 0..len(q) of f(m) = (1 + (e^A−1)q_m)/(1 + (e^A−1)d_m),
// computed as log1p(μ(q−d)/(w + μd)) with w = e^{−A}, μ = 1 − w: no
// difference of nearly equal numbers (docs/math.md §8.9), stable for every
// A ≥ 0 including +Inf (m = 0, the empty prefix, gives 0), and rounded up.
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

// excess is f(i) − 1 of lam's prefix i (0 for the empty prefix).
func (pr *pair) excess(i int, w, m float64) float64 {
	if i == 0 {
		return 0
	}
	return m * pr.qd[i-1] / (w + m*pr.d[i-1])
}

// lamW is lam with w = e^{−A} and m = 1 − w given (A > 0).
func (pr *pair) lamW(w, m float64) float64 {
	if len(pr.q) == 0 {
		return 0
	}
	i := min(pr.hint, len(pr.q))
	cur := pr.excess(i, w, m)
	moved := false
	for i < len(pr.q) {
		nx := pr.excess(i+1, w, m)
		if !(nx > cur) {
			break
		}
		i, cur, moved = i+1, nx, true
	}
	for !moved && i > 0 {
		pv := pr.excess(i-1, w, m)
		if !(pv > cur) {
			break
		}
		i, cur = i-1, pv
	}
	pr.hint = i
	return math.Log1p(cur) * pr.roundUp
}

// lamScan is lam by scanning every prefix (the tests compare the two).
func (pr *pair) lamScan(A float64) float64 {
	if A <= 0 {
		return 0
	}
	w := math.Exp(-A)
	m := -math.Expm1(-A)
	best := 0.0
	for i := range pr.q {
		best = math.Max(best, pr.excess(i+1, w, m))
	}
	return math.Log1p(best) * pr.roundUp
}

// fixedPoint is the largest over the pair's prefixes of the root of
// β = λ_{q,d}(β) + ε ([CYXX18] Thm 10; docs/math.md §8.4), at least ε,
// rounded up (§8.9).
func (pr *pair) fixedPoint(eps float64) float64 {
	return pr.fixedPointE(eps, math.Expm1(eps))
}

// fixedPointE is fixedPoint with e = e^ε − 1 given. The root's logarithm
// is monotone in u, so the largest u is found first and one logarithm
// taken: each prefix's u is rounded up, so the largest of them is at
// least every prefix's exact root (docs/math.md §8.9).
func (pr *pair) fixedPointE(eps, e float64) float64 {
	best := 0.0
	for i, q := range pr.q {
		if d := pr.d[i]; q > d {
			u := thm10u(q, d, pr.qc[i], e, pr.roundUp)
			if math.IsNaN(u) {
				return u
			}
			best = math.Max(best, u)
		}
	}
	if best == 0 {
		return eps
	}
	return math.Max(eps, math.Log1p(best*pr.roundUp)*pr.roundUp)
}

// thm10 solves z(1 + (z−1)d) = e^ε(1 + (z−1)q) for its positive root and
// returns log z, rounded up (docs/math.md §8.4, §8.9). With u = z − 1 and
// e = e^ε − 1 the equation is d·u² + C·u − e = 0, C = d + (1 − q) − q·e,
// with 1 − q = qc summed from the entries: the textbook root
// (d + q·e^ε − 1 + √…)/(2d) loses every digit when q ≈ 1 − d and ε is
// tiny. C is lowered by a bound on its own rounding first (u decreases
// in C), then u is taken from the form without cancellation.
func thm10(q, d, qc, eps, up float64) float64 {
	return math.Log1p(thm10u(q, d, qc, math.Expm1(eps), up)*up) * up
}

// thm10u is thm10's u (before the factor up and the logarithm), with e =
// e^ε − 1 given; +Inf when there is no positive root.
func thm10u(q, d, qc, e, up float64) float64 {
	C := d + qc - q*e
	C -= (up - 1) * (d + qc + q*e)
	switch {
	case d == 0:
		if C <= 0 {
			return math.Inf(1)
		}
		return e / C
	case C >= 0:
		return 2 * e / (C + math.Sqrt(C*C+4*d*e))
	default:
		return (math.Sqrt(C*C+4*d*e) - C) / (2 * d)
	}
}

// kernel is one step's kernel reduced to its ordered pairs of rows over
// the states of positive probability (nil rows are skipped). It remembers
// the per-pair values at the last two arguments: the recursions of
// docs/math.md §8.3 reach a floating-point fixed point (or 2-cycle) and
// then ask for the same arguments at every step.
type kernel struct {
	st    *stopper // nil: never stops
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
// pair's column order (orders[a*k+b]), else it is sorted here; entryErr
// bounds the rows' entrywise relative error (roundUp); st (nil: never)
// stops it and every later use of the kernel.
func newKernel(rows [][]float64, orders [][]int, entryErr float64, st *stopper) *kernel {
	k := len(rows)
	kn := &kernel{st: st, k: k, idx: make([]int, k*k)}
	up := roundUp(rows, entryErr)
	for i := range kn.idx {
		kn.idx[i] = -1
	}
	for a := range k {
		st.tick(4 * k * k) // k pairs: a sort and a pass over k columns each
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
			kn.pairs = append(kn.pairs, makePair(a, b, ord, rows[a], rows[b], up))
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
		kn.st.tick(8)
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
	e := math.Expm1(eps)
	for i := range kn.pairs {
		kn.st.tick(8 * len(kn.pairs[i].q))
		if v := kn.pairs[i].fixedPointE(eps, e); v > best {
			best = v
		}
	}
	return best
}

// columnOrders is the column order of every pair of rows of the backward
// kernels P^B_t(x, y) ∝ q_{t−1}(y)P(y, x) of any start: the ratio
// P^B_t(a, y)/P^B_t(b, y) is P(y, a)/P(y, b) times a factor that does not
// depend on y, and columns with q_{t−1}(y) = 0 vanish in both rows.
func columnOrders(P [][]float64, st *stopper) [][]int {
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
		st.tick(4 * k * k)
		for b := range k {
			if a != b {
				out[a*k+b] = columnOrder(col[a], col[b])
			}
		}
	}
	return out
}

// reversalErr bounds the entrywise relative error of Reversal(P, π) with π
// from markov's Stationary (the GTH elimination, markov.GTHError): two
// entries of π, then a product and a quotient (docs/math.md §8.9).
func reversalErr(k int) float64 { return 2*markov.GTHError(k) + 4*0x1p-53 }

// givenErr bounds the entrywise relative error of the backward kernel
// BackwardAt at step t from a given start: the marginal q_{t−1} has been
// propagated t − 2 times (each a sum of k non-negative products: (k+1)u
// relative per step), then the entry q_{t−1}(y)P(y,x)/q_t(x).
func givenErr(t, k int) float64 { return float64(2*t*(k+1)+4) * 0x1p-53 }
