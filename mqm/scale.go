package mqm

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
)

// Method selects the influence oracle: one of the two Markov Quilt
// mechanisms of package mechanism.
type Method = mechanism.Name

const (
	Exact  = mechanism.Exact  // MQMExact: exact max-influence per chain (docs/math.md §4.2)
	Approx = mechanism.Approx // MQMApprox: π_Θ, g_Θ bound (docs/math.md §4.3)
)

func checkMethod(m Method) error {
	if !m.MQM() {
		return fmt.Errorf("mqm: mechanism %q is not a Markov Quilt Mechanism (want exact or approx)", m)
	}
	return nil
}

// Quilt is {X_{i−A}, X_{i+B}} around node i with the imaginary-node
// convention: A = i means no left node, B = T−i+1 means no right node.
type Quilt struct {
	A int `json:"a"`
	B int `json:"b"`
}

// Card is the size of the nearby set X_N of the quilt: A+B−1.
func (q Quilt) Card() int { return q.A + q.B - 1 }

// Kind names the quilt's shape at node i of a chain of length T.
func (q Quilt) Kind(i, T int) string {
	l, r := q.A == i, q.B == T-i+1
	switch {
	case l && r:
		return "trivial"
	case l:
		return "right-only"
	case r:
		return "left-only"
	}
	return "two-sided"
}

// Result is the outcome of the quilt search.
type Result struct {
	Sigma     float64 // σ_max: Laplace scale for a 1-Lipschitz scalar query
	Node      int     // 1-based node attaining σ_max
	Quilt     Quilt   // that node's best quilt
	TwoSided  bool    // whether Quilt has nodes on both sides
	Influence float64 // max-influence of Quilt (with rounding allowance)
	Chain     int     // index in the class of the chain attaining σ_max (exact); 0 for approx
	Approx    *ApproxParams
	// UpperBound: the exact search over a pattern of missing readings
	// exceeded its budget, and Sigma is the (valid, larger) σ of the whole
	// span with every missing reading counted; Node and Quilt refer to
	// that span.
	UpperBound bool
	partial    bool // internal: a search gave up (ScaleAt falls back)
}

// nodeResult is the best (or a good-enough) quilt of one node.
type nodeResult struct {
	sigma float64
	node  int
	quilt Quilt
	e     float64
	// partial: the search ran out of its evaluation budget (scan only);
	// sigma is then meaningless.
	partial bool
}

// score is card/(ε−e), or +Inf when e ≥ ε (docs/math.md §4).
func score(card int, eps, e float64) float64 {
	if e >= eps {
		return math.Inf(1)
	}
	return float64(card) / (eps - e)
}

// nodeSearch returns σ_i = min over the quilts of node i of card/(ε−e).
// Quilts are visited in increasing card; since every score is at least
// card/ε, the search stops as soon as card ≥ best·ε (Lemma 4.9's argument,
// [SWC17]: a longer quilt can never score better). If stopAt > 0 the
// search also stops at the first quilt scoring ≤ stopAt: the caller only
// needs to know that node i does not raise σ_max, and the returned quilt
// then proves it.
func nodeSearch(o oracle, i, T int, eps, stopAt float64) nodeResult {
	best := nodeResult{sigma: math.Inf(1), node: i}
	ov, budgeted := o.(interface{ over() bool })
	for c := 1; c <= T; c++ {
		if float64(c) >= best.sigma*eps || budgeted && ov.over() {
			break
		}
		lo, hi := max(1, c+1-(T-i+1)), min(i, c)
		for a := lo; a <= hi; a++ {
			b := c + 1 - a
			e := o.influence(i, a, b)
			if s := score(c, eps, e); s < best.sigma {
				best = nodeResult{sigma: s, node: i, quilt: Quilt{a, b}, e: e}
				if s <= stopAt {
					return best
				}
			}
		}
	}
	return best
}

