package mqm

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// oracle answers: what is the max-influence e(X_Q | X_i) of the quilt
// Quilt{a, b} of node i (1-based) in a chain of length T? It may return
// +Inf. Implementations must be monotone: for fixed i the influence does not
// increase when a or b grows (a farther quilt node is a garbling of a nearer
// one given X_i; an open end carries no information).
type oracle interface {
	influence(i, a, b int) float64
	// nodeMonotone reports that for fixed (a, b) with both ends closed, and
	// for left-only quilts, the influence does not increase with i, and the
	// set of secret pairs does not grow with i. The fast search needs it.
	nodeMonotone() bool
}

// ---------------------------------------------------------------- approx

// approxOracle implements docs/math.md §4.3 / [SWC16] Lemma B.4 (reversible) and
// [SWC17] Lemma 4.8 (general): with ρ(t) = exp(−g t) (reversible) or
// exp(−g t / 2) (general) and δ(t) = log((π_Θ+ρ(t))/(π_Θ−ρ(t))) (∞ when
// ρ(t) ≥ π_Θ), two-sided e ≤ δ(b) + 2δ(a), left-only 2δ(a), right-only δ(b).
type approxOracle struct {
	T          int
	piMin, gap float64
	reversible bool
	table      []float64              // δ(t) by t
	bmin       [len(rLevel)][]float64 // by level, least δ over blocks of rLevel distances (homogeneous.go)
	rHint      int                    // the last right-only distance found best
	stop       stop                   // ends the search when the caller's context ends (stop.go)
}

// Approx describes the class-level parameters used by the approx oracle.
type ApproxParams struct {
	PiMin      float64 `json:"pi_min"`     // π_Θ = min over θ, x of π_θ(x) (after safe shrink)
	Gap        float64 `json:"gap"`        // g_Θ (after safe shrink)
	Reversible bool    `json:"reversible"` // which bound: 1−SLEM(P) or eigengap of P·P*
}

// safeShrink is the relative amount by which π_Θ and g_Θ are decreased
// before use, so that eigen-solver and linear-solve rounding (≈1e-15) can
// only make the bound looser.
const safeShrink = 1e-9

// ApproxParameters computes π_Θ and g_Θ for a class. Every chain must be
// irreducible and aperiodic; the reversible bound is used only when every
// chain is reversible.
func ApproxParameters(class *markov.Class) (ApproxParams, error) {
	rev := true
	erg := make([]*markov.Ergodic, len(class.Chains))
	for i, ch := range class.Chains {
		// one ergodicity check, one π and one reversibility test per
		// chain (Ergodic: the values of CheckErgodic, Stationary and
		// Reversible), shared by the gap
		e, err := ch.Ergodic()
		if err != nil {
			if errors.Is(err, markov.ErrNotIrreducible) || errors.Is(err, markov.ErrPeriodic) {
				return ApproxParams{}, fmt.Errorf("approx needs irreducible, aperiodic chains: chain %d: %w", i, err)
			}
			return ApproxParams{}, fmt.Errorf("chain %d: %w", i, err)
		}
		erg[i] = e
		rev = rev && e.Reversible
	}
	p := ApproxParams{PiMin: math.Inf(1), Gap: math.Inf(1), Reversible: rev}
	for i, e := range erg {
		for _, v := range e.Pi {
			p.PiMin = math.Min(p.PiMin, v)
		}
		var g float64
		var err error
		if rev {
			g, err = e.Eigengap()
		} else {
			g, err = e.PPStarGap()
		}
		if err != nil {
			return ApproxParams{}, fmt.Errorf("chain %d: %w", i, err)
		}
		p.Gap = math.Min(p.Gap, g)
	}
	p.PiMin *= 1 - safeShrink
	p.Gap = math.Max(0, p.Gap*(1-safeShrink)-1e-15)
	return p, nil
}

