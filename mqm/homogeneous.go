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

// deltaT is delta with a table: the search asks for the same t many times.
func (o *approxOracle) deltaT(t int) float64 {
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
// B2(a) is computed once and reused by every later node while its
// minimising b still fits (b ≤ T−i); otherwise it is recomputed for the
// shorter range. Inside each minimum a quilt is skipped when a lower bound
// on its score already reaches the best: card/ε always, and for two-sided
// quilts (a+b−1)/(ε − e_L(a)) because e(a,b) ≥ e_L(a) (the right term is
// never negative). The feasible b of B2(a) form a suffix (e is
// non-increasing in b), found by bisection.
func walkHomogeneous(h homogeneous, T int, eps float64) nodeResult {
	type best2 struct {
		s     float64 // min score over b ≤ maxB among quilts scoring < bound (Inf: none)
		b     int
		e     float64
		bound float64
	}
	var b2 []best2 // index a−1
	// bestTwo computes B2(a) over b ≤ maxB, exactly for values below bound:
	// quilts with a+b−1 ≥ bound·ε score ≥ bound and are not visited, so
	// the powers P^b stay within the quilt sizes that can matter.
	bestTwo := func(a, maxB int, bound float64) best2 {
		r := best2{s: math.Inf(1), bound: bound}
		eL := h.leftOnly(a)
		if eL >= eps || maxB < 1 {
			return r
		}
		hi := maxB
		if lim := bound * eps; lim < float64(a+hi-1) {
			hi = int(math.Ceil(lim)) - a + 1
		}
		if hi < 1 || h.two(a, hi) >= eps {
			return r
		}
		lo := 1 // smallest feasible b in [1, hi] by bisection
		if h.two(a, 1) >= eps {
			l, u := 1, hi // two(a,l) infeasible, two(a,u) feasible
			for u-l > 1 {
				m := (l + u) / 2
				if h.two(a, m) < eps {
					u = m
				} else {
					l = m
				}
			}
			lo = u
		}
		for b := lo; b <= hi; b++ {
			if float64(a+b-1)/(eps-eL) >= min(r.s, bound) {
				break
			}
			e := h.two(a, b)
			if s := score(a+b-1, eps, e); s < r.s {
				r.s, r.b, r.e = s, b, e
			}
		}
		return r
	}
	var top nodeResult
	// Right-only feasibility (e_R(b) < ε) depends on b alone, so b below
	// the first feasible distance seen at an earlier node is skipped.
	rStart := 1
	for i := 1; i <= T; i++ {
		best := nodeResult{sigma: float64(T) / eps, node: i, quilt: Quilt{i, T - i + 1}}
		// right-only
		first := true
		for b := rStart; b <= T-i; b++ {
			if float64(i+b-1) >= best.sigma*eps {
				break
			}
			e := h.rightOnly(b)
			if e >= eps {
				if first {
					rStart = b + 1
				}
				continue
			}
			first = false
			if s := score(i+b-1, eps, e); s < best.sigma {
				best = nodeResult{s, i, Quilt{i, b}, e}
			}
		}
		// two-sided, a = 1..i−1. A cached B2(a) is reused while its
		// minimiser fits the node's range (b ≤ T−i) and its bound covers
		// the node's current best; otherwise it is recomputed.
		if i > 1 {
			b2 = append(b2, best2{bound: math.Inf(-1)})
		}
		for a := 1; a < i && float64(a) < best.sigma*eps; a++ {
			r := &b2[a-1]
			stale := r.b > T-i || (math.IsInf(r.s, 1) && r.bound < best.sigma) || (!math.IsInf(r.s, 1) && r.s >= r.bound)
			if stale {
				*r = bestTwo(a, T-i, best.sigma)
			}
			if r.s < best.sigma {
				best = nodeResult{r.s, i, Quilt{a, r.b}, r.e}
			}
		}
		// left-only
		for a := 1; a < i; a++ {
			if float64(T-i+a) >= best.sigma*eps {
				break
			}
			e := h.leftOnly(a)
			if s := score(T-i+a, eps, e); s < best.sigma {
				best = nodeResult{s, i, Quilt{a, T - i + 1}, e}
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
