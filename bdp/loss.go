package bdp

import (
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Knowledge selects the adversaries A(i, K) over which a worst case is taken.
type Knowledge int

const (
	// AnyKnown: every target i and every K ⊆ [n]∖{i} — the full BDP
	// guarantee.
	AnyKnown Knowledge = iota
	// NoneKnown: K = ∅, the adversary [CGSSY]'s ρ* is tuned for.
	NoneKnown
	// AllKnown: K = [n]∖{i}, i.e. plain local differential privacy.
	AllKnown
)

func (k Knowledge) String() string {
	switch k {
	case AnyKnown:
		return "any"
	case NoneKnown:
		return "none"
	case AllKnown:
		return "all"
	}
	return fmt.Sprintf("Knowledge(%d)", int(k))
}

// ParseKnowledge reads "any", "none" or "all".
func ParseKnowledge(s string) (Knowledge, error) {
	for _, k := range []Knowledge{AnyKnown, NoneKnown, AllKnown} {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("bdp: unknown knowledge %q (want any, none or all)", s)
}

// Known is one reading the adversary knows (1-based index, state index).
type Known struct {
	Index int `json:"index"`
	Value int `json:"value"`
}

// Adversary is A(i, K) with the two hypotheses it compares. Known lists the
// nearest known readings on each side of the target; knowing more readings
// beyond them changes nothing (Markov property), so any K containing these
// and consistent with them attains the same loss.
type Adversary struct {
	Target      int     `json:"target"`
	Known       []Known `json:"known"`
	Secret      int     `json:"secret"`
	Alternative int     `json:"alternative"`
}

// Run says that outputs From..To (1-based, inclusive) are all Symbol.
type Run struct {
	From   int `json:"from"`
	To     int `json:"to"`
	Symbol int `json:"symbol"`
}

// Loss is a worst case: ln of the BDPL, an adversary attaining it and an
// output y attaining it, given on the adversary's window (the positions
// strictly between its nearest known readings, or the chain's ends);
// outputs outside the window cancel from the ratio and may be any outputs
// of positive probability given the known readings.
type Loss struct {
	Loss      float64   `json:"loss"`
	Adversary Adversary `json:"adversary"`
	Output    []Run     `json:"output"`
	// Length is the chain length in which Adversary and Output live.
	Length int `json:"length"`
	// Attained is the loss of Adversary and Output themselves. It equals
	// Loss for Worst; for Limit, Loss is an upper bound on every length
	// and Attained ≤ Loss is what the witness reaches.
	Attained float64 `json:"attained"`
}

// The Markov-blanket factorisation (why Worst may restrict its search).
//
// Fix a target i, hypotheses a ≠ b and a known set K. Let l < i < r be the
// nearest indices of K on each side (l = 0 or r = n+1 when there is none).
// Given x_l, x_i, x_r the chain splits into independent pieces: readings
// before l, the left gap (l, i), the right gap (i, r), readings after r. So
//
//	P(y | x_i=a, x_K) = Out(y outside (l, r)) · L_a(y_(l,i)) · E(a, y_i) · R_a(y_(i,r)),
//
// where Out does not depend on a, L_a(y) = P(y_(l,i) | x_l, x_i=a) and
// R_a(y) = P(y_(i,r) | x_i=a, x_r). Knowing readings beyond l and r only
// changes Out, which cancels in the ratio: K may be replaced by {l, r}.
// The ratio is then L_a/L_b · E(a,y_i)/E(b,y_i) · R_a/R_b, three factors of
// disjoint blocks of y, so its supremum over y is the product of the three
// suprema, and the suprema for different (l, x_l) and (r, x_r) are chosen
// independently: for each target and (a, b),
//
//	worst = max_y ln E(a,y)/E(b,y) + max_{l, x_l} sup ln L_a/L_b + max_{r, x_r} sup ln R_a/R_b.
//
// The conditioning must have positive probability for both hypotheses:
// P(x_l=u) P^{i−l}(u,a) P^{r−i}(a,w) > 0, likewise for b; without a known
// reading on a side that side only needs P(X_i = a), P(X_i = b) > 0.
// L_a ∝ (e_u P (D_y P)^{d−1})_a / P^d(u,a) with d = i−l (or q-started and
// divided by P(X_i = a) when l = 0); R_a = (P (D_y P)^{d−1} e_w)_a /
// P^d(a,w) (or P-products with the all-ones vector when r = n+1). The sides
// are homogeneous in the distance, so one pass per start (side.go) serves
// every target, and prefix maxima over the distance give each target's best
// known reading in O(1). TestWorstMatchesBruteForce checks all of this
// against the definition on every configuration with n ≤ 7.

// model is the data shared by Worst and Limit.
type model struct {
	k, m int
	P, E [][]float64
	q    []float64
}

func newModel(ch *markov.Chain, mech Mechanism) (*model, error) {
	if ch == nil {
		return nil, fmt.Errorf("bdp: nil chain")
	}
	if len(mech.Emit) != ch.K() {
		return nil, fmt.Errorf("bdp: the mechanism has %d rows but the chain has %d states", len(mech.Emit), ch.K())
	}
	if _, err := NewMechanism(mech.Emit); err != nil {
		return nil, err
	}
	if ch.Init == markov.InitAny {
		return nil, fmt.Errorf("bdp: the chain needs a given or stationary initial distribution, not \"any\"")
	}
	q, err := ch.Initial()
	if err != nil {
		return nil, err
	}
	return &model{k: ch.K(), m: len(mech.Emit[0]), P: ch.P, E: mech.Emit, q: q}, nil
}

// maxEnumNodes bounds the output sequences a side of a chain with more than
// two states may enumerate.
const maxEnumNodes = 1 << 22

func (md *model) side(start []float64, J int, step stepFunc) (*side, error) {
	if md.k == 2 {
		return binarySide(start, J, md.m, step), nil
	}
	nodes, layer := 1.0, 1.0
	for range J {
		layer *= float64(md.m)
		nodes += layer
	}
	if nodes > maxEnumNodes {
		return nil, fmt.Errorf("bdp: exact worst case for a %d-state chain enumerates %.3g output sequences per side at this length (limit %d); two-state chains have an O(n) exact path", md.k, nodes, maxEnumNodes)
	}
	return enumSide(start, J, md.k, md.m, step), nil
}

// center returns max_y ln E(a,y)/E(b,y) over outputs possible under a or b.
func (md *model) center(a, b int) (float64, int) {
	best, arg := math.NaN(), -1
	for y := range md.m {
		ea, eb := md.E[a][y], md.E[b][y]
		if ea == 0 && eb == 0 {
			continue
		}
		if r := math.Log(ea) - math.Log(eb); arg < 0 || r > best {
			best, arg = r, y
		}
	}
	return best, arg
}

// powers returns P^d for d = 0..D as rows pw[d][u][a].
func (md *model) powers(D int) [][][]float64 {
	pw := make([][][]float64, D+1)
	pw[0] = make([][]float64, md.k)
	for u := range md.k {
		pw[0][u] = make([]float64, md.k)
		pw[0][u][u] = 1
	}
	for d := 1; d <= D; d++ {
		pw[d] = markov.MatMul(pw[d-1], md.P)
	}
	return pw
}

// marginals returns μ_t = P(X_t = ·) for t = 1..n (index t).
func (md *model) marginals(n int) [][]float64 {
	mu := make([][]float64, n+1)
	mu[1] = md.q
	for t := 2; t <= n; t++ {
		mu[t] = rowTimes(mu[t-1], md.P)
	}
	return mu
}

// rowTimes returns the row vector v·P.
func rowTimes(v []float64, P [][]float64) []float64 {
	out := make([]float64, len(P[0]))
	for x, vx := range v {
		for b, p := range P[x] {
			out[b] += vx * p
		}
	}
	return out
}

func (md *model) col(w int) []float64 {
	c := make([]float64, md.k)
	for a := range md.k {
		c[a] = md.P[a][w]
	}
	return c
}

func ones(k int) []float64 {
	v := make([]float64, k)
	for i := range v {
		v[i] = 1
	}
	return v
}

// sides holds the four kinds of side for one model up to depth J.
type sides struct {
	leftFree, rightFree *side   // no known reading on that side
	leftAt, rightAt     []*side // nearest known reading has value u (w)
}

// sides builds the free sides and, when bridged, the sides at a known
// reading (not needed against K = ∅).
func (md *model) sides(J int, bridged bool) (*sides, error) {
	s := &sides{leftAt: make([]*side, md.k), rightAt: make([]*side, md.k)}
	fwd, bwd := forwardStep(md.P, md.E), backwardStep(md.P, md.E)
	var err error
	if s.leftFree, err = md.side(md.q, J, fwd); err != nil {
		return nil, err
	}
	if s.rightFree, err = md.side(ones(md.k), J, bwd); err != nil {
		return nil, err
	}
	for u := range md.k {
		if !bridged {
			break
		}
		if s.leftAt[u], err = md.side(md.P[u], J, fwd); err != nil {
			return nil, err
		}
		if s.rightAt[u], err = md.side(md.col(u), J, bwd); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// choice is one side's best option for a target: the known reading's
// distance d and value v (d = 0: no known reading), and its log factor.
type choice struct {
	val  float64
	d, v int
}

func better(c choice, val float64) bool {
	return !math.IsNaN(val) && (math.IsNaN(c.val) || val > c.val)
}

// maxQuadratic bounds the O(n²) fallback used when some reading at time
// t ≥ 2 has a state of probability zero (then a known reading's feasibility
// depends on its position, not only on its distance to the target).
const maxQuadratic = 4000

// MaxLength is the longest chain Worst, Attack and SimulateAttack accept:
// their time and memory grow linearly with the length.
const MaxLength = 1 << 20

// maxSimulation caps length × trials of SimulateAttack.
const maxSimulation = 1 << 28

// Worst returns the exact worst BDPL of mech on chains of length n from ch
// over the adversaries selected by know, with an adversary and an output
// attaining it (the factorisation above). Two-state chains take O(n·m)
// time for any n; chains with more states enumerate outputs and are limited
// to short lengths (the error says how far). Loss is +Inf when some output
// is possible under one hypothesis and impossible under the other.
func Worst(ch *markov.Chain, mech Mechanism, n int, know Knowledge) (Loss, error) {
	if n < 1 {
		return Loss{}, fmt.Errorf("bdp: length %d must be at least 1", n)
	}
	if n > MaxLength {
		return Loss{}, fmt.Errorf("bdp: length %d exceeds %d readings (memory grows with the length); the bound over every length (Limit, --length inf) covers it", n, MaxLength)
	}
	md, err := newModel(ch, mech)
	if err != nil {
		return Loss{}, err
	}
	J := n - 1
	if know == AllKnown {
		J = 0
	}
	sd, err := md.sides(J, know != NoneKnown)
	if err != nil {
		return Loss{}, err
	}
	ws := newWorstSearch(md, sd, n, know)
	if !ws.full && know == AnyKnown && n > maxQuadratic {
		return Loss{}, fmt.Errorf("bdp: some state has probability zero at some time t ≥ 2; the exact search for such chains is quadratic and limited to n ≤ %d", maxQuadratic)
	}
	k, mu := md.k, ws.mu
	best := Loss{Loss: math.NaN()}
	var bestI, bestA, bestB int
	var bestL, bestR choice
	for a := range k {
		for b := range k {
			if a == b {
				continue
			}
			cval, _ := md.center(a, b)
			if math.IsNaN(cval) {
				continue
			}
			prefL, prefR := ws.prefixes(a, b)
			for i := 1; i <= n; i++ {
				if mu[i][a] == 0 || mu[i][b] == 0 {
					continue
				}
				L := ws.left(i, a, b, prefL)
				R := ws.right(i, a, b, prefR)
				if math.IsNaN(L.val) || math.IsNaN(R.val) {
					continue
				}
				if tot := cval + L.val + R.val; math.IsNaN(best.Loss) || tot > best.Loss {
					best.Loss = tot
					bestI, bestA, bestB, bestL, bestR = i, a, b, L, R
				}
			}
		}
	}
	if math.IsNaN(best.Loss) {
		return Loss{}, fmt.Errorf("bdp: no target has two values of positive probability; the loss is undefined")
	}
	best.Length = n
	best.Attained = best.Loss
	md.witness(&best, sd, bestI, bestA, bestB, bestL, bestR, n)
	return best, nil
}

// worstSearch is what Worst's search over targets and known readings needs
// for one chain length n.
type worstSearch struct {
	md   *model
	sd   *sides
	n    int
	know Knowledge
	pw   [][][]float64 // P^d for d = 0..n
	mu   [][]float64   // μ_t = P(X_t = ·) for t = 1..n
	full bool          // every state has positive probability at every t ≥ 2
}

func newWorstSearch(md *model, sd *sides, n int, know Knowledge) *worstSearch {
	ws := &worstSearch{md: md, sd: sd, n: n, know: know, pw: md.powers(n), mu: md.marginals(n), full: true}
	for t := 2; t <= n; t++ {
		for _, p := range ws.mu[t] {
			ws.full = ws.full && p > 0
		}
	}
	return ws
}

// Bridged side values, by distance d ≥ 1 (left: known value u at i−d;
// right: known value w at i+d), for the pair (a, b); NaN when the
// conditioning has probability zero under a or b.

func (ws *worstSearch) leftVal(d, u, a, b int) float64 {
	pw := ws.pw
	if pw[d][u][a] == 0 || pw[d][u][b] == 0 {
		return math.NaN()
	}
	return ws.sd.leftAt[u].at(d-1, a, b) - (math.Log(pw[d][u][a]) - math.Log(pw[d][u][b]))
}

func (ws *worstSearch) rightVal(d, w, a, b int) float64 {
	pw := ws.pw
	if pw[d][a][w] == 0 || pw[d][b][w] == 0 {
		return math.NaN()
	}
	return ws.sd.rightAt[w].at(d-1, a, b) - (math.Log(pw[d][a][w]) - math.Log(pw[d][b][w]))
}

// prefixes returns the prefix maxima over distance of the bridged options
// for the pair (a, b) (nil unless know is AnyKnown). Left options at
// distance d are feasible for every target i ≥ d+2 when full (the known
// reading sits at t = i−d ≥ 2); the known reading at t = 1 (d = i−1) is
// checked against q by left.
func (ws *worstSearch) prefixes(a, b int) (prefL, prefR []choice) {
	if ws.know != AnyKnown {
		return nil, nil
	}
	n := ws.n
	prefL = make([]choice, n)
	prefR = make([]choice, n)
	prefL[0], prefR[0] = choice{val: math.NaN()}, choice{val: math.NaN()}
	for d := 1; d < n; d++ {
		prefL[d], prefR[d] = prefL[d-1], prefR[d-1]
		for u := range ws.md.k {
			if v := ws.leftVal(d, u, a, b); better(prefL[d], v) {
				prefL[d] = choice{v, d, u}
			}
			if v := ws.rightVal(d, u, a, b); better(prefR[d], v) {
				prefR[d] = choice{v, d, u}
			}
		}
	}
	return prefL, prefR
}

// left returns the best left option for target i and pair (a, b): no known
// reading, or the best feasible known reading before i.
func (ws *worstSearch) left(i, a, b int, prefL []choice) choice {
	k, mu, know := ws.md.k, ws.mu, ws.know
	L := choice{val: math.NaN()}
	if know != AllKnown || i == 1 {
		L = choice{val: ws.sd.leftFree.at(i-1, a, b) - (math.Log(mu[i][a]) - math.Log(mu[i][b]))}
	}
	switch {
	case know == AllKnown && i > 1:
		for u := range k {
			if mu[i-1][u] > 0 {
				if v := ws.leftVal(1, u, a, b); better(L, v) {
					L = choice{v, 1, u}
				}
			}
		}
	case know == AnyKnown && ws.full:
		if i >= 3 && better(L, prefL[i-2].val) {
			L = prefL[i-2]
		}
		if i >= 2 {
			for u := range k {
				if ws.md.q[u] > 0 {
					if v := ws.leftVal(i-1, u, a, b); better(L, v) {
						L = choice{v, i - 1, u}
					}
				}
			}
		}
	case know == AnyKnown:
		for d := 1; d < i; d++ {
			for u := range k {
				if mu[i-d][u] > 0 {
					if v := ws.leftVal(d, u, a, b); better(L, v) {
						L = choice{v, d, u}
					}
				}
			}
		}
	}
	return L
}

// right returns the best right option for target i and pair (a, b): no
// known reading, or the best known reading after i.
func (ws *worstSearch) right(i, a, b int, prefR []choice) choice {
	n, know := ws.n, ws.know
	R := choice{val: math.NaN()}
	if know != AllKnown || i == n {
		R = choice{val: ws.sd.rightFree.at(n-i, a, b)}
	}
	switch {
	case know == AllKnown && i < n:
		for w := range ws.md.k {
			if v := ws.rightVal(1, w, a, b); better(R, v) {
				R = choice{v, 1, w}
			}
		}
	case know == AnyKnown && i < n:
		if better(R, prefR[n-i].val) {
			R = prefR[n-i]
		}
	}
	return R
}

// witness fills in the adversary and output of a worst case: target i,
// pair (a, b), left and right choices, in a chain of length n.
func (md *model) witness(l *Loss, sd *sides, i, a, b int, L, R choice, n int) {
	adv := Adversary{Target: i, Secret: a, Alternative: b, Known: []Known{}}
	out := make([]int, n+2) // 1-based; 0 and n+1 unused
	lo, hi := 1, n
	leftSide, rightSide := sd.leftFree, sd.rightFree
	jl, jr := i-1, n-i
	if L.d > 0 {
		lo = i - L.d + 1
		adv.Known = append(adv.Known, Known{i - L.d, L.v})
		leftSide, jl = sd.leftAt[L.v], L.d-1
	}
	if R.d > 0 {
		hi = i + R.d - 1
		adv.Known = append(adv.Known, Known{i + R.d, R.v})
		rightSide, jr = sd.rightAt[R.v], R.d-1
	}
	// Left outputs are processed from lo upwards, right ones from hi down.
	for t, y := range leftSide.trace(jl, a, b) {
		out[lo+t] = y
	}
	for t, y := range rightSide.trace(jr, a, b) {
		out[hi-t] = y
	}
	_, out[i] = md.center(a, b)
	l.Adversary = adv
	l.Output = runs(out[lo : hi+1])
	for r := range l.Output {
		l.Output[r].From += lo
		l.Output[r].To += lo
	}
}

// runs run-length encodes ys with 0-based positions.
func runs(ys []int) []Run {
	var rs []Run
	for t, y := range ys {
		if len(rs) > 0 && rs[len(rs)-1].Symbol == y && rs[len(rs)-1].To == t-1 {
			rs[len(rs)-1].To = t
			continue
		}
		rs = append(rs, Run{From: t, To: t, Symbol: y})
	}
	return rs
}