func (o *approxOracle) delta(t int) float64 {
	rate := o.gap
	if !o.reversible {
		rate /= 2
	}
	rho := math.Exp(-rate * float64(t))
	if rho >= o.piMin {
		return math.Inf(1)
	}
	return math.Log((o.piMin + rho) / (o.piMin - rho))
}

func (o *approxOracle) influence(i, a, b int) float64 {
	return o.eval(a, b, a == i, b == o.T-i+1)
}

// eval is the bound for closed distances a, b with the open ends stated
// explicitly (the bound does not depend on the node).
func (o *approxOracle) eval(a, b int, leftOpen, rightOpen bool) float64 {
	o.stop.check()
	switch {
	case leftOpen && rightOpen:
		return 0
	case leftOpen:
		return o.delta(b)
	case rightOpen:
		return 2 * o.delta(a)
	}
	return o.delta(b) + 2*o.delta(a)
}

func (o *approxOracle) nodeMonotone() bool { return true }

// ---------------------------------------------------------------- exact

// exactOracle implements docs/math.md §4.2 for one chain θ. With r = i−a and s = i+b,
//
//	e(a,b;i) = max_{x≠x'} [ N_i(x,x') + L_a(x,x') + R_b(x,x') ]
//
// where N_i(x,x') = log(q_i(x')/q_i(x)) (for "any": max_w log(P^{i−1}(w,x') /
// P^{i−1}(w,x))), L_a(x,x') = max_{u ∈ supp q_r} log(P^a(u,x)/P^a(u,x')) and
// R_b(x,x') = max_v log(P^b(x,v)/P^b(x',v)), pairs (x, x') ranging over
// states with positive probability at time i. Left-only quilts drop R,
// right-only quilts keep only R (no N term: P(X_s|X_i) = P^b(X_i, ·)).
// The terms are tabulated per distance d from P^d, so every evaluation is
// O(k²).
type exactOracle struct {
	ch   *markov.Chain
	T, k int
	pi   []float64 // stationary initial distribution (InitStationary)

	// pw gives P^d with its exact zero pattern (powers.go).
	pw *powers

	// Supports of the marginal at time t (1-based) for given/any q:
	// supp_{t+1} = successors(supp_t). The sequence is eventually periodic;
	// supps holds the distinct sets, suppIdx(t) finds a time's set.
	supps      [][]bool
	suppPre    int // supps[0..suppPre−1] are times 1..suppPre
	suppPeriod int // then the cycle supps[suppPre..] repeats with this period

	left  map[[2]int][]float64 // (d, support id) → L_d table (k×k, row x, col x')
	right [][]float64          // d → R_d table
	// the same before the logarithm (exp L_d, exp R_d): the stationary
	// path works with ratios and takes one logarithm per influence
	leftR   map[[2]int][]float64
	rightR  [][]float64
	scratch scratch

	// N term cache by node (given / any); for stationary it is constant.
	nodeCache map[int][]float64
	// last marginal q_i computed (given q), so a sequential scan costs one
	// vector-matrix product per node.
	lastI  int
	lastQi []float64
	// fixedAt > 0: the computed marginal q_i is a float fixed point
	// (q_i·P == q_i bit for bit) from time fixedAt on, equal to fixedQ.
	fixedAt int
	fixedQ  []float64
	// nan records the first undefined influence met (an error, never a skip).
	nan error
	// evals counts influence evaluations; past budget (> 0) over() says
	// so, and the searches give up with a partial result.
	evals, budget int
	// stop ends the search when the caller's context ends (stop.go).
	stop stop
	// memo of influences for node-independent evaluation (stationary):
	// key (a, b) with 0 meaning open.
	memo *memoTable
	// stationary two-sided fast path: the secret pairs (x·k+x') and, per
	// left distance a, N + L_a over them (the node term is constant).
	pairs []int32
	nr    []float64  // π(x')/π(x) over the pairs
	nl    []pairTerm // e^{N+L_a} over the pairs, by a (v nil: not yet)
	rp    []pairTerm // e^{R_b} over the pairs, by b
	// lazy terms (lazy.go): 0 unknown, 1 usable, 2 not; by distance
	lazyState  int
	clean      []uint8        // by d: 0 unknown, 1 P^d ≥ tiny everywhere, 2 not
	lz         [4][]*lazyTerm // by kind, by d
	w          []float64      // 1/π: weights of the right terms' bounds
	nlAny      []*lazyTerm    // "any": recent e^{N_i + L_a} (nodeLeft)
	nlNext     int
	pos        []int32   // "any": index of each pair in pairs
	rmax       []float64 // by d: rightMax (0: not yet)
	suf1       []float64
	px, py     []int32       // the states of each pair (setPairXY)
	recips     []*recipEntry // lazy.go: reciprocals of recent powers
	recipClock int
	cand       []int32 // lazy.go: blocks to visit
	pre        *pre    // lazy.go: what the powers' producer computed
}

