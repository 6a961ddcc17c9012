package mqm

import "math"

// homogeneous is an oracle whose influences do not depend on the node:
// approx, and exact with the stationary initial distribution (q_i = π for
// every i). Closed distances a, b ≥ 1.
type homogeneous interface {
	two(a, b int) float64    // {X_{i−a}, X_{i+b}}
	leftOnly(a int) float64  // {X_{i−a}} only
	rightOnly(b int) float64 // {X_{i+b}} only
}

func (o *approxOracle) two(a, b int) float64    { return o.deltaT(b) + 2*o.deltaT(a) }
func (o *approxOracle) leftOnly(a int) float64  { return 2 * o.deltaT(a) }
func (o *approxOracle) rightOnly(b int) float64 { return o.deltaT(b) }

// maxDeltaTable bounds the δ table (and so the approx search's memory,
// 8 bytes a distance, plus a third of that in block minima): a chain that
// mixes slowly has its best quilts ≈ 1/g_Θ distances away, a search may
// visit that many, and beyond the table δ is computed again each time —
// the same function, so the same bits. A variable so tests can lower it.
var maxDeltaTable = 1 << 23

// deltaT is delta with a table: the search asks for the same t many times.
func (o *approxOracle) deltaT(t int) float64 {
	o.stop.check()
	if t >= maxDeltaTable {
		return o.delta(t)
	}
	for len(o.table) <= t {
		o.table = append(o.table, o.delta(len(o.table)))
	}
	return o.table[t]
}

// For stationary chains the exact influence does not depend on the node
// (q_i = π for every i); any node with a closed left end at distance a will
// do, and node 1 for a right-only quilt.
func (o *exactOracle) two(a, b int) float64    { return o.eval(a+1, a, b, false, false) }
func (o *exactOracle) leftOnly(a int) float64  { return o.eval(a+1, a, 0, false, true) }
func (o *exactOracle) rightOnly(b int) float64 { return o.eval(1, 0, b, true, false) }

// walkHomogeneous computes σ_max for a homogeneous oracle. It follows the
// same walk as walk (nodes 1, 2, … until a node's best quilt is not
// right-only; proof there) but computes each node's σ_i from shared
// per-distance minima instead of searching every quilt of every node:
//
//	σ_i = min( R(i), min_{a<i} B2_i(a), Lft(i), T/ε )
//	R(i)    = min_{1≤b≤T−i} (i+b−1)/(ε − e_R(b))         right-only
//	B2_i(a) = min_{1≤b≤T−i} (a+b−1)/(ε − e(a,b))          two-sided
//	Lft(i)  = min_{1≤a<i}   (T−i+a)/(ε − e_L(a))          left-only
//
// B2(a) is found by a resumable scan over b (twoScan) shared by every
// later node: each node only asks whether B2(a) is below its current best
// β, and β never decreases along the walk (R(i) increases with i), so the
// scan continues where the previous node stopped instead of starting over.
// Inside each minimum a quilt is skipped when a lower bound on its score
// already reaches the best: card/ε always, and for two-sided quilts
// (a+b−1)/(ε − e_L(a)) because e(a,b) ≥ e_L(a) (the right term is never
// negative). The feasible b of B2(a) form a suffix (e is non-increasing in
// b), found by bisection.
func walkHomogeneous(h homogeneous, T int, eps float64) nodeResult {
	var b2 []twoScan // index a−1
	var ag scanBlocks
	var top nodeResult
	// Right-only feasibility (e_R(b) < ε) depends on b alone, so b below
	// the first feasible distance seen at an earlier node is skipped.
	rStart := 1
	for i := 1; i <= T; i++ {
		best := nodeResult{sigma: float64(T) / eps, node: i, quilt: Quilt{i, T - i + 1}}
		if a, ok := h.(*approxOracle); ok {
			a.rightOnlyBest(i, T, eps, &rStart, &best)
		} else {
			rightOnlyBest(h.rightOnly, i, T, eps, &rStart, &best)
		}
		// two-sided, a = 1..i−1
		if i > 1 {
			b2 = append(b2, twoScan{a: i - 1})
			ag.add((i - 2) / aBlock)
		}
		// A scan with lb ≥ β and b ≤ T−i is neither resumed nor better
		// than β (s ≥ lb): blocks of aBlock such scans are skipped by
		// their least lb and largest b (ag), with no other effect
		// (docs/math.md §4.3, left distances whose scans cannot matter).
		//
		// The block being visited (cur) has its aggregates redone when one
		// of its scans was resumed (dirty): from the least lb and largest
		// b of its scans as they are visited (accLb, accB; a minimum and a
		// maximum, exact in any order) when every scan of the block was
		// visited, else by refresh.
		cur, last := -1, 0 // last: the last left distance visited
		dirty := false
		accLb, accB := math.Inf(1), 0
		for a := 1; a < i && float64(a) < best.sigma*eps; a++ {
			if (a-1)%aBlock == 0 {
				if cur >= 0 && dirty {
					ag.lb[cur], ag.b[cur] = accLb, accB // every scan visited
				}
				cur, dirty = -1, false
				bi := (a - 1) / aBlock
				if ag.lb[bi] >= best.sigma && ag.b[bi] <= T-i {
					a += aBlock - 1
					continue
				}
				cur = bi
				accLb, accB = math.Inf(1), 0
			}
			r := &b2[a-1]
			if r.lb < best.sigma || r.b > T-i {
				r.resume(h, T-i, eps, ahead(h, best.sigma))
				dirty = true
			}
			accLb, accB, last = min(accLb, r.lb), max(accB, r.b), a
			if r.s < best.sigma {
				best = nodeResult{sigma: r.s, node: i, quilt: Quilt{a, r.b}, e: r.e}
			}
		}
		if cur >= 0 && dirty {
			if last == min(len(b2), (cur+1)*aBlock) {
				ag.lb[cur], ag.b[cur] = accLb, accB
			} else {
				ag.refresh(b2, cur)
			}
		}
		// left-only
		for a := 1; a < i; a++ {
			if float64(T-i+a) >= best.sigma*eps {
				break
			}
			e := h.leftOnly(a)
			if s := score(T-i+a, eps, e); s < best.sigma {
				best = nodeResult{sigma: s, node: i, quilt: Quilt{a, T - i + 1}, e: e}
			}
		}
		if best.sigma > top.sigma {
			top = best
		}
		if best.quilt.Kind(i, T) != "right-only" {
			return top
		}
	}
	return top
}