// walk computes σ_max of one oracle without visiting every node when the
// oracle is node-monotone (stationary, "any", approx). It is exact, by this
// argument ([SWC17] Lemma C.9 and [SWC16] Claim B.11, extended to
// influences that do not increase with i):
//
//   - If node i has a two-sided quilt {i−a, i+b} scoring s, every node j > i
//     has a quilt scoring ≤ s. For j ≤ T−b the same distances form a quilt
//     of j with influence e_j(a,b) ≤ e_i(a,b). For j > T−b, the left-only
//     quilt {j−a} has card T−j+a ≤ a+b−1 and influence max[N_j + L_a] ≤
//     max[N_i + L_a + R_b], because the right term R_b(x,x') =
//     max_v log(P^b(x,v)/P^b(x',v)) is never negative (two distributions,
//     so some ratio is ≥ 1); for approx, 2δ(a) ≤ δ(b) + 2δ(a).
//   - If node i has a left-only quilt {i−a} scoring s, then for every j > i,
//     {j−a} is a left-only quilt of j with card T−j+a < T−i+a and influence
//     ≤ e_i, hence σ_j ≤ s.
//   - The trivial quilt scores T/ε, the largest any σ_j can be.
//   - A right-only quilt proves nothing about other nodes: go on to i+1.
//
// So the walk stops at the first node whose quilt is not right-only, and
// every node before it was searched. Each node is searched with stopAt =
// the running max: a node that cannot raise the max only has to exhibit a
// quilt proving so, and that quilt serves the domination argument as well
// as its best one would. For long mixing chains the walk visits about a*
// nodes (the left distance of the optimal interior quilt), independent of T.
func walk(o oracle, T int, eps float64) nodeResult {
	var top nodeResult
	ov, budgeted := o.(interface{ over() bool })
	for i := 1; i <= T; i++ {
		r := nodeSearch(o, i, T, eps, top.sigma)
		if budgeted && ov.over() {
			// the node search may have stopped early: no answer
			return nodeResult{partial: true}
		}
		if r.sigma > top.sigma {
			top = r
		}
		if r.quilt.Kind(i, T) != "right-only" {
			return top
		}
	}
	return top
}

// scan is the fallback for oracles whose influence may grow with i (a
// fixed, non-stationary initial distribution): every node is visited, but
// each stops at the first quilt that proves it does not raise the max.
//
// Each node first tries a few hints: the last searched nodes' quilts
// shifted (same distances, open ends kept open) and the maximising node's
// quilt, each with its neighbours within two steps. Neighbouring nodes usually share their
// best quilt, and a quilt scoring ≤ the running max proves the node cannot
// raise it. Only when no hint does is the node searched, and the search
// either finds such a quilt or returns the node's exact σ_i (> the running
// max), so the result is the exact max over nodes.
func scan(o oracle, T int, eps float64) nodeResult {
	var top nodeResult
	var hints []hint
	var topHint hint
	st, _ := o.(stabler)
	ov, budgeted := o.(interface{ over() bool })
	for i := 1; i <= T; i++ {
		if budgeted && ov.over() {
			return nodeResult{partial: true}
		}
		q, ok := Quilt{}, false
		if i > 1 {
			q, ok = proves(o, i, T, eps, top.sigma, append(hints, topHint))
		}
		if !ok {
			r := nodeSearch(o, i, T, eps, top.sigma)
			if r.sigma > top.sigma {
				top = r
			}
			q = r.quilt
			// the last few searched nodes' quilts (gap patterns
			// alternate), and the maximising node's
			if len(hints) == maxHints {
				hints = hints[1:]
			}
			hints = append(hints, hintOf(q, i, T))
			if top.node == i {
				topHint = hintOf(top.quilt, i, T)
			}
		}
		// Past the stable time, a two-sided quilt that proves node i
		// proves every later node it fits: skip to the last b nodes.
		if st != nil && q.A < i && q.B < T-i+1 {
			if s := st.stableNode(); s > 0 && i-q.A >= s {
				i = T - q.B
			}
		}
	}
	return top
}

const maxHints = 6

// hint is a quilt to try first at the next node: its distances, and
// whether its ends are open (an open end stays open when shifted).
type hint struct {
	Quilt
	left, right bool
}

func hintOf(q Quilt, i, T int) hint { return hint{q, q.A == i, q.B == T-i+1} }