func newExactOracle(ch *markov.Chain, T int) (*exactOracle, error) {
	o := &exactOracle{ch: ch, T: T, k: ch.K(), left: map[[2]int][]float64{}, leftR: map[[2]int][]float64{}, nodeCache: map[int][]float64{}}
	o.pw = newPowers(ch)
	o.pw.charge = o.stop.spend
	o.scratch.stop = &o.stop
	switch ch.Init {
	case markov.InitStationary:
		pi, err := ch.Stationary()
		if err != nil {
			return nil, err
		}
		o.pi = pi
		o.memo = &memoTable{far: map[[2]int]float64{}}
		o.supps = [][]bool{positive(pi)}
		o.suppPre, o.suppPeriod = 0, 1
	case markov.InitGiven:
		o.initSupports(positive(ch.Q))
	case markov.InitAny:
		all := make([]bool, o.k)
		for i := range all {
			all[i] = true
		}
		o.initSupports(all)
	}
	return o, nil
}

func positive(p []float64) []bool {
	s := make([]bool, len(p))
	for i, v := range p {
		s[i] = v > 0
	}
	return s
}

// initSupports computes supp_1 = start, supp_{t+1} = successors(supp_t)
// until a set repeats (at most 2^k steps, in practice ≤ k+period).
func (o *exactOracle) initSupports(start []bool) {
	seen := map[string]int{}
	cur := start
	for {
		key := fmt.Sprint(cur)
		if j, ok := seen[key]; ok {
			o.suppPre = j
			o.suppPeriod = len(o.supps) - j
			return
		}
		seen[key] = len(o.supps)
		o.supps = append(o.supps, cur)
		next := make([]bool, o.k)
		for u, in := range cur {
			if !in {
				continue
			}
			for v, p := range o.ch.P[u] {
				if p > 0 {
					next[v] = true
				}
			}
		}
		cur = next
	}
}

// suppID returns the index into supps of the support at time t ≥ 1.
func (o *exactOracle) suppID(t int) int {
	j := t - 1
	if j < o.suppPre {
		return j
	}
	return o.suppPre + (j-o.suppPre)%o.suppPeriod
}

// logOf turns a folded maximum into the log term (−Inf when no outcome had
// positive probability under either hypothesis).
func logOf(m float64, seen bool) float64 {
	if !seen {
		return math.Inf(-1)
	}
	return math.Log(m)
}

// leftRatio returns exp L_d for support id s: max_{u∈supp}
// P^d(u,x)/P^d(u,x') at [x*k+x'] (ratioTable over the columns of P^d,
// transposed and restricted to the support), cached: the stationary path
// works with these.
func (o *exactOracle) leftRatio(d, s int) []float64 {
	key := [2]int{d, s}
	if t, ok := o.leftR[key]; ok {
		return t
	}
	t := o.leftTable(d, s)
	o.leftR[key] = t
	return t
}

