package mqm

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// The stationary path in ratio form (docs/math.md §4.2): ratio tables with
// branch-free kernels, and the influences of a stationary chain as one
// logarithm of a maximum of products over the secret pairs.

// ratioTable returns t[x*k+y] = max_v rows[x][v]/rows[y][v], the exact
// ratio up to a few roundings (0 when no v is possible under either row or
// every possible v is impossible under x; +Inf when some v is possible
// under x only), pats giving the exact zero pattern. Entries ≥ tiny are
// positive and precise (powers.go), so a pair of rows with every entry ≥
// tiny takes the fast loop: products with the reciprocals of row y, whose
// minimum also gives t[y*k+x] = 1/min_v rows[x][v]/rows[y][v] — at most
// three roundings (relative 3·2^−53) per ratio where a quotient has one,
// which the allowance's (k+1) factor covers many times over. Any other pair folds each ratio through
// ratioBound.
func (sc *scratch) ratioTable(rows [][]float64, pats [][]bool) []float64 {
	k := len(rows)
	t := make([]float64, k*k)
	sc.inv = grow(sc.inv, k) // nil rows unless every entry is ≥ tiny
	inv := sc.inv
	sc.invs = grow(sc.invs, k*len(rows[0]))
	for y, row := range rows {
		iv := sc.invs[y*len(row) : (y+1)*len(row)]
		for v, q := range row {
			if !(q >= tiny) {
				iv = nil
				break
			}
			iv[v] = 1 / q
		}
		inv[y] = iv
	}
	for x, ax := range rows {
		if sc.stop != nil {
			sc.stop.check()
		}
		clean := inv[x] != nil && len(ax) > 0
		for y, ay := range rows {
			if clean && inv[y] != nil {
				if y < x {
					continue // filled with (y, x)
				}
				// one pass gives both directions: max_v q/p = 1/min_v p/q
				lo, hi := minMaxProduct(ax, inv[y])
				t[x*k+y], t[y*k+x] = hi, 1/lo
				continue
			}
			m, seen := 0.0, false
			for v, p := range ax {
				if q := ay[v]; p >= tiny && q >= tiny {
					if r := p / q; !seen || r > m {
						m, seen = r, true
					}
				} else {
					m, seen = ratioBound(m, seen, p, q, pats[x][v], pats[y][v])
				}
			}
			t[x*k+y] = m // 0 when !seen: log gives −Inf, as logOf
		}
	}
	return t
}

// maxProduct returns max_v a[v]·b[v] for non-negative finite products
// (len(a) ≥ 1, len(b) ≥ len(a)). Non-negative float64s order as their bit
// patterns do, so the maximum is an integer maximum, which compiles to
// conditional moves: four independent maxima, no mispredicted branches
// (5× faster than a compare-and-branch loop on 51-state tables).
//
// With AVX2 the products are formed four at a time (maxProd4): the same
// products (one rounding each), and a maximum is exact in any order.
func maxProduct(a, b []float64) float64 {
	b = b[:len(a)]
	if n4 := len(a) &^ 3; haveKernel && n4 > 0 {
		m := maxProd4(&a[0], &b[0], n4)
		for v := n4; v < len(a); v++ {
			if r := a[v] * b[v]; r > m {
				m = r
			}
		}
		return m
	}
	m0 := math.Float64bits(a[0] * b[0])
	m1, m2, m3 := m0, m0, m0
	v := 0
	for ; v+4 <= len(a); v += 4 {
		x, y := a[v:v+4:v+4], b[v:v+4:v+4]
		if r := math.Float64bits(x[0] * y[0]); r > m0 {
			m0 = r
		}
		if r := math.Float64bits(x[1] * y[1]); r > m1 {
			m1 = r
		}
		if r := math.Float64bits(x[2] * y[2]); r > m2 {
			m2 = r
		}
		if r := math.Float64bits(x[3] * y[3]); r > m3 {
			m3 = r
		}
	}
	for ; v < len(a); v++ {
		if r := math.Float64bits(a[v] * b[v]); r > m0 {
			m0 = r
		}
	}
	return math.Float64frombits(max(m0, m1, m2, m3))
}

