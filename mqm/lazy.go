package mqm

import "math"

// Lazy terms of the stationary path (docs/math.md §4.2, lazy terms).
//
// The ratio form (stationary.go) needs, for a two-sided quilt (a, b), the
// maximum over the secret pairs of e^{N+L_a}·e^{R_b}, and for one-sided
// quilts the maximum of one factor. Building the whole term at a distance
// costs k³/2 products (one ratio per pair and outcome), as much as the
// power P^d itself, and most of it is never looked at. A lazy term
// computes a block of pairs only when a maximum needs it, and bounds the
// blocks it has not computed by a separable bound that costs O(k²) for all
// of them (bounds). Every entry a lazy term computes is bit for bit the
// entry the full table would hold (same products, same reciprocals, same
// order), and a block is skipped only when no product in it can exceed
// the maximum so far, so every influence is bit for bit the one of the
// full tables.
//
// A term is lazy only when every entry it can hold is positive and finite
// (lazyOK and a clean power: every entry of P^d at least tiny), so that
// its entries take ratioTable's fast loop and products are never NaN.

// lazyTerm is e^term over the secret pairs at one distance, block by
// block (pairBlock pairs, in exactOracle.pairs order).
type lazyTerm struct {
	d      int
	left   bool        // e^{N+L_d} (else e^{R_d})
	blocks [][]float64 // nil: not computed yet
	ub     []float64   // computed block: its maximum; else an upper bound
	rows   [][]float64 // the vectors compared: rows of P^d (right) or its columns (left), built on demand
	inv    [][]float64 // their reciprocals, on demand
	p      [][]float64 // P^d's rows
}

// lazyOK reports whether the stationary chain's terms may be lazy: every
// state has probability at least tiny and every node ratio lies in
// [2^−100, 2^100], so that with entries of P^d in [tiny, 1] every ratio
// lies in [2^−900, 2^900] and every e^{N+L} in [2^−1000, 2^1000]: positive
// and finite.
func (o *exactOracle) lazyOK() bool {
	if o.lazyState == 0 {
		o.lazyState = 2
		o.stationaryPairs()
		ok := o.k >= 2 && len(o.pairs) == o.k*(o.k-1)
		for _, p := range o.pi {
			ok = ok && p >= tiny
		}
		for _, r := range o.nr {
			ok = ok && r >= 0x1p-100 && r <= 0x1p100
		}
		if ok {
			o.lazyState = 1
		}
	}
	return o.lazyState == 1
}

// cleanPower reports whether every entry of P^d is at least tiny (cached).
func (o *exactOracle) cleanPower(d int) bool {
	for len(o.clean) <= d {
		o.clean = append(o.clean, 0)
	}
	if o.clean[d] == 0 {
		o.clean[d] = 1
		for _, row := range o.pw.at(d).v {
			for _, x := range row {
				if !(x >= tiny) {
					o.clean[d] = 2
					break
				}
			}
		}
	}
	return o.clean[d] == 1
}

// lazyAt returns the lazy term at distance d (left or right), creating it
// with its block bounds. Only for lazyOK chains and clean powers.
func (o *exactOracle) lazyAt(d int, left bool) *lazyTerm {
	cache := &o.lzR
	if left {
		cache = &o.lzL
	}
	for len(*cache) <= d {
		*cache = append(*cache, nil)
	}
	if t := (*cache)[d]; t != nil {
		return t
	}
	n := len(o.pairs)
	nb := (n + pairBlock - 1) / pairBlock
	t := &lazyTerm{d: d, left: left, blocks: make([][]float64, nb), ub: make([]float64, nb),
		rows: make([][]float64, o.k), inv: make([][]float64, o.k), p: o.pw.at(d).v}
	o.bounds(t)
	if !left {
		// the right term's maximum is known in O(k²) and bounds every block
		m := o.rightMax(d)
		for i := range t.ub {
			t.ub[i] = min(t.ub[i], m)
		}
	}
	(*cache)[d] = t
	return t
}

// boundSlack covers the roundings between a computed entry and the
// computed separable bound on it (at most ten, relative 2^−53 each;
// docs/math.md §4.2, lazy terms).
const boundSlack = 1 + 0x1p-48

// bounds sets t's block bounds from the separable bound of docs/math.md
// §4.2 (lazy terms): for positive vectors f, g and weights w > 0, max_v f_v/g_v ≤
// max_v f_v·w_v · max_v 1/(g_v·w_v). Right term (rows of P^d, w = 1/π
// over outcomes v): R_d(x,y) ≤ A_x·B_y. Left term (columns of P^d, w_u = 1
// over origins u, times the node ratio π(y)/π(x)): e^{N+L_d}(x,y) ≤
// (max_u P^d(u,x)/π(x))·(max_u π(y)/P^d(u,y)). O(k²) for every block.
func (o *exactOracle) bounds(t *lazyTerm) {
	k := o.k
	A, B := make([]float64, k), make([]float64, k)
	if !t.left {
		w := make([]float64, k)
		for v, p := range o.pi {
			w[v] = 1 / p
		}
		for x, row := range t.p {
			a, b := 0.0, 0.0
			for v, p := range row {
				a = max(a, p*w[v])
				b = max(b, 1/(p*w[v]))
			}
			A[x], B[x] = a, b
		}
	} else {
		w := make([]float64, k)
		for x, p := range o.pi {
			w[x] = 1 / p
		}
		for _, row := range t.p {
			for x, p := range row {
				A[x] = max(A[x], p*w[x])
				B[x] = max(B[x], 1/(p*w[x]))
			}
		}
	}
	for i := range t.ub {
		m := 0.0
		for _, p := range o.pairs[i*pairBlock : min(len(o.pairs), (i+1)*pairBlock)] {
			m = max(m, A[int(p)/k]*B[int(p)%k])
		}
		t.ub[i] = m * boundSlack
	}
}