// stabler is an oracle that knows a node from which its influences depend
// only on the quilt's distances (0: none known yet).
type stabler interface{ stableNode() int }

func (o *exactOracle) stableNode() int { return o.stable() }

func (o *observedOracle) stableNode() int {
	if o.ob.Times != nil || o.exact == nil {
		return 0
	}
	if s := o.exact.stable(); s > 0 {
		return max(1, s-o.ob.Start+1)
	}
	return 0
}

// proves returns a quilt scoring ≤ beta at node i among the hints moved to
// node i and the quilts within two steps of them on either side.
func proves(o oracle, i, T int, eps, beta float64, hints []hint) (Quilt, bool) {
	for _, h := range hints {
		a0, b0 := h.A, h.B
		if h.left || a0 > i {
			a0 = i
		}
		if h.right || b0 > T-i+1 {
			b0 = T - i + 1
		}
		for da := -2; da <= 2; da++ {
			for db := -2; db <= 2; db++ {
				a, b := a0+da, b0+db
				if a < 1 || b < 1 || a > i || b > T-i+1 {
					continue
				}
				if float64(a+b-1) <= beta*eps && score(a+b-1, eps, o.influence(i, a, b)) <= beta {
					return Quilt{a, b}, true
				}
			}
		}
	}
	return Quilt{}, false
}

// fullSearch is the reference O(T·quilts) search of [SWC16] Algorithms 3–4:
// every node, every quilt, no pruning. Tests compare the fast path with it.
func fullSearch(o oracle, T int, eps float64) nodeResult {
	var top nodeResult
	for i := 1; i <= T; i++ {
		best := nodeResult{sigma: math.Inf(1), node: i}
		for a := 1; a <= i; a++ {
			for b := 1; b <= T-i+1; b++ {
				q := Quilt{a, b}
				e := o.influence(i, a, b)
				if s := score(q.Card(), eps, e); s < best.sigma {
					best = nodeResult{sigma: s, node: i, quilt: q, e: e}
				}
			}
		}
		if best.sigma > top.sigma {
			top = best
		}
	}
	return top
}

func checkArgs(class *markov.Class, T int, eps float64) error {
	if class == nil || len(class.Chains) == 0 {
		return errors.New("empty class")
	}
	if T < 1 {
		return fmt.Errorf("length %d, want ≥ 1", T)
	}
	if err := checks.Epsilon(eps); err != nil {
		return err
	}
	return nil
}

// hopeless reports whether no quilt but the trivial one can have finite
// influence, so that σ_i = T/ε for every node: an irreducible periodic chain
// under the stationary or "any" initial distribution (P^d(u,·) vanishes on
// all but one cyclic class, so some ratio is infinite at every distance), or
// an approx bound whose δ(t) is infinite for every t < T.
func hopeless(o oracle, T int) bool {
	switch o := o.(type) {
	case *exactOracle:
		if o.ch.Init == markov.InitGiven {
			return false
		}
		p, err := o.ch.Period()
		return err == nil && p > 1
	case *approxOracle:
		return math.IsInf(o.delta(T), 1)
	}
	return false
}

// anyWalkWork is the work (influences × k², the cost of one) the plain
// walk may spend on an "any" chain before search switches to walkAny
// (a few milliseconds; a variable so tests can force either path).
var anyWalkWork = 5e6

func search(o oracle, T int, eps float64) nodeResult {
	if eo, ok := o.(*exactOracle); ok {
		// the powers' producer need not precompute for a finished search
		defer eo.pw.setPost(nil)
	}
	if hopeless(o, T) {
		return nodeResult{sigma: float64(T) / eps, node: 1, quilt: Quilt{1, T}}
	}
	if h, ok := homogeneousOf(o); ok {
		return walkHomogeneous(h, T, eps)
	}
	if eo, ok := o.(*exactOracle); ok && eo.ch.Init == markov.InitAny {
		// Chains that mix fast finish the plain walk after a few thousand
		// influences; walkAny's second (stationary) oracle only pays for
		// itself on slow-mixing chains, where the walk needs millions. So
		// the walk goes first within a budget, and its work is dropped
		// when it runs out (both walks are exact).
		eo.budget = max(1, int(anyWalkWork/float64(eo.k*eo.k)))
		r := walk(eo, T, eps)
		eo.budget = 0
		if !r.partial {
			return r
		}
		if lb, ok := anyBound(eo, T); ok {
			return walkAny(eo, lb, T, eps)
		}
		return walk(eo, T, eps)
	}
	if o.nodeMonotone() {
		return walk(o, T, eps)
	}
	return scan(o, T, eps)
}