func (o *exactOracle) leftTable(d, s int) []float64 {
	Pd, supp, k := o.pw.at(d), o.supps[s], o.k
	sc := &o.scratch
	sc.us = sc.us[:0]
	for u := range k {
		if supp[u] {
			sc.us = append(sc.us, u)
		}
	}
	n := len(sc.us)
	o.stop.spend(float64(k) * float64(k) * float64(n)) // the ratio table
	sc.cols, sc.pats = grow(sc.cols, k), grow(sc.pats, k)
	sc.flat, sc.flatZ = grow(sc.flat, k*n), grow(sc.flatZ, k*n)
	for x := range k {
		sc.cols[x], sc.pats[x] = sc.flat[x*n:(x+1)*n], sc.flatZ[x*n:(x+1)*n]
		for j, u := range sc.us {
			sc.cols[x][j], sc.pats[x][j] = Pd.v[u][x], Pd.z[u][x]
		}
	}
	return sc.ratioTable(sc.cols, sc.pats)
}

// grow returns s resliced to length n, reallocated only when too short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// scratch holds the buffers of table building, reused from table to
// table (an oracle is used by one goroutine).
type scratch struct {
	us         []int
	cols       [][]float64
	pats       [][]bool
	flat, invs []float64
	flatZ      []bool
	inv        [][]float64
	stop       *stop // the oracle's: ratioTable's rows check it (k² work each)
}

// rightRatio returns exp R_d: max_v P^d(x,v)/P^d(x',v) at [x*k+x'],
// cached for the stationary path.
func (o *exactOracle) rightRatio(d int) []float64 {
	for len(o.rightR) <= d {
		o.rightR = append(o.rightR, nil)
	}
	if o.rightR[d] == nil {
		Pd := o.pw.at(d)
		o.stop.spend(o.k3())
		o.rightR[d] = o.scratch.ratioTable(Pd.v, Pd.z)
	}
	return o.rightR[d]
}

// k3 is k³, the work of one ratio table (work.go).
func (o *exactOracle) k3() float64 { k := float64(o.k); return k * k * k }

// leftTerm returns L_d for support id s: L[x*k+x'] = max_{u∈supp}
// log(P^d(u,x)/P^d(u,x')), for the general path.
func (o *exactOracle) leftTerm(d, s int) []float64 {
	key := [2]int{d, s}
	if t, ok := o.left[key]; ok {
		return t
	}
	t := logs(o.leftTable(d, s))
	o.left[key] = t
	return t
}

// rightTerm returns R_d: R[x*k+x'] = max_v log(P^d(x,v)/P^d(x',v)), for
// the general path.
func (o *exactOracle) rightTerm(d int) []float64 {
	for len(o.right) <= d {
		o.right = append(o.right, nil)
	}
	if o.right[d] == nil {
		Pd := o.pw.at(d)
		o.stop.spend(o.k3())
		o.right[d] = logs(o.scratch.ratioTable(Pd.v, Pd.z))
	}
	return o.right[d]
}

// logs replaces the ratios by their logarithms, in place (log 0 = −Inf:
// no outcome, or an impossible numerator).
func logs(r []float64) []float64 {
	for j, x := range r {
		r[j] = math.Log(x)
	}
	return r
}

// nodeTerm returns N_i: N[x*k+x'] = log(q_i(x')/q_i(x)), or NaN when the
// pair is not a secret pair at time i (x = x' or a zero-probability value).
func (o *exactOracle) nodeTerm(i int) []float64 {
	if o.ch.Init == markov.InitStationary {
		i = 1 // q_i = π for every i
	}
	if st := o.stable(); st > 0 && i >= st {
		i = st // the same marginal and support at every later time
	}
	if t, ok := o.nodeCache[i]; ok {
		return t
	}
	k := o.k
	t := make([]float64, k*k)
	supp := o.supps[o.suppID(i)]
	var qi []float64
	var Pi power
	switch o.ch.Init {
	case markov.InitStationary:
		qi = o.pi
	case markov.InitGiven:
		qi = o.marginal(i)
	case markov.InitAny:
		Pi = o.pw.at(i - 1)
	}
	for x := range k {
		for y := range k {
			if x == y || !supp[x] || !supp[y] {
				t[x*k+y] = math.NaN()
				continue
			}
			if qi != nil {
				// x and y are structurally possible at time i: a marginal
				// below tiny has lost precision to underflow (powers.go).
				m, _ := ratioBound(0, false, qi[y], qi[x], true, true)
				t[x*k+y] = math.Log(m)
				continue
			}
			// Supremum over initial distributions (docs/math.md §4.2, [SWC17] App. C.4):
			// q concentrating on w gives the ratio P^{i−1}(w,x')/P^{i−1}(w,x).
			m, seen := 0.0, false
			for w := range k {
				m, seen = ratioBound(m, seen, Pi.v[w][y], Pi.v[w][x], Pi.z[w][y], Pi.z[w][x])
			}
			t[x*k+y] = logOf(m, seen)
		}
	}
	if len(o.nodeCache) > 4096 {
		clear(o.nodeCache)
	}
	o.nodeCache[i] = t
	return t
}

