package mqm

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

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
// For "any" chains (anyLazy) the node term is the left term at distance
// i−1 with the pair reversed; the node and left terms are computed whole
// (their bounds are loose far from rank one) and multiplied once per (i,
// a) (nodeLeft); the right term is lazy. Those influences are the log
// tables' to rounding (one logarithm of a product instead of a sum of
// three logarithms).
//
// A term is lazy only when every entry it can hold is positive and finite
// (lazyOK and a clean power: every entry of P^d at least tiny), so that
// its entries take ratioTable's fast loop and products are never NaN.

// lazyTerm is e^term over the secret pairs at one distance, block by
// block (pairBlock pairs, in exactOracle.pairs order).
type lazyTerm struct {
	d      int
	kind   termKind
	blocks [][]float64 // nil: not computed yet
	ub     []float64   // computed block: its maximum; else an upper bound
	p      [][]float64 // P^d's rows
	node   int         // nodeLeft: the node
}

// termKind says which term a lazyTerm holds at pair (x, y).
type termKind uint8

const (
	termRight    termKind = iota // e^{R_d}(x,y) = max_v P^d(x,v)/P^d(y,v)
	termLeftNode                 // π(y)/π(x)·e^{L_d}(x,y) (stationary)
	termLeft                     // e^{L_d}(x,y) = max_u P^d(u,x)/P^d(u,y) ("any")
	termNodeAny                  // e^{N_{d+1}}(x,y) = e^{L_d}(y,x) ("any")
)

func (k termKind) cols() bool { return k != termRight }

// lazyMinK is the least number of states for which lazy terms are used:
// below it the full tables cost little and setting up the lazy ones
// (pair order, bounds, for "any" a stationary distribution) costs more
// (the 6,561 binary chains of the interval class: 0.19 → 0.37 s). A
// variable so tests can use lazy terms on small chains.
var lazyMinK = 12