// Scale returns σ_max for a 1-Lipschitz query on chains of length T from
// class under ε-Pufferfish privacy ([SWC17] Algorithm 2 restricted to
// chains, Algorithms 3–5). For Exact, σ_max = max over θ of σ_max(θ),
// computed with up to GOMAXPROCS chains in parallel; for Approx one search
// with the class-level π_Θ, g_Θ.
func Scale(class *markov.Class, T int, eps float64, m Method) (Result, error) {
	return ScaleContext(context.Background(), class, T, eps, m)
}

// ScaleContext is Scale stopped when ctx ends (a deadline, a client gone,
// a signal): it then returns, within about a second (stop.go), an error
// wrapping ctx.Err().
func ScaleContext(ctx context.Context, class *markov.Class, T int, eps float64, m Method) (_ Result, err error) {
	defer recoverStop(&err)
	if err := ctxErr(ctx); err != nil {
		return Result{}, err
	}
	if err := checkArgs(class, T, eps); err != nil {
		return Result{}, err
	}
	if err := checkMethod(m); err != nil {
		return Result{}, err
	}
	if m == Approx {
		p, err := ApproxParameters(class)
		if err != nil {
			return Result{}, err
		}
		o := &approxOracle{T: T, piMin: p.PiMin, gap: p.Gap, reversible: p.Reversible, stop: stop{ctx: ctx}}
		r := search(o, T, eps)
		return toResult(r, T, 0, &p), nil
	}
	return perChain(class, T, func(ch *markov.Chain) (nodeResult, error) {
		o, err := newExactOracle(ch, T)
		if err != nil {
			return nodeResult{}, err
		}
		o.stop.ctx = ctx
		return search(o, T, eps), o.nan
	})
}

func toResult(r nodeResult, T, chain int, p *ApproxParams) Result {
	return Result{
		Sigma: r.sigma, Node: r.node, Quilt: r.quilt,
		TwoSided:  r.quilt.Kind(r.node, T) == "two-sided",
		Influence: r.e, Chain: chain, Approx: p,
	}
}

// NodeScales returns σ_i for every node i = 1..T (index i−1): the exact
// per-node minimum over quilts, maximised over the chains of the class
// (Exact) or with the class-level bound (Approx). It visits every node and
// costs O(T) searches.
func NodeScales(class *markov.Class, T int, eps float64, m Method) ([]float64, error) {
	if err := checkArgs(class, T, eps); err != nil {
		return nil, err
	}
	if err := checkMethod(m); err != nil {
		return nil, err
	}
	out := make([]float64, T)
	var oracles []oracle
	if m == Approx {
		p, err := ApproxParameters(class)
		if err != nil {
			return nil, err
		}
		oracles = append(oracles, &approxOracle{T: T, piMin: p.PiMin, gap: p.Gap, reversible: p.Reversible})
	} else {
		for c, ch := range class.Chains {
			o, err := newExactOracle(ch, T)
			if err != nil {
				return nil, fmt.Errorf("chain %d: %w", c, err)
			}
			oracles = append(oracles, o)
		}
	}
	for _, o := range oracles {
		for i := 1; i <= T; i++ {
			out[i-1] = math.Max(out[i-1], nodeSearch(o, i, T, eps, 0).sigma)
		}
		if e, ok := o.(*exactOracle); ok && e.nan != nil {
			return nil, e.nan
		}
	}
	return out, nil
}

// homogeneousOf returns o as a node-independent oracle when it is one.
func homogeneousOf(o oracle) (homogeneous, bool) {
	switch o := o.(type) {
	case *approxOracle:
		return o, true
	case *exactOracle:
		return o, o.ch.Init == markov.InitStationary
	}
	return nil, false
}