// marginal returns q_i = q P^{i−1}. Sequential callers hit the cache of the
// previous node.
func (o *exactOracle) marginal(i int) []float64 {
	var q []float64
	switch {
	case o.fixedAt > 0 && i >= o.fixedAt:
		return o.fixedQ
	case o.lastQi != nil && i == o.lastI:
		q = o.lastQi
	case o.lastQi != nil && i == o.lastI+1:
		q = vecMat(o.lastQi, o.ch.P)
		if slices.Equal(q, o.lastQi) {
			// A float fixed point: every later marginal is the same
			// computation on the same input.
			o.fixedAt, o.fixedQ = o.lastI, o.lastQi
		}
	case o.lastQi != nil && i > o.lastI:
		// a reading after a gap: q_i = q_last · P^{i−last}
		q = vecMat(o.lastQi, o.pw.at(i-o.lastI).v)
	default:
		q = vecMat(o.ch.Q, o.pw.at(i-1).v)
	}
	o.lastI, o.lastQi = i, q
	return q
}

func vecMat(q []float64, P [][]float64) []float64 {
	out := make([]float64, len(q))
	for u, w := range q {
		if w == 0 {
			continue
		}
		for v, p := range P[u] {
			out[v] += w * p
		}
	}
	return out
}

// allowance bounds the float64 error of an influence built from P^a and
// P^b: every entry of P^d carries relative error at most ≈ d·(k+1)·u
// (non-negative products and sums, u = 2^−53), a log-ratio of two entries at
// most twice that, and the N term (a linear solve or a power) ≈ 1e-13.
func (o *exactOracle) allowance(a, b int) float64 {
	const u = 0x1p-53
	return 1e-12 + 4*float64(a+b+1)*float64(o.k+1)*u
}

func (o *exactOracle) over() bool { return o.budget > 0 && o.evals > o.budget }

func (o *exactOracle) influence(i, a, b int) float64 {
	return o.eval(i, a, b, a == i, b == o.T-i+1)
}