// lazyOK reports whether the stationary chain's terms may be lazy: every
// state has probability at least tiny and every node ratio lies in
// [2^−100, 2^100], so that with entries of P^d in [tiny, 1] every ratio
// lies in [2^−900, 2^900] and every e^{N+L} in [2^−1000, 2^1000]: positive
// and finite.
func (o *exactOracle) lazyOK() bool {
	if o.lazyState == 0 {
		o.lazyState = 2
		o.stationaryPairs()
		ok := o.k >= lazyMinK && len(o.pairs) == o.k*(o.k-1)
		for _, p := range o.pi {
			ok = ok && p >= tiny
		}
		for _, r := range o.nr {
			ok = ok && r >= 0x1p-100 && r <= 0x1p100
		}
		if ok {
			o.lazyState = 1
			o.w = make([]float64, o.k)
			for v, p := range o.pi {
				o.w[v] = 1 / p
			}
			o.startPre()
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
		var c bool
		if s := o.preAt(d, partA); s != nil {
			c = s.clean
		} else {
			c = isClean(o.pw.at(d), o.k)
		}
		o.clean[d] = 2
		if c {
			o.clean[d] = 1
		}
	}
	return o.clean[d] == 1
}

// isClean reports whether every entry of the k×k power is at least tiny.
func isClean(pw power, k int) bool {
	if p := pw.d.RawMatrix(); haveKernel && p.Stride == k && len(p.Data) >= 4 {
		// the least entry, NaN if any is NaN (four at a time)
		n4 := len(p.Data) &^ 3
		if m := minOf4(&p.Data[0], n4); !(m >= tiny) {
			return false
		}
		for _, x := range p.Data[n4:] {
			if !(x >= tiny) {
				return false
			}
		}
		return true
	}
	for _, row := range pw.v {
		for _, x := range row {
			if !(x >= tiny) {
				return false
			}
		}
	}
	return true
}

// lazyAt returns the lazy term of a kind at distance d, creating it with
// its block bounds. Only for lazy chains and clean powers.
func (o *exactOracle) lazyAt(d int, kind termKind) *lazyTerm {
	cache := &o.lz[kind]
	for len(*cache) <= d {
		*cache = append(*cache, nil)
	}
	if t := (*cache)[d]; t != nil {
		return t
	}
	n := len(o.pairs)
	nb := (n + pairBlock - 1) / pairBlock
	t := &lazyTerm{d: d, kind: kind, blocks: make([][]float64, nb), ub: make([]float64, nb),
		p: o.pw.at(d).v}
	if kind == termNodeAny || kind == termLeft {
		// "any": far from rank one the separable bounds of the node and
		// left terms are loose, and every quilt of a node shares them
		// (nodeLeft): compute them whole, the left term from the left
		// table (ratioTable: both directions of a pair in one pass;
		// entries identical to block's), the node term from the left
		// term at the same distance with each pair reversed
		var src []float64
		if kind == termLeft {
			src = o.leftTable(d, 0)
		} else {
			src = o.lazyAt(d, termLeft).blocks[0][:n:n]
		}
		flat := make([]float64, n)
		k := int32(o.k)
		for j, p := range o.pairs {
			if kind == termLeft {
				flat[j] = src[p]
			} else {
				flat[j] = src[o.pos[p%k*k+p/k]]
			}
		}
		for i := range t.ub {
			b := flat[i*pairBlock : min(n, (i+1)*pairBlock)]
			t.blocks[i], t.ub[i] = b, maxOf(b)
		}
	} else if s := o.preAt(d, partB); s != nil && s.ub[termRight] != nil {
		// computed by the powers' producer (the same code on the same
		// power: the same floats)
		t.ub = s.ub[kind]
	} else {
		o.bounds(t)
	}
	if kind == termRight {
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
// §4.2 (lazy terms): for positive vectors f, g and weights w > 0,
// max_v f_v/g_v ≤ max_v f_v·w_v · max_v 1/(g_v·w_v). Right term (rows of
// P^d, w = 1/π over outcomes v): R_d(x,y) ≤ A_x·B_y. Left terms (columns
// of P^d, w = 1 over origins u): e^{L_d}(x,y) ≤ A_x·B_y, times the node
// ratio π(y)/π(x) (stationary), or with x and y exchanged (the "any" node
// term). O(k²) for every block.
func (o *exactOracle) bounds(t *lazyTerm) {
	boundsOf(t.ub, t.p, t.kind, o.k, o.w, o.px, o.py, o.nr)
}

// boundsOf is bounds for the rows p of a clean power, weights w, the
// pairs' states px, py and node ratios nr: it reads nothing else, so the
// powers' producer can run it (pre).
func boundsOf(ub []float64, p [][]float64, kind termKind, k int, w []float64, px, py []int32, nr []float64) {
	A, B := make([]float64, k), make([]float64, k)
	// max_v 1/g_v is computed as 1/min_v g_v: the reciprocal's rounding
	// is monotone, so it is the same float with one division per state.
	// Entries are positive and finite (a clean power), so the vector
	// minima and maxima are exact.
	if !kind.cols() {
		for x, row := range p {
			g, a := minMaxProduct(row[:k], w[:k])
			A[x], B[x] = a, 1/g
		}
	} else {
		copy(A, p[0])
		copy(B, p[0])
		minMaxRows(p[1:], A, B)
		for x, g := range B {
			B[x] = 1 / g
		}
	}
	if kind == termNodeAny {
		A, B = B, A // bound(x,y) = A_y·B_x = B'_x·A'_y
	}
	// the bounds are positive and finite: their maximum as integers
	// (conditional moves instead of mispredicted branches)
	for i := range ub {
		var m uint64
		lo, hi := i*pairBlock, min(len(px), (i+1)*pairBlock)
		if kind == termLeftNode {
			nr := nr[lo:hi]
			for j := range nr {
				m = max(m, math.Float64bits(A[px[lo+j]]*B[py[lo+j]]*nr[j]))
			}
		} else {
			for j := lo; j < hi; j++ {
				m = max(m, math.Float64bits(A[px[j]]*B[py[j]]))
			}
		}
		ub[i] = math.Float64frombits(m) * boundSlack
	}
}

// setPairXY lists the states of each secret pair (pairs[j] = px[j]·k +
// py[j]) once the pairs are in their final order: an integer division per
// pair and bound was most of bounds' time.
func (o *exactOracle) setPairXY() {
	k := int32(o.k)
	o.px, o.py = make([]int32, len(o.pairs)), make([]int32, len(o.pairs))
	for j, p := range o.pairs {
		o.px[j], o.py[j] = p/k, p%k
	}
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
	// num[x] and inv[y] hold the factors of ratioTable's products: rows
	// of P^d and of 1/P^d for the right term, their columns for the left
	// terms (recip: one reciprocal per entry, computed once per distance)
	e := o.recip(t.d, t.kind.cols())
	num, inv := o.recipNum(e), e.inv
	for j := lo; j < hi; j++ {
		x, y := int(o.px[j]), int(o.py[j])
		if t.kind == termNodeAny {
			x, y = y, x
		}
		if e.cols {
			o.recipCol(e, x)
			o.recipCol(e, y)
		} else {
			o.recipRow(e, max(x, y)) // the denominator's row
		}
		var v float64
		if x < y {
			v = maxProduct(num[x*k:(x+1)*k], inv[y*k:(y+1)*k])
		} else {
			v = 1 / minProduct(num[y*k:(y+1)*k], inv[x*k:(x+1)*k])
		}
		if t.kind == termLeftNode {
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
	return o.visit(bnd, func(i int) float64 { return maxOf(o.block(t, i)) })
}

// lazyMax2 returns max over the secret pairs of t1·t2 (each product
// rounded once), as maxProductPruned does on full terms, visiting blocks
// by the product of upper bounds on their factors, largest first, and
// stopping when it does not exceed the maximum so far (rounding is
// monotone, so no product in an unvisited block does).
func (o *exactOracle) lazyMax2(t1, t2 *lazyTerm) float64 {
	bnd := grow(o.suf1, len(t1.ub))
	o.suf1 = bnd
	// the same products, four at a time, and their maximum in one pass
	m := mulMax(t1.ub, t2.ub, bnd)
	return o.visitFrom(bnd, m, func(i int) float64 { return maxProduct(o.block(t1, i), o.block(t2, i)) })
}

// visit returns the maximum of blockMax(i) over the blocks, given bnd[i]
// ≥ blockMax(i) ≥ 0: the block of the largest bound first, then, largest
// bound first, the blocks whose bound exceeds the maximum so far, until
// one does not (no later one does). Every block skipped has its bound,
// hence all of its values, at most the maximum, so the result is the
// maximum over all blocks whatever the order (maxima are exact;
// docs/math.md §4.2, arithmetic that changes no bit (iii)).
func (o *exactOracle) visit(bnd []float64, blockMax func(int) float64) float64 {
	_, m := argMax(bnd)
	return o.visitFrom(bnd, m, blockMax)
}

// visitFrom is visit given m, the largest bound (bounds are not NaN, so
// the first block of bound m is argMax's).
func (o *exactOracle) visitFrom(bnd []float64, m float64, blockMax func(int) float64) float64 {
	if m <= 0 {
		return 0
	}
	i := slices.Index(bnd, m)
	best := blockMax(i)
	bnd[i] = 0
	cand := o.cand[:0]
	for j, b := range bnd {
		if b > best {
			cand = append(cand, int32(j))
		}
	}
	slices.SortFunc(cand, func(p, q int32) int { return cmp.Compare(bnd[q], bnd[p]) })
	for _, j := range cand {
		if bnd[j] <= best {
			break
		}
		best = max(best, blockMax(int(j)))
	}
	o.cand = cand
	return best
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
	if s := o.preAt(d, partA); s != nil && s.clean {
		o.rmax[d] = s.rmax
		return s.rmax
	}
	sc := &o.scratch
	sc.flat = grow(sc.flat, 2*o.k)
	m := rightMaxOf(o.pw.at(d).v, o.recipAll(o.recip(d, false)).inv, o.k, sc.flat)
	o.rmax[d] = m
	return m
}

// rightMaxOf is rightMax for the rows P of a clean power and their
// reciprocals inv (row-major), with a buffer of 2k floats.
func rightMaxOf(P [][]float64, inv []float64, k int, buf []float64) float64 {
	hiCol, loCol := buf[:k], buf[k:2*k]
	copy(hiCol, P[0])
	copy(loCol, P[0])
	hi, lo := 0.0, math.Inf(1)
	// entries positive and finite: the vector maxima and minima are exact
	// (docs/math.md §4.2, arithmetic that changes no bit (iii)); row y's
	// products use the column extremes of the rows above it
	for y := 1; y < k; y++ {
		iy := inv[y*k : (y+1)*k]
		hi = max(hi, maxProduct(hiCol, iy))
		lo = min(lo, minProduct(loCol, iy))
		minMaxRows(P[y:y+1], hiCol, loCol)
	}
	return max(hi, 1/lo)
}

// anyLazyOK reports whether an "any" chain's influences may come from lazy
// terms: every state possible at every time (one support, all states),
// and a stationary distribution with every state at least tiny for the
// right terms' bound weights. It lists the pairs, ordered as the
// stationary path orders them (by their ratio at distances (1, 1)).
func (o *exactOracle) anyLazyOK() bool {
	if o.lazyState == 0 {
		o.lazyState = 2
		ok := o.ch.Init == markov.InitAny && o.k >= lazyMinK && len(o.supps) == 1
		for _, in := range o.supps[0] {
			ok = ok && in
		}
		var pi []float64
		if ok {
			var err error
			pi, err = o.ch.Stationary()
			ok = err == nil
		}
		for _, p := range pi {
			ok = ok && p >= tiny
		}
		if !ok {
			return false
		}
		o.w = make([]float64, o.k)
		for v, p := range pi {
			o.w[v] = 1 / p
		}
		k := o.k
		L, R := o.leftRatio(1, 0), o.rightRatio(1)
		key := func(p int32) float64 {
			v := L[p] * R[p]
			if v != v {
				return -1
			}
			return v
		}
		for x := range k {
			for y := range k {
				if x != y {
					o.pairs = append(o.pairs, int32(x*k+y))
				}
			}
		}
		// largest key first, ties in the listed order (increasing x·k+y):
		// a stable sort's order, with an unstable sort on a total order
		keys := make([]float64, k*k)
		for _, p := range o.pairs {
			keys[p] = key(p)
		}
		slices.SortFunc(o.pairs, func(p, q int32) int {
			if c := cmp.Compare(keys[q], keys[p]); c != 0 {
				return c
			}
			return cmp.Compare(p, q)
		})
		o.pos = make([]int32, k*k)
		for j, p := range o.pairs {
			o.pos[p] = int32(j)
		}
		o.setPairXY()
		o.lazyState = 1
	}
	return o.lazyState == 1
}

// anyLazy is the maximum over the pairs of e^{N_i}·e^{L_a}·e^{R_b} (the
// open sides' factors dropped; a right-only quilt has no node term) for an
// "any" chain, from lazy terms: the node term at time i is the left term
// at distance i−1 with the pair reversed. False when a power involved is
// not clean or the maximum is not finite (then the log tables decide).
func (o *exactOracle) anyLazy(i, a, b int, leftOpen, rightOpen bool) (float64, bool) {
	var m float64
	if leftOpen {
		if !o.cleanPower(b) {
			return 0, false
		}
		m = o.rightMax(b)
	} else {
		if i < 2 || !o.cleanPower(i-1) || !o.cleanPower(a) || !rightOpen && !o.cleanPower(b) {
			return 0, false
		}
		var tr *lazyTerm
		if !rightOpen {
			tr = o.lazyAt(b, termRight)
		}
		nl := o.nodeLeft(i, a)
		if tr == nil {
			m = maxOf(nl.ub)
		} else {
			m = o.lazyMax2(nl, tr)
		}
	}
	return m, m > 0 && !math.IsInf(m, 1)
}

// nodeLeft returns e^{N_i}·e^{L_a} over the pairs (each product rounded
// once), whole, with exact block maxima: every two-sided quilt of node i
// with left distance a shares it, and the separable bounds of the two
// factors are loose far from rank one (docs/math.md §4.2, lazy terms).
func (o *exactOracle) nodeLeft(i, a int) *lazyTerm {
	for _, t := range o.nlAny {
		if t.d == a && t.node == i {
			return t
		}
	}
	tn, tl := o.lazyAt(i-1, termNodeAny), o.lazyAt(a, termLeft)
	// a ring of recent products, their buffers reused: quilts are asked
	// node by node, left distance by left distance
	const ring = 8
	var t *lazyTerm
	if len(o.nlAny) < ring {
		t = &lazyTerm{blocks: make([][]float64, len(tn.ub)), ub: make([]float64, len(tn.ub))}
		o.nlAny = append(o.nlAny, t)
	} else {
		t = o.nlAny[o.nlNext]
		o.nlNext = (o.nlNext + 1) % ring
	}
	t.d, t.node, t.kind = a, i, termLeft
	n := len(o.pairs)
	flat := t.blocks[0]
	if flat == nil {
		flat = make([]float64, n)
	}
	flat = flat[:n:n]
	n1, l1 := tn.blocks[0][:n:n], tl.blocks[0][:n:n] // whole terms: one flat slice
	for bi := range t.ub {
		lo, hi := bi*pairBlock, min(n, (bi+1)*pairBlock)
		t.blocks[bi], t.ub[bi] = flat[lo:hi], mulMax(n1[lo:hi], l1[lo:hi], flat[lo:hi])
	}
	return t
}

// recipEntry holds, for one clean power P^d, the factors of the lazy
// terms' products: rows of P^d and of its entrywise reciprocals (right
// term), or the same as columns, transposed (left terms), row-major k×k.
// Rows are computed whole (rightMax needs every reciprocal); columns one
// by one as blocks need them (done).
type recipEntry struct {
	d       int
	cols    bool
	num     []float64 // cols only (rows: P^d's own rows are used); kept for reuse
	inv     []float64
	done    []bool // column (cols) or row x of num and inv computed
	all     bool   // every row computed (rows)
	lastUse int
}

// recipKeep is how many distances' reciprocals an oracle keeps (each 1–2
// k² floats): the walk asks for a few distances at a time.
const recipKeep = 8

// recip returns the entry with num[x·k+u]·inv[y·k+u] the products
// ratioTable's fast loop forms (cols false: P^d(x,u)·(1/P^d(y,u)); cols
// true: P^d(u,x)·(1/P^d(u,y)), columns x and y made ready by recipCol),
// so that block and rightMax need no division per product. Same
// reciprocals, so the same products bit for bit. Only for clean powers
// (every entry ≥ tiny).
func (o *exactOracle) recip(d int, cols bool) *recipEntry {
	o.recipClock++
	var old *recipEntry
	for _, e := range o.recips {
		if e.d == d && e.cols == cols {
			e.lastUse = o.recipClock
			return e
		}
		if old == nil || e.lastUse < old.lastUse {
			old = e
		}
	}
	k := o.k
	e := old
	if len(o.recips) < recipKeep {
		e = &recipEntry{}
		o.recips = append(o.recips, e)
	}
	e.d, e.cols, e.lastUse = d, cols, o.recipClock
	e.inv = grow(e.inv, k*k)
	e.done = grow(e.done, k)
	clear(e.done)
	e.all = false
	if !cols {
		return e // rows as blocks need them (recipRow), or all (recipAll)
	}
	e.num = grow(e.num, k*k)
	return e
}

// recipRow computes row y of a rows entry: 1/P^d(y,·), four at a time.
func (o *exactOracle) recipRow(e *recipEntry, y int) {
	if e.done[y] {
		return
	}
	e.done[y] = true
	k := o.k
	reciprocals(o.pw.at(e.d).v[y][:k], e.inv[y*k:(y+1)*k])
}

// recipAll computes every row of a rows entry.
func (o *exactOracle) recipAll(e *recipEntry) *recipEntry {
	if !e.all {
		for y := range o.k {
			o.recipRow(e, y)
		}
		e.all = true
	}
	return e
}

// recipCol computes column x of a cols entry: P^d(·,x) and 1/P^d(·,x)
// (reciprocals correctly rounded, four at a time).
func (o *exactOracle) recipCol(e *recipEntry, x int) {
	if e.done[x] {
		return
	}
	e.done[x] = true
	k := o.k
	num, inv := e.num[x*k:(x+1)*k], e.inv[x*k:(x+1)*k]
	for u, row := range o.pw.at(e.d).v {
		num[u] = row[x]
	}
	reciprocals(num, inv)
}

// recipNum is e's numerators: for rows, P^d's own (contiguous in its
// gonum matrix).
func (o *exactOracle) recipNum(e *recipEntry) []float64 {
	if e.cols {
		return e.num
	}
	return o.pw.at(e.d).d.RawMatrix().Data
}

// minProduct returns min_v a[v]·b[v] for positive finite products, as
// maxProduct does the maximum.
func minProduct(a, b []float64) float64 {
	b = b[:len(a)]
	if n4 := len(a) &^ 3; haveKernel && n4 > 0 {
		m := minProd4(&a[0], &b[0], n4)
		for v := n4; v < len(a); v++ {
			if r := a[v] * b[v]; r < m {
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
		if r := math.Float64bits(x[0] * y[0]); r < m0 {
			m0 = r
		}
		if r := math.Float64bits(x[1] * y[1]); r < m1 {
			m1 = r
		}
		if r := math.Float64bits(x[2] * y[2]); r < m2 {
			m2 = r
		}
		if r := math.Float64bits(x[3] * y[3]); r < m3 {
			m3 = r
		}
	}
	for ; v < len(a); v++ {
		if r := math.Float64bits(a[v] * b[v]); r < m0 {
			m0 = r
		}
	}
	return math.Float64frombits(min(m0, m1, m2, m3))
}

// minMaxRows sets hi[x] = max(hi[x], row[x]) and lo[x] = min(lo[x],
// row[x]) over the rows, for positive finite entries (exact: maxima and
// minima).
func minMaxRows(rows [][]float64, hi, lo []float64) {
	k := len(hi)
	n4 := k &^ 3
	for _, row := range rows {
		row = row[:k]
		if haveKernel && n4 > 0 {
			minMaxInto4(&row[0], &hi[0], &lo[0], n4)
		} else {
			n4 = 0
		}
		for x := n4; x < k; x++ {
			if p := row[x]; p > hi[x] {
				hi[x] = p
			}
			if p := row[x]; p < lo[x] {
				lo[x] = p
			}
		}
	}
}

// mulMax sets out[v] = a[v]·b[v] (one rounding each) and returns the
// largest, for non-negative products that are not NaN.
func mulMax(a, b, out []float64) float64 {
	n := len(a)
	b, out = b[:n], out[:n]
	n4 := n &^ 3
	m := 0.0
	if haveKernel && n4 > 0 {
		m = mulMax4(&a[0], &b[0], &out[0], n4)
	} else {
		n4 = 0
	}
	for v := n4; v < n; v++ {
		out[v] = a[v] * b[v]
		m = max(m, out[v])
	}
	return m
}

// reciprocals sets out[v] = 1/in[v] (the correctly rounded quotient, four
// at a time with AVX2).
func reciprocals(in, out []float64) {
	n := len(in)
	out = out[:n]
	n4 := n &^ 3
	if haveKernel && n4 > 0 {
		recip4(&in[0], &out[0], n4)
	} else {
		n4 = 0
	}
	for v := n4; v < n; v++ {
		out[v] = 1 / in[v]
	}
}

// pre holds what the powers' producer computed for each distance of a
// lazy stationary chain (powers.bg) besides the power itself: whether it
// is clean, the right-only maximum and the two terms' block bounds. The
// producer runs the functions the search would (isClean, rightMaxOf,
// boundsOf) on the same power with the same data, so the values are the
// same floats; the search takes them when ready, else computes them as
// before.
type pre struct {
	slots []preSlot // by distance
}

type preSlot struct {
	// state of each part: slotFree, slotFilling (the producer works on
	// it), slotReady (its fields are complete), slotSearch (the search
	// computes its own values: the producer skips it). Part A: clean and
	// rmax (the right-only scans need them first); part B: ub, the
	// block bounds of termRight (before rightMax's minimum) and
	// termLeftNode, nil when the power is not clean.
	state [2]atomic.Int32
	clean bool
	rmax  float64
	ub    [termLeftNode + 1][]float64
}

const (
	partA = 0
	partB = 1
)

const (
	slotFree int32 = iota
	slotFilling
	slotReady
	slotSearch
)

// preAt returns distance d's slot when the producer has filled it, waits
// for it when the producer is filling it, and otherwise claims it for the
// search (nil: compute as before), so no distance is done twice.
func (o *exactOracle) preAt(d, part int) *preSlot {
	if o.pre == nil || d >= len(o.pre.slots) {
		return nil
	}
	s := &o.pre.slots[d]
	st := &s.state[part]
	for {
		switch st.Load() {
		case slotReady:
			return s
		case slotSearch:
			return nil
		case slotFree:
			if st.CompareAndSwap(slotFree, slotSearch) {
				return nil
			}
		default:
			runtime.Gosched() // filling: a fraction of a millisecond
		}
	}
}

// startPre has the powers' producer fill pre from now on (a lazy
// stationary chain, pipelined powers). Everything it reads — the pairs,
// their states and node ratios, the weights — is set before and never
// changes.
func (o *exactOracle) startPre() {
	if !o.pw.bg {
		return
	}
	k, w, px, py, nr := o.k, o.w, o.px, o.py, o.nr
	nb := (len(o.pairs) + pairBlock - 1) / pairBlock
	o.pre = &pre{slots: make([]preSlot, o.pw.limit)}
	slots := o.pre.slots
	inv, buf := make([]float64, k*k), make([]float64, 2*k)
	o.pw.setPost(func(d int, pw power) {
		s := &slots[d]
		clean := isClean(pw, k)
		if s.state[partA].CompareAndSwap(slotFree, slotFilling) {
			if s.clean = clean; clean {
				for y, row := range pw.v {
					reciprocals(row[:k], inv[y*k:(y+1)*k])
				}
				s.rmax = rightMaxOf(pw.v, inv, k, buf)
			}
			s.state[partA].Store(slotReady)
		}
		if s.state[partB].CompareAndSwap(slotFree, slotFilling) {
			if clean {
				for _, kind := range []termKind{termRight, termLeftNode} {
					s.ub[kind] = make([]float64, nb)
					boundsOf(s.ub[kind], pw.v, kind, k, w, px, py, nr)
				}
			}
			s.state[partB].Store(slotReady)
		}
	})
}