// minMaxProduct returns min_v and max_v of a[v]·b[v] for positive finite
// products (len(a) ≥ 1, len(b) ≥ len(a)), as maxProduct does.
func minMaxProduct(a, b []float64) (float64, float64) {
	b = b[:len(a)]
	if n4 := len(a) &^ 3; haveKernel && n4 > 0 {
		lo, hi := minMaxProd4(&a[0], &b[0], n4)
		for v := n4; v < len(a); v++ {
			r := a[v] * b[v]
			if r < lo {
				lo = r
			}
			if r > hi {
				hi = r
			}
		}
		return lo, hi
	}
	l0 := math.Float64bits(a[0] * b[0])
	l1, l2, l3, h0, h1, h2, h3 := l0, l0, l0, l0, l0, l0, l0
	v := 0
	for ; v+4 <= len(a); v += 4 {
		x, y := a[v:v+4:v+4], b[v:v+4:v+4]
		r0, r1 := math.Float64bits(x[0]*y[0]), math.Float64bits(x[1]*y[1])
		r2, r3 := math.Float64bits(x[2]*y[2]), math.Float64bits(x[3]*y[3])
		if r0 > h0 {
			h0 = r0
		}
		if r0 < l0 {
			l0 = r0
		}
		if r1 > h1 {
			h1 = r1
		}
		if r1 < l1 {
			l1 = r1
		}
		if r2 > h2 {
			h2 = r2
		}
		if r2 < l2 {
			l2 = r2
		}
		if r3 > h3 {
			h3 = r3
		}
		if r3 < l3 {
			l3 = r3
		}
	}
	for ; v < len(a); v++ {
		r := math.Float64bits(a[v] * b[v])
		if r > h0 {
			h0 = r
		}
		if r < l0 {
			l0 = r
		}
	}
	return math.Float64frombits(min(l0, l1, l2, l3)), math.Float64frombits(max(h0, h1, h2, h3))
}

// pairTerm is a term in ratio form (e^term) tabulated over the secret
// pairs only (x·k+x' in exactOracle.pairs order), with its first
// maximiser. plain: every entry is finite and positive, so products of
// plain terms are never NaN; nan: some entry is NaN (∞·0, never produced
// by valid chains).
type pairTerm struct {
	v          []float64
	arg        int
	plain, nan bool
	// blk[i] = max v[j] over j ≥ i·pairBlock (plain terms only)
	blk []float64
}

func newPairTerm(v []float64) pairTerm {
	t := pairTerm{v: v, plain: true}
	for j, x := range v {
		if x > v[t.arg] {
			t.arg = j
		}
		if !(x > 0) || math.IsInf(x, 1) {
			t.plain = false
		}
		t.nan = t.nan || x != x
	}
	if t.plain {
		n := (len(v) + pairBlock - 1) / pairBlock
		t.blk = make([]float64, n)
		m := 0.0
		for i := n - 1; i >= 0; i-- {
			for _, x := range v[i*pairBlock : min(len(v), (i+1)*pairBlock)] {
				m = max(m, x)
			}
			t.blk[i] = m
		}
	}
	return t
}

// pairBlock is the granularity of the suffix maxima (pairTerm.blk).
const pairBlock = 64

// maxProductPruned is maxProduct(t1.v, t2.v) for plain terms, block by
// block in the pairs' order, stopping once the product of the two suffix
// maxima cannot beat the maximum so far: each remaining product is at
// most that bound (rounding is monotone), so the result is the same.
func maxProductPruned(t1, t2 pairTerm) float64 {
	best := 0.0
	for i := range t1.blk {
		if t1.blk[i]*t2.blk[i] <= best {
			break
		}
		lo, hi := i*pairBlock, min(len(t1.v), (i+1)*pairBlock)
		best = max(best, maxProduct(t1.v[lo:hi], t2.v[lo:hi]))
	}
	return best
}

// stationaryLeft and stationaryRight return, for a stationary chain,
// e^{N+L_a} and e^{R_b} over the secret pairs, cached.
func (o *exactOracle) stationaryLeft(a int) pairTerm {
	o.stationaryPairs()
	return o.pairTermAt(&o.nl, a, o.nr, func() []float64 { return o.leftRatio(a, o.suppID(1)) })
}

func (o *exactOracle) stationaryRight(b int) pairTerm {
	o.stationaryPairs()
	return o.pairTermAt(&o.rp, b, nil, func() []float64 { return o.rightRatio(b) })
}

// pairTermAt returns (*cache)[d], building it when not cached yet from the
// table's entries at the secret pairs, times scale (when not nil).
func (o *exactOracle) pairTermAt(cache *[]pairTerm, d int, scale []float64, table func() []float64) pairTerm {
	for len(*cache) <= d {
		*cache = append(*cache, pairTerm{})
	}
	if (*cache)[d].v == nil {
		t := table()
		v := make([]float64, len(o.pairs))
		for j, p := range o.pairs {
			v[j] = t[p]
			if scale != nil {
				v[j] *= scale[j]
			}
		}
		(*cache)[d] = newPairTerm(v)
	}
	return (*cache)[d]
}