// vec returns the x-th compared vector: row x of P^d (right) or column x
// (left; the stationary support is every state).
func (t *lazyTerm) vec(x int) []float64 {
	if t.rows[x] == nil {
		if !t.left {
			t.rows[x] = t.p[x]
		} else {
			c := make([]float64, len(t.p))
			for u, row := range t.p {
				c[u] = row[x]
			}
			t.rows[x] = c
		}
	}
	return t.rows[x]
}

// recip returns the reciprocals of vec(y), as ratioTable computes them.
func (t *lazyTerm) recip(y int) []float64 {
	if t.inv[y] == nil {
		v := t.vec(y)
		iv := make([]float64, len(v))
		for j, q := range v {
			iv[j] = 1 / q
		}
		t.inv[y] = iv
	}
	return t.inv[y]
}

// block returns block i of t, computing it when needed: the entries
// ratioTable's fast loop gives (x < y: max_v a_x[v]/a_y[v] as products
// with reciprocals; x > y: 1 over the minimum of the reverse products),
// times the node ratio for the left term, as pairTermAt does.
func (o *exactOracle) block(t *lazyTerm, i int) []float64 {
	if b := t.blocks[i]; b != nil {
		return b
	}
	lo, hi := i*pairBlock, min(len(o.pairs), (i+1)*pairBlock)
	b := make([]float64, hi-lo)
	k := o.k
	m := 0.0
	for j := lo; j < hi; j++ {
		x, y := int(o.pairs[j])/k, int(o.pairs[j])%k
		var v float64
		if x < y {
			_, v = minMaxProduct(t.vec(x), t.recip(y))
		} else {
			l, _ := minMaxProduct(t.vec(y), t.recip(x))
			v = 1 / l
		}
		if t.left {
			v *= o.nr[j]
		}
		b[j-lo] = v
		m = max(m, v)
	}
	t.blocks[i], t.ub[i] = b, m
	return b
}

// lazyMax returns the maximum of t over the secret pairs (the entry the
// full term's maximum would be), visiting blocks best bound first and
// stopping when no bound left exceeds the maximum so far.
func (o *exactOracle) lazyMax(t *lazyTerm) float64 {
	bnd := grow(o.suf1, len(t.ub))
	copy(bnd, t.ub)
	o.suf1 = bnd
	best := 0.0
	for {
		i, m := argMax(bnd)
		if m <= best {
			return best
		}
		best = max(best, maxOf(o.block(t, i)))
		bnd[i] = 0
	}
}

// lazyMax2 returns max over the secret pairs of t1·t2 (each product
// rounded once), as maxProductPruned does on full terms, visiting blocks
// by the product of upper bounds on their factors, largest first, and
// stopping when it does not exceed the maximum so far (rounding is
// monotone, so no product in an unvisited block does).
func (o *exactOracle) lazyMax2(t1, t2 *lazyTerm) float64 {
	bnd := grow(o.suf1, len(t1.ub))
	for i := range bnd {
		bnd[i] = t1.ub[i] * t2.ub[i]
	}
	o.suf1 = bnd
	best := 0.0
	for {
		i, m := argMax(bnd)
		if m <= best {
			return best
		}
		best = max(best, maxProduct(o.block(t1, i), o.block(t2, i)))
		bnd[i] = 0
	}
}

// argMax returns the first index of the largest entry of v (non-negative,
// len ≥ 1) and that entry.
func argMax(v []float64) (int, float64) {
	j, m := 0, v[0]
	for i, x := range v {
		if x > m {
			j, m = i, x
		}
	}
	return j, m
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// rightMax returns the maximum over the ordered pairs x ≠ y of the right
// table entry at distance d (ratioTable's fast loop on the rows of a clean
// P^d) in O(k²) instead of O(k³): for x < y the entries are products
// P^d(x,v)·(1/P^d(y,v)), whose maximum over x < y and v is, rounding being
// monotone in each factor, the product of the running maximum of column v
// over the rows above y with y's reciprocal; for x > y they are 1/min_v
// P^d(y,v)·(1/P^d(x,v)), whose maximum is 1 over the least such product,
// found the same way with a running minimum. Bit for bit the maximum of
// the full table.
func (o *exactOracle) rightMax(d int) float64 {
	for len(o.rmax) <= d {
		o.rmax = append(o.rmax, 0)
	}
	if o.rmax[d] > 0 {
		return o.rmax[d]
	}
	P, k := o.pw.at(d).v, o.k
	sc := &o.scratch
	sc.flat = grow(sc.flat, 2*k)
	hiCol, loCol := sc.flat[:k], sc.flat[k:2*k]
	hi, lo := 0.0, math.Inf(1)
	for y, row := range P {
		for v, q := range row {
			iq := 1 / q
			if y > 0 {
				hi = max(hi, hiCol[v]*iq)
				lo = min(lo, loCol[v]*iq)
				hiCol[v], loCol[v] = max(hiCol[v], q), min(loCol[v], q)
			} else {
				hiCol[v], loCol[v] = q, q
			}
		}
	}
	m := max(hi, 1/lo)
	o.rmax[d] = m
	return m
}