// ahead is the target a scan is resumed with at a node whose best so far
// is beta. For the approx bound it is a little above beta: β rises by
// about one score unit per node, so a scan resumed exactly to β is
// resumed again at the next node for one more distance; resumed to
// β·(1+scanAhead) it is left alone for several nodes. A scan resumed to
// any target β' ≥ β leaves the node's result unchanged (docs/math.md §4.3,
// scans resumed ahead). The exact oracle resumes to β: its further
// distances may need powers the walk never needs otherwise.
func ahead(h homogeneous, beta float64) float64 {
	if _, ok := h.(*approxOracle); ok && scanAheadOn {
		return beta * (1 + scanAhead)
	}
	return beta
}

const scanAhead = 0.01

// scanAheadOn: approx scans are resumed ahead (a variable so tests can
// compare with resuming to β).
var scanAheadOn = true

// aBlock is the number of left distances whose scans walkHomogeneous
// skips at once.
const aBlock = 32

// scanBlocks holds, per block of aBlock consecutive scans, their least lb
// and largest b.
type scanBlocks struct {
	lb []float64
	b  []int
}

// add accounts for a new scan (lb 0, b 0) at the end of block bi.
func (g *scanBlocks) add(bi int) {
	if len(g.lb) <= bi {
		g.lb, g.b = append(g.lb, 0), append(g.b, 0)
		return
	}
	g.lb[bi] = 0 // min(lb, 0): every lb is ≥ 0
}

func (g *scanBlocks) refresh(b2 []twoScan, bi int) {
	for len(g.lb) <= bi {
		g.lb, g.b = append(g.lb, 0), append(g.b, 0)
	}
	lb, mb := math.Inf(1), 0
	for _, r := range b2[bi*aBlock : min(len(b2), (bi+1)*aBlock)] {
		lb, mb = min(lb, r.lb), max(mb, r.b)
	}
	g.lb[bi], g.b[bi] = lb, mb
}

// rightOnlyBest lowers best to the best right-only quilt {X_{i+b}} of node
// i, with influences eR(b) that do not depend on the node. Feasibility
// (eR(b) < ε) depends on b alone, so b below the first feasible distance
// met at an earlier node is skipped (rStart).
func rightOnlyBest(eR func(int) float64, i, T int, eps float64, rStart *int, best *nodeResult) {
	first := true
	for b := *rStart; b <= T-i; b++ {
		if float64(i+b-1) >= best.sigma*eps {
			break
		}
		e := eR(b)
		if e >= eps {
			if first {
				*rStart = b + 1
			}
			continue
		}
		first = false
		if s := score(i+b-1, eps, e); s < best.sigma {
			*best = nodeResult{sigma: s, node: i, quilt: Quilt{i, b}, e: e}
		}
	}
}