// eval is the influence of the quilt at distances (a, b) around node i with
// the open ends stated explicitly (a or b is ignored on an open side).
func (o *exactOracle) eval(i, a, b int, leftOpen, rightOpen bool) float64 {
	k := o.k
	o.evals++
	o.stop.check()
	if leftOpen && rightOpen {
		return 0
	}
	var key [2]int
	if o.memo != nil {
		if !leftOpen {
			key[0] = a
		}
		if !rightOpen {
			key[1] = b
		}
		if e, ok := o.memo.get(key); ok {
			return e
		}
	}
	if o.memo != nil {
		e := o.stationary(a, b, leftOpen, rightOpen)
		o.memo.set(key, e)
		return e
	}
	if o.ch.Init == markov.InitAny && o.anyLazyOK() {
		if m, ok := o.anyLazy(i, a, b, leftOpen, rightOpen); ok {
			if leftOpen {
				a = 0
			}
			if rightOpen {
				b = 0
			}
			return max(math.Log(m), 0) + o.allowance(a, b)
		}
	}
	N := o.nodeTerm(i)
	var L, R []float64
	if !leftOpen {
		L = o.leftTerm(a, o.suppID(i-a))
	}
	if !rightOpen {
		R = o.rightTerm(b)
	}
	e := 0.0 // influence is never negative; also covers k = 1 (no pairs)
	for x := range k {
		for y := range k {
			n := N[x*k+y]
			if math.IsNaN(n) {
				continue
			}
			v := 0.0
			if !leftOpen {
				v = n + L[x*k+y]
			}
			if !rightOpen {
				v += R[x*k+y]
			}
			if math.IsNaN(v) {
				// ∞ − ∞ cannot arise from valid chains (see leftTerm);
				// never skip it: the search reports it as an error.
				o.nan = fmt.Errorf("influence of the quilt (%d, %d) around time %d is undefined (NaN) for states %q, %q", a, b, i, o.ch.States[x], o.ch.States[y])
				return math.Inf(1)
			}
			if v > e {
				e = v
			}
		}
	}
	if !math.IsInf(e, 1) {
		aa, bb := a, b
		if leftOpen {
			aa = 0
		}
		if rightOpen {
			bb = 0
		}
		e += o.allowance(aa, bb)
	}
	if o.memo != nil {
		o.memo.set(key, e)
	}
	return e
}

func (o *exactOracle) nodeMonotone() bool { return o.ch.Init != markov.InitGiven }

// stable returns a time from which every term of a fixed-initial chain is
// the same at every later time — the marginal is a float fixed point and
// the support sequence has reached period 1 — or 0 when none is known yet.
// From there the influence of a quilt depends only on its distances, so a
// quilt proving one node proves every later node it fits (scan).
func (o *exactOracle) stable() int {
	if o.ch.Init != markov.InitGiven || o.fixedAt == 0 || o.suppPeriod != 1 {
		return 0
	}
	return max(o.fixedAt, o.suppPre+1)
}

// Influence returns the max-influence e(X_Q | X_i) ([SWC17] Def. 4.1) of
// the quilt X_Q = {X_{i−a}, X_{i+b}} on the node X_i at time i ≥ 1 of chain
// ch, maximised over the secret pairs possible at time i; a = 0 means no
// left node, b = 0 no right node (a < i). It is the oracle's value,
// rounded up by the same allowance the quilt search uses, so every package
// that needs an influence (compose's gaps, the search) agrees on it. +Inf
// when a ratio is unbounded. Many influences of one chain are cheaper
// through Tables.Influence.
func Influence(ch *markov.Chain, i, a, b int) (float64, error) {
	return (*Tables)(nil).Influence(ch, i, a, b)
}

// memoTable holds a stationary chain's influences by (a, b), 0 meaning
// open: rows of a slice for distances below memoDense (the walk asks for
// the same few hundred distances hundreds of thousands of times; a map
// lookup was a tenth of the "any" walk), a map beyond.
type memoTable struct {
	rows [][]float64 // rows[a][b], NaN: not known
	far  map[[2]int]float64
}

const memoDense = 1 << 12

func (m *memoTable) get(key [2]int) (float64, bool) {
	a, b := key[0], key[1]
	if a >= memoDense || b >= memoDense {
		e, ok := m.far[key]
		return e, ok
	}
	if a < len(m.rows) && b < len(m.rows[a]) {
		e := m.rows[a][b]
		return e, e == e
	}
	return 0, false
}

func (m *memoTable) set(key [2]int, e float64) {
	a, b := key[0], key[1]
	if a >= memoDense || b >= memoDense || e != e {
		m.far[key] = e
		return
	}
	for len(m.rows) <= a {
		m.rows = append(m.rows, nil)
	}
	row := m.rows[a]
	if len(row) <= b {
		n := max(b+1, 2*len(row), 16)
		grown := make([]float64, n)
		copy(grown, row)
		for j := len(row); j < n; j++ {
			grown[j] = math.NaN()
		}
		m.rows[a] = grown
	}
	m.rows[a][b] = e
}
