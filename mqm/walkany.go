package mqm

import (
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Exact σ for "any" initial distribution (docs/math.md §4.4, "every
// initial distribution").
//
// For "any", the node term is N_i(x,x') = max_w log(P^{i−1}(w,x')/P^{i−1}(w,x)).
// The stationary chain's node term is N_π(x,x') = log(π(x')/π(x)), and
// π = Σ_w π(w)·P^{i−1}(w,·) makes π(x')/π(x) a weighted mediant of the row
// ratios, so N_i ≥ N_π for every i and pair. With the left and right terms
// equal (π has full support and every state is possible at every time, so
// both oracles range over the same pairs and supports), every influence of
// the "any" oracle is at least the stationary oracle's for the same
// distances:
//
//	e_i(a,b) ≥ e_π(a,b),  e_{L,i}(a) ≥ e_{L,π}(a),  right-only equal.
//
// walkAny runs walkHomogeneous's walk with the stationary influences as
// lower bounds: the resumable per-distance scans (twoScan) prove, for most
// left distances a, that no two-sided quilt of node i can beat the node's
// best, and only the quilts whose stationary score is below it are
// evaluated exactly at node i. The lower bounds are lowered by a slack
// (anyslack) so floating-point rounding in N_i ≥ N_π can only make the
// search evaluate more quilts, never skip one; each node's σ_i is the exact
// minimum, and the walk's domination argument (walk) is unchanged.
const anyslack = 1e-9

// slackLower is a homogeneous oracle lowered by anyslack: a lower bound on
// the influences of the "any" oracle of the same chain.
type slackLower struct{ h homogeneous }

func (s slackLower) two(a, b int) float64    { return s.h.two(a, b) - anyslack }
func (s slackLower) leftOnly(a int) float64  { return s.h.leftOnly(a) - anyslack }
func (s slackLower) rightOnly(b int) float64 { return s.h.rightOnly(b) - anyslack }

// anyBound returns the stationary lower-bound oracle of an "any" chain, or
// false when the bound does not hold as stated (π not of full support, or
// not every state possible at every time).
func anyBound(o *exactOracle, T int) (homogeneous, bool) {
	if o.ch.Init != markov.InitAny || len(o.supps) != 1 {
		return nil, false
	}
	for _, in := range o.supps[0] {
		if !in {
			return nil, false
		}
	}
	st, err := markov.New(o.ch.States, o.ch.P, markov.InitStationary, nil)
	if err != nil {
		return nil, false
	}
	so, err := newExactOracle(st, T)
	if err != nil {
		return nil, false
	}
	so.pw = o.pw // the same P: share its powers
	for _, p := range so.pi {
		if !(p > 0) {
			return nil, false
		}
	}
	return slackLower{so}, true
}

// walkAny is walk for an "any" oracle o, with lb the stationary lower
// bound (anyBound).
func walkAny(o *exactOracle, lb homogeneous, T int, eps float64) nodeResult {
	var b2 []twoScan // index a−1, over the lower bound
	var top nodeResult
	var eR []float64 // right-only influences (node-independent: one support)
	rightOnly := func(b int) float64 {
		for len(eR) <= b {
			eR = append(eR, math.NaN())
		}
		if math.IsNaN(eR[b]) {
			eR[b] = o.eval(1, 0, b, true, false)
		}
		return eR[b]
	}
	rStart := 1
	for i := 1; i <= T; i++ {
		best := nodeResult{sigma: float64(T) / eps, node: i, quilt: Quilt{i, T - i + 1}}
		rightOnlyBest(rightOnly, i, T, eps, &rStart, &best) // exact: no node term
		// two-sided: the lower bound's scan proves most a hopeless; the
		// rest are searched exactly over the b its scores leave open
		if i > 1 {
			b2 = append(b2, twoScan{a: i - 1})
		}
		for a := 1; a < i && float64(a) < best.sigma*eps; a++ {
			r := &b2[a-1]
			if r.lb < best.sigma || r.b > T-i {
				r.resume(lb, T-i, eps, best.sigma)
			}
			if r.s >= best.sigma {
				continue // every b of this a scores ≥ the node's best
			}
			exactTwo(o, lb, i, a, T, eps, &best)
		}
		// left-only
		for a := 1; a < i; a++ {
			card := T - i + a
			if float64(card) >= best.sigma*eps {
				break
			}
			if score(card, eps, lb.leftOnly(a)) >= best.sigma {
				continue
			}
			e := o.eval(i, a, 0, false, true)
			if s := score(card, eps, e); s < best.sigma {
				best = nodeResult{sigma: s, node: i, quilt: Quilt{a, T - i + 1}, e: e}
			}
		}
		if best.sigma > top.sigma {
			top = best
		}
		if best.quilt.Kind(i, T) != "right-only" || o.nan != nil {
			return top
		}
	}
	return top
}

// exactTwo evaluates exactly, at node i, every two-sided quilt {i−a, i+b}
// whose lower-bound score is below the node's best, updating best.
func exactTwo(o *exactOracle, lb homogeneous, i, a, T int, eps float64, best *nodeResult) {
	eL := lb.leftOnly(a) // e(a,b) ≥ e_L(a): the right term is never negative
	if eL >= eps {
		return
	}
	for b := 1; b <= T-i; b++ {
		card := a + b - 1
		if float64(card)/(eps-eL) >= best.sigma {
			return // larger b only raise this bound
		}
		if score(card, eps, lb.two(a, b)) >= best.sigma {
			continue
		}
		e := o.eval(i, a, b, false, false)
		if s := score(card, eps, e); s < best.sigma {
			*best = nodeResult{sigma: s, node: i, quilt: Quilt{a, b}, e: e}
		}
	}
}