// rightOnlyBest is the package rightOnlyBest for the approx bound, reading
// δ from its table (the same values, the same order of comparisons):
// the walk of a slowly mixing class visits ~10³ nodes, each scanning ~10³
// right distances. Whole blocks of distances are skipped, once a
// feasible distance has been met, when a lower bound on their scores
// exceeds β, the least of the node's best so far and the score of the
// previous node's best right distance (rHint, usually near this node's):
// for b in [b1, b2], (i+b−1) ≥ (i+b1−1) and ε − δ(b) ≤ ε − m with m the
// least δ of the block (a float minimum; subtraction and division round
// monotonically), so every score of the block, as computed, is at least
// (i+b1−1)/(ε−m) as computed, hence above β, which is at least the
// minimum over all b. So the distances that can attain the minimum are
// all visited, in the same order, with the same comparisons, and the
// result (the first distance of least score) is the same as visiting
// every distance (docs/math.md §4.3, right-only scan of the bound). The
// blocks are nested (rLevel: 128, 16 and 4 distances): a block that
// cannot be skipped is tried by its smaller blocks, then distance by
// distance.
func (o *approxOracle) rightOnlyBest(i, T int, eps float64, rStart *int, best *nodeResult) {
	first := true
	beta := best.sigma
	if h := o.rHint; h >= *rStart && h <= T-i {
		if e := o.deltaT(h); e < eps {
			beta = min(beta, score(i+h-1, eps, e))
		}
	}
	tab := o.table
	// the best so far in locals (written back once): bs, bb, be
	bs, bb, be := best.sigma, 0, 0.0
	stop := bs * eps
	for b := *rStart; b <= T-i; b++ {
		if float64(i+b-1) >= stop {
			break
		}
		if b >= len(tab) && len(tab) < maxDeltaTable {
			o.deltaT(min(2*b+64, maxDeltaTable-1))
			tab = o.table
		}
		if !first && b&(rLevel[len(rLevel)-1]-1) == 0 {
			skip := 0
			for l, L := range rLevel {
				if b&(L-1) != 0 || b+L > T-i+1 {
					continue
				}
				// a whole block [b, b+L) inside the range
				bound, bi := math.Inf(1), b>>rShift[l]
				var m float64
				if bm := o.bmin[l]; bi < len(bm) {
					m = bm[bi] // cached: no call
				} else {
					m = o.blockMinDelta(l, bi)
				}
				if m < eps {
					bound = float64(i+b-1) / (eps - m)
				}
				if bound > min(beta, bs) {
					skip = L
					break
				}
			}
			if skip > 0 {
				b += skip - 1
				continue
			}
		}
		var e float64
		if b < len(tab) {
			e = tab[b]
		} else {
			e = o.deltaT(b) // past the table's bound
		}
		if e >= eps {
			if first {
				*rStart = b + 1
			}
			continue
		}
		first = false
		if s := score(i+b-1, eps, e); s < bs {
			bs, bb, be = s, b, e
			stop = bs * eps
		}
	}
	if bb > 0 {
		*best = nodeResult{sigma: bs, node: i, quilt: Quilt{i, bb}, e: be}
		o.rHint = bb
	}
}

// rLevel are the sizes of the blocks of right distances rightOnlyBest may
// skip at once (powers of two, each a multiple of the next), rShift their
// logarithms.
var (
	rLevel = [...]int{128, 16, 4}
	rShift = [...]int{7, 4, 2}
)

// blockMinDelta returns the least δ(b) over b in [bi·L, (bi+1)·L), L =
// rLevel[l], extending the δ table as needed (cached in o.bmin[l]).
func (o *approxOracle) blockMinDelta(l, bi int) float64 {
	L := rLevel[l]
	blockMin := func(j int) float64 {
		m := math.Inf(1)
		for t := j * L; t < (j+1)*L; t++ {
			m = min(m, o.deltaT(t))
		}
		return m
	}
	if (bi+1)*L > maxDeltaTable {
		return blockMin(bi) // past the table's bound: not kept
	}
	for len(o.bmin[l]) <= bi {
		o.bmin[l] = append(o.bmin[l], blockMin(len(o.bmin[l])))
	}
	return o.bmin[l][bi]
}

// feasibleBounds: twoScan proves far distances feasible by bounds (a
// variable so tests can compare with exact evaluation everywhere).
var feasibleBounds = true

// feasibler is a homogeneous oracle that can sometimes prove two(a, b) <
// eps without computing it.
type feasibler interface {
	surelyFeasible(a, b int, eps float64) bool
}