// stationaryPairs lists the secret pairs of a stationary chain and their
// node ratios π(x')/π(x) (as nodeTerm bounds them).
func (o *exactOracle) stationaryPairs() {
	if o.nr != nil {
		return
	}
	o.nr = []float64{}
	k, supp := o.k, o.supps[o.suppID(1)]
	for x := range k {
		for y := range k {
			if x == y || !supp[x] || !supp[y] {
				continue // not a secret pair (as nodeTerm marks them)
			}
			m, _ := ratioBound(0, false, o.pi[y], o.pi[x], true, true)
			o.pairs = append(o.pairs, int32(x*k+y))
			o.nr = append(o.nr, m)
		}
	}
	// Order the pairs by their two-sided ratio at distance (1, 1), largest
	// first: the pairs that dominate at one distance tend to dominate at
	// the others, so maxProductPruned stops after the first blocks.
	L, R := o.leftRatio(1, o.suppID(1)), o.rightRatio(1)
	key := func(j int) float64 {
		v := o.nr[j] * L[o.pairs[j]] * R[o.pairs[j]]
		if v != v {
			return -1
		}
		return v
	}
	idx := make([]int, len(o.pairs))
	keys := make([]float64, len(o.pairs))
	for j := range idx {
		idx[j], keys[j] = j, key(j)
	}
	// largest key first, ties in the listed order: the order a stable
	// sort gives, with an unstable (faster) sort on a total order
	slices.SortFunc(idx, func(i, j int) int {
		if c := cmp.Compare(keys[j], keys[i]); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	pairs, nr := make([]int32, len(idx)), make([]float64, len(idx))
	for j, i := range idx {
		pairs[j], nr[j] = o.pairs[i], o.nr[i]
	}
	o.pairs, o.nr = pairs, nr
	o.setPairXY()
}

// stationary is eval for a stationary chain (the influence does not depend
// on the node) in ratio form: e = log max over the secret pairs of
// e^N·e^{L_a}·e^{R_b} (the open sides' factors dropped), one logarithm per
// influence instead of one per table entry. Each product rounds once
// (relative 2^−53), far inside the allowance. When one pair maximises both
// factors (common: the most extreme pair of states is extreme on both
// sides) its product is the maximum — rounding is monotone — and no loop
// runs; otherwise one branch-free loop. Entries that are 0 or +Inf, or a
// product that overflows, take the log-domain loop, which reports ∞·0
// (NaN, never produced by valid chains) as eval does.
func (o *exactOracle) stationary(a, b int, leftOpen, rightOpen bool) float64 {
	o.stationaryPairs()
	if len(o.pairs) == 0 {
		return o.allowance(a, b) // k = 1: no secret pair, influence 0
	}
	if o.lazyOK() {
		if m, ok := o.stationaryLazy(a, b, leftOpen, rightOpen); ok {
			if leftOpen {
				a = 0
			}
			if rightOpen {
				b = 0
			}
			return max(math.Log(m), 0) + o.allowance(a, b)
		}
	}
	var t1, t2 pairTerm
	switch {
	case leftOpen:
		t1, a = o.stationaryRight(b), 0
	case rightOpen:
		t1, b = o.stationaryLeft(a), 0
	default:
		t1, t2 = o.stationaryLeft(a), o.stationaryRight(b)
	}
	m := math.NaN()
	switch {
	case t2.v == nil && !t1.nan:
		m = t1.v[t1.arg] // a maximum of ratios: log is monotone
	case t2.v == nil:
	case !t1.plain || !t2.plain:
	case t2.v[t1.arg] == t2.v[t2.arg]:
		m = t1.v[t1.arg] * t2.v[t1.arg]
	case t1.v[t2.arg] == t1.v[t1.arg]:
		m = t1.v[t2.arg] * t2.v[t2.arg]
	default:
		m = maxProductPruned(t1, t2)
	}
	var e float64
	if m == m && !math.IsInf(m, 1) {
		e = math.Log(m)
	} else {
		// log domain, pair by pair
		e = 0
		for j, p := range o.pairs {
			v := math.Log(t1.v[j])
			if t2.v != nil {
				v += math.Log(t2.v[j])
			}
			if v != v {
				k := o.k
				o.nan = fmt.Errorf("influence of the quilt (%d, %d) is undefined (NaN) for states %q, %q", a, b, o.ch.States[int(p)/k], o.ch.States[int(p)%k])
				return math.Inf(1)
			}
			e = max(e, v)
		}
	}
	e = max(e, 0) // influence is never negative
	if !math.IsInf(e, 1) {
		e += o.allowance(a, b)
	}
	return e
}

// stationaryLazy is the maximum of stationary's ratio form from lazy terms
// (lazy.go), bit for bit the one of the full terms; false when a power
// involved is not clean or the maximum is not finite (then the full terms
// decide, as before).
func (o *exactOracle) stationaryLazy(a, b int, leftOpen, rightOpen bool) (float64, bool) {
	var m float64
	switch {
	case leftOpen:
		if !o.cleanPower(b) {
			return 0, false
		}
		m = o.rightMax(b)
	case rightOpen:
		if !o.cleanPower(a) {
			return 0, false
		}
		m = o.lazyMax(o.lazyAt(a, termLeftNode))
	default:
		if !o.cleanPower(a) || !o.cleanPower(b) {
			return 0, false
		}
		m = o.lazyMax2(o.lazyAt(a, termLeftNode), o.lazyAt(b, termRight))
	}
	return m, m > 0 && !math.IsInf(m, 1)
}