// surelyFeasible proves two(a, b) < eps for a stationary chain when b is
// beyond the powers computed so far (else it says false: evaluate). The
// right term does not increase with the distance (docs/math.md §4.2,
// lazy terms) and e(a,b) ≤ e_L(a) + e_R(b), so with c the farthest
// distance computed, e(a,b) ≤ e_L(a) + e_R(c). The allowances of the
// computed terms are taken off and b's added back, with 10⁻⁹ for rounding.
func (o *exactOracle) surelyFeasible(a, b int, eps float64) bool {
	n, conv := o.pw.known()
	if o.memo == nil || b < n || conv {
		return false
	}
	c := n - 1
	if c < 1 {
		return false
	}
	eL, eR := o.leftOnly(a), o.rightOnly(c)
	if math.IsInf(eL, 1) || math.IsInf(eR, 1) {
		return false
	}
	return eL-o.allowance(a, 0)+eR-o.allowance(0, c)+o.allowance(a, b)+1e-9 < eps
}

func (s slackLower) surelyFeasible(a, b int, eps float64) bool {
	f, ok := s.h.(feasibler)
	return ok && f.surelyFeasible(a, b, eps+anyslack)
}

// twoScan minimises the two-sided score (a+b−1)/(ε − e(a,b)) of one left
// distance a over b in [1, maxB]. Every b below next has been examined; s
// is the least score among them (at b, with influence e; s = +Inf and b = 0
// while none is feasible), and lb ≤ B2(a) is a lower bound on the minimum
// over all b ≤ maxB.
type twoScan struct {
	a, next, b int
	eL, s, e   float64
	lb         float64
	ready      bool
}

// resume continues the scan until either B2(a) is known exactly and is
// below beta (then s = B2(a)), or B2(a) ≥ beta is proven (then s ≥ beta
// or s = +Inf). The range may shrink between calls (maxB = T−i falls as i
// grows): entries already examined beyond it do not matter as long as the
// minimiser is inside it, otherwise the scan starts over.
func (r *twoScan) resume(h homogeneous, maxB int, eps, beta float64) {
	if !r.ready || r.b > maxB {
		*r = twoScan{a: r.a, next: 1, eL: h.leftOnly(r.a), s: math.Inf(1), ready: true}
	}
	a := r.a
	r.next = min(r.next, maxB+1)
	r.lb = r.s
	if r.eL >= eps {
		return // e(a,b) ≥ e_L(a) ≥ ε for every b
	}
	// b > limit has card a+b−1 > βε, so its score exceeds β.
	limit := maxB
	if lim := beta * eps; lim < float64(a+limit-1) {
		limit = int(math.Ceil(lim)) - a + 1
	}
	// Tighter: e(a,b) ≥ e_L(a), so b with (a+b−1)/(ε−e_L(a)) ≥ β score
	// at least β (the scan below stops there too); their feasibility
	// does not matter.
	if !math.IsInf(beta, 1) {
		l2 := min(limit, int(math.Ceil(beta*(eps-r.eL)))-a+2)
		for l2 >= 1 && float64(a+l2-1)/(eps-r.eL) >= beta {
			l2--
		}
		limit = max(l2, 0)
	}
	if math.IsInf(r.s, 1) && r.next <= limit {
		// No feasible b yet: the feasible b form a suffix; find its start
		// in [next, limit] by bisection. A far distance that a bound
		// proves feasible is not evaluated (feasible): that would compute
		// powers the scan never needs. The upper end is only where the
		// scan starts; every b below the start is proven infeasible by
		// an exact evaluation at l, so the scan's result is the same.
		fb, _ := h.(feasibler)
		if !feasibleBounds {
			fb = nil
		}
		feasible := func(b int) bool {
			if fb != nil && fb.surelyFeasible(a, b, eps) {
				return true
			}
			return h.two(a, b) < eps
		}
		if !feasible(limit) {
			r.next = limit + 1
			r.lb = beta
			return
		}
		if h.two(a, r.next) >= eps {
			l, u := r.next, limit // two(a,l) infeasible, two(a,u) feasible
			for u-l > 1 {
				m := (l + u) / 2
				if feasible(m) {
					u = m
				} else {
					l = m
				}
			}
			r.next = u
		}
	}
	for ; r.next <= limit; r.next++ {
		if float64(a+r.next-1)/(eps-r.eL) >= min(r.s, beta) {
			break
		}
		e := h.two(a, r.next)
		if s := score(a+r.next-1, eps, e); s < r.s {
			r.s, r.b, r.e = s, r.next, e
		}
	}
	// Unexamined b either exceed limit (score > β) or have a card lower
	// bound at least min(s, β).
	r.lb = min(r.s, beta)
	if r.next <= limit {
		r.lb = min(r.s, float64(a+r.next-1)/(eps-r.eL))
	}
}
