package pairwise

import (
	"math"
	"slices"
	"sync"
)

// The best transport plan of docs/math.md §8.10 (“The best plan and
// concrete lower bounds”): for rows p = P(a,·), q = P(a',·) and the cost
// matrix G (G_jj = 1, G_ij = R·Λ_ij ≥ 1 off the diagonal), the least t
// with a plan γ ≥ 0 of row sums p and Σ_i γ_ij·G_ij ≤ t·q_j for every
// column j. Any feasible plan proves the ratio bound m(a) ≤ t·m(a') for
// every message m of the cone {v_i ≤ G_ij v_j}; so the optimum matters
// only for tightness, while the returned t must be backed by a plan that
// is verified in floating point with the rounding accounted for
// (certifyPlan). The LP is solved by a revised primal simplex on the
// transport structure restricted to the supports of p and q:
//
//	variables  γ_ij (p_i > 0, q_j > 0, G_ij finite), s_j ≥ 0 (slack of column j), t
//	row i:     Σ_j γ_ij            = p_i
//	column j:  Σ_i G_ij γ_ij + s_j − q_j·t = 0
//	minimise   t.
//
// Columns with q_j = 0 can receive nothing (G_ij ≥ 1 > 0), rows with
// p_i = 0 send nothing; banded chains give small supports, hence small
// bases. The basis inverse is kept dense (m = |supp p| + |supp q| ≤ 2k).
// The start is a greedy plan near the optimum (crashFill), so a dense
// 51-state pair needs some 6 pivots; the factorisation of the starting
// basis, O(m³), is then the larger part of the cost.

// lpRatio returns the smallest t (rounded up, never below the true minimum) such that a plan γ ≥ 0
// with row sums p exists with Σ_i γ_ij·G[i*k+j] ≤ t·q[j] for every column j; G is k×k row-major with
// G[j*k+j] = 1. ok=false if it could not solve (caller falls back to the closed form).
func lpRatio(p, q, G []float64) (t float64, ok bool) {
	s := lpPool.Get().(*lpSolver)
	t, ok = s.ratio(p, q, G)
	s.p, s.q, s.G = nil, nil, nil
	lpPool.Put(s)
	return t, ok
}

// lpPool recycles solvers' buffers (a dense k = 51 pair needs some 250 kB)
// across calls and goroutines.
var lpPool = sync.Pool{New: func() any { return new(lpSolver) }}

// lpSolver solves lpRatio's LP with reusable buffers; its zero value is
// ready. It keeps the last optimal basis: ratioWarm starts from it when
// the supports are unchanged (the fixed-point sweeps solve the same pair
// again with a slightly different G), which needs few pivots. A solver is
// not safe for concurrent use.
type lpSolver struct {
	p, q, G []float64 // the current call's arguments
	k       int
	rows    []int // supp p
	cols    []int // supp q
	np, nq  int
	m       int       // np + nq constraints
	binv    []float64 // m×m basis inverse, row-major
	basis   []int     // variable in each basis position
	inB     []int     // position+1 of each variable in the basis, 0 if not basic
	xb      []float64 // values of the basic variables
	y       []float64 // duals
	w       []float64 // B⁻¹·(entering column)
	gam     []float64 // plan, np×nq
	wt      []float64 // Devex reference weights, one per variable
	ord     []int32   // crashFill: each row's columns by increasing cost
	fcp     []float64 // crashFill: spare capacity of each column
	ftight  []bool    // crashFill: columns that are full (slack nonbasic)
	scr     []float64 // scratch for factorisation (m×2m)
	pivots  int       // pivots of the last solve (tests, benchmarks)
	from    lpBasis   // the basis ratioFrom starts from
	warmOK  bool      // basis holds an optimal basis for supports rows, cols
}

// Variable numbering: γ for row position r and column position c is
// r*nq + c; the slack of column position c is np*nq + c; t is np*nq + nq.

const (
	lpMaxPivotsPer  = 50    // pivots allowed per constraint before giving up
	lpRefactorEvery = 400   // pivots between refactorisations of B
	lpDegenerate    = 20    // degenerate pivots in a row before Bland's rule
	lpTolD          = 1e-11 // relative reduced-cost tolerance
	lpTolPivot      = 1e-9  // relative pivot tolerance
)

// ratio is lpRatio from a cold start.
func (s *lpSolver) ratio(p, q, G []float64) (float64, bool) {
	s.warmOK = false
	return s.solve(p, q, G)
}

// ratioWarm is lpRatio started from the previous call's optimal basis when
// p and q have the same supports as then and that basis is still feasible
// for G; otherwise it starts cold. The result is certified as lpRatio's.
func (s *lpSolver) ratioWarm(p, q, G []float64) (float64, bool) {
	return s.solve(p, q, G)
}

// lpBasis is an optimal basis of lpRatio's LP kept for a warm start, in
// terms of states so that it survives other solves: γ_ij is i·k+j, the
// slack of column j is k·k+j, t is k·k+k.
type lpBasis []int32

// savedBasis returns the optimal basis of the last successful solve (nil
// if there is none); keep one per pair to restart each pair warm.
func (s *lpSolver) savedBasis() lpBasis {
	if !s.warmOK {
		return nil
	}
	k, npq := s.k, s.np*s.nq
	out := make(lpBasis, s.m)
	for pos, v := range s.basis {
		switch {
		case v < npq:
			out[pos] = int32(s.rows[v/s.nq]*k + s.cols[v%s.nq])
		case v < npq+s.nq:
			out[pos] = int32(k*k + s.cols[v-npq])
		default:
			out[pos] = int32(k*k + k)
		}
	}
	return out
}

// ratioFrom is lpRatio started from a basis saved by savedBasis after a
// solve of the same rows p, q (G may have changed): it needs few pivots
// when the optimal basis has not moved. A basis that does not fit the
// supports or is not feasible for G is dropped for a cold start; the
// result is certified as lpRatio's.
func (s *lpSolver) ratioFrom(p, q, G []float64, b lpBasis) (float64, bool) {
	s.warmOK = false
	s.from = b
	t, ok := s.solve(p, q, G)
	s.from = nil
	return t, ok
}

// loadBasis sets the basis from s.from; false when it does not fit.
func (s *lpSolver) loadBasis() bool {
	k := s.k
	if len(s.from) != s.m {
		return false
	}
	rowPos := func(i int) int {
		r, found := slices.BinarySearch(s.rows, i)
		if !found {
			return -1
		}
		return r
	}
	colPos := func(j int) int {
		c, found := slices.BinarySearch(s.cols, j)
		if !found {
			return -1
		}
		return c
	}
	clear(s.inB)
	for pos, e := range s.from {
		var v int
		switch x := int(e); {
		case x >= 0 && x < k*k:
			r, c := rowPos(x/k), colPos(x%k)
			if r < 0 || c < 0 {
				return false
			}
			v = r*s.nq + c
		case x >= k*k && x < k*k+k:
			c := colPos(x - k*k)
			if c < 0 {
				return false
			}
			v = s.slackVar(c)
		case x == k*k+k:
			v = s.tVar()
		default:
			return false
		}
		if s.inB[v] != 0 {
			return false
		}
		s.basis[pos] = v
		s.inB[v] = pos + 1
	}
	return true
}

func (s *lpSolver) tVar() int          { return s.np*s.nq + s.nq }
func (s *lpSolver) slackVar(c int) int { return s.np*s.nq + c }

func (s *lpSolver) solve(p, q, G []float64) (float64, bool) {
	k := len(p)
	s.pivots = 0
	if k == 0 || len(q) != k || len(G) != k*k {
		return 0, false
	}
	for i := range k {
		if !(p[i] >= 0) || !(q[i] >= 0) || math.IsInf(p[i], 0) || math.IsInf(q[i], 0) {
			return 0, false
		}
	}
	// Only the entries between the supports enter the LP: check those.
	for i := range k {
		if p[i] == 0 {
			continue
		}
		for j := range k {
			if q[j] == 0 {
				continue
			}
			g := G[i*k+j]
			if math.IsNaN(g) || (i == j && g != 1) || g < 1 {
				return 0, false
			}
		}
	}
	s.p, s.q, s.G = p, q, G
	warm := s.warmOK && s.k == k && s.sameSupports()
	s.warmOK = false
	if !warm || s.from != nil {
		s.k = k
		s.rows, s.cols = s.rows[:0], s.cols[:0]
		for i := range k {
			if p[i] > 0 {
				s.rows = append(s.rows, i)
			}
			if q[i] > 0 {
				s.cols = append(s.cols, i)
			}
		}
		s.np, s.nq = len(s.rows), len(s.cols)
		s.m = s.np + s.nq
		if s.np == 0 || s.nq == 0 {
			return 0, false
		}
		s.alloc()
	}
	// A row that can send nowhere: no plan, only the trivial bound.
	for _, i := range s.rows {
		finite := false
		for _, j := range s.cols {
			if !math.IsInf(G[i*k+j], 1) {
				finite = true
				break
			}
		}
		if !finite {
			return math.Inf(1), true
		}
	}
	if s.from != nil {
		warm = s.loadBasis()
	}
	if warm {
		warm = s.factor() && s.setX() && s.primalFeasible()
	}
	if !warm && !(s.crashFill() && s.factor() && s.setX() && s.primalFeasible()) &&
		!(s.crashBasis() && s.factor() && s.setX() && s.primalFeasible()) {
		s.coldBasis()
		if !s.factor() || !s.setX() {
			return 0, false
		}
	}
	if !s.iterate() {
		return 0, false
	}
	t, ok := s.certify()
	s.warmOK = ok
	return t, ok
}

func (s *lpSolver) sameSupports() bool {
	r, c := 0, 0
	for i := range s.k {
		if s.p[i] > 0 {
			if r >= len(s.rows) || s.rows[r] != i {
				return false
			}
			r++
		}
		if s.q[i] > 0 {
			if c >= len(s.cols) || s.cols[c] != i {
				return false
			}
			c++
		}
	}
	return r == len(s.rows) && c == len(s.cols)
}

func (s *lpSolver) alloc() {
	m := s.m
	nv := s.np*s.nq + s.nq + 1
	grow := func(b []float64, n int) []float64 {
		if cap(b) < n {
			return make([]float64, n)
		}
		return b[:n]
	}
	s.binv = grow(s.binv, m*m)
	s.xb = grow(s.xb, m)
	s.y = grow(s.y, m)
	s.w = grow(s.w, m)
	s.gam = grow(s.gam, s.np*s.nq)
	s.scr = grow(s.scr, m*2*m)
	if cap(s.basis) < m {
		s.basis = make([]int, m)
	}
	s.basis = s.basis[:m]
	if cap(s.inB) < nv {
		s.inB = make([]int, nv)
	}
	s.inB = s.inB[:nv]
	s.wt = grow(s.wt, nv)
	if cap(s.ord) < s.np*s.nq {
		s.ord = make([]int32, s.np*s.nq)
	}
	s.ord = s.ord[:s.np*s.nq]
	s.fcp = grow(s.fcp, s.nq)
	if cap(s.ftight) < s.nq {
		s.ftight = make([]bool, s.nq)
	}
	s.ftight = s.ftight[:s.nq]
}

// coldBasis sets a feasible starting basis: every row sends all its mass
// to one column (its own when q_i > 0, else the cheapest G_ij/q_j), t is
// the largest resulting column load over q, and the other columns' slacks
// take up the rest.
func (s *lpSolver) coldBasis() {
	k, G := s.k, s.G
	clear(s.inB)
	loads := s.w // scratch, len m ≥ nq
	clear(loads)
	c := 0 // cols is sorted: walk it along rows
	for r, i := range s.rows {
		for c < s.nq && s.cols[c] < i {
			c++
		}
		best := -1
		if c < s.nq && s.cols[c] == i {
			best = c
		} else {
			bv := math.Inf(1)
			for cc, j := range s.cols {
				if v := G[i*k+j] / s.q[j]; v < bv {
					bv, best = v, cc
				}
			}
		}
		v := r*s.nq + best
		s.basis[r] = v
		s.inB[v] = r + 1
		loads[best] += G[i*k+s.cols[best]] * s.p[i]
	}
	worst, wv := 0, -1.0
	for c, j := range s.cols {
		if v := loads[c] / s.q[j]; v > wv {
			wv, worst = v, c
		}
	}
	for c := range s.nq {
		v := s.slackVar(c)
		if c == worst {
			v = s.tVar()
		}
		s.basis[s.np+c] = v
		s.inB[v] = s.np + c + 1
	}
}

// crashFill sets a starting basis from a greedy plan at the least level
// t0 where it succeeds: every row keeps min(p_i, t0·q_i) on its own
// column, and the excess rows, in order, fill the other columns up to
// t0·q_j, cheapest G_ij first. Every placement either finishes its row
// or fills its column, so the plan's support is a forest (as in the
// north-west corner rule); with the full columns and the excess rows' own
// columns tight, t basic at the fullest other column and the remaining
// slacks basic, its basic solution at t = t0 is that plan. t0 is found by
// bisection between 1 and the closed form's t (or above, if the greedy
// fails there). false when no such basis is found; the caller checks the
// basic solution's feasibility.
func (s *lpSolver) crashFill() bool {
	k, G, p, q := s.k, s.G, s.p, s.q
	np, nq := s.np, s.nq
	for r, i := range s.rows {
		o := s.ord[r*nq : (r+1)*nq]
		for c := range o {
			o[c] = int32(c)
		}
		gi := G[i*k:]
		slices.SortFunc(o, func(x, y int32) int {
			gx, gy := gi[s.cols[x]], gi[s.cols[y]]
			switch {
			case gx < gy:
				return -1
			case gx > gy:
				return 1
			}
			return int(x - y)
		})
	}
	// each row's own column position, −1 if q_i = 0
	ownPos := s.w[:np] // scratch (as float64: exact for small ints)
	for r, i := range s.rows {
		ownPos[r] = -1
		if c, found := slices.BinarySearch(s.cols, i); found {
			ownPos[r] = float64(c)
		}
	}
	// greedy at level t0; with record it builds the basis
	greedy := func(t0 float64, record bool) bool {
		cp, tight := s.fcp, s.ftight
		for c, j := range s.cols {
			cp[c] = t0 * q[j]
			tight[c] = false
		}
		for r, i := range s.rows {
			if c := int(ownPos[r]); c >= 0 {
				if p[i] >= t0*q[i] {
					cp[c], tight[c] = 0, true
				} else {
					cp[c] -= p[i]
				}
			}
		}
		pos := 0
		put := func(v int) {
			s.basis[pos] = v
			s.inB[v] = pos + 1
			pos++
		}
		if record {
			clear(s.inB)
		}
		for r, i := range s.rows {
			ex := p[i]
			if c := int(ownPos[r]); c >= 0 {
				if record {
					put(r*nq + c)
				}
				ex -= t0 * q[i]
				if ex <= 0 {
					continue
				}
			}
			for _, c32 := range s.ord[r*nq : (r+1)*nq] {
				c := int(c32)
				if tight[c] || cp[c] <= 0 {
					continue
				}
				g := G[i*k+s.cols[c]]
				if math.IsInf(g, 1) {
					break // sorted: the rest are forbidden too
				}
				x := math.Min(ex, cp[c]/g)
				if record {
					if pos >= s.m {
						return false
					}
					put(r*nq + c)
				}
				ex -= x
				cp[c] -= g * x
				if cp[c] <= 1e-12*t0*q[s.cols[c]] {
					cp[c], tight[c] = 0, true
				}
				if ex <= 1e-12*p[i] {
					ex = 0
					break
				}
			}
			if ex > 0 {
				return false
			}
		}
		if !record {
			return true
		}
		worst, wv := -1, math.Inf(1)
		for c, j := range s.cols {
			if !tight[c] {
				if v := cp[c] / q[j]; v < wv {
					worst, wv = c, v
				}
			}
		}
		if worst < 0 {
			return false
		}
		for c := range nq {
			if tight[c] {
				continue
			}
			if pos >= s.m {
				return false
			}
			if c == worst {
				put(s.tVar())
			} else {
				put(s.slackVar(c))
			}
		}
		return pos == s.m
	}
	// the closed form's t as the first upper end
	hi := 1.0
	{
		num, den := 1.0, 0.0
		for _, j := range s.cols {
			g := 0.0
			for _, i := range s.rows {
				if e := p[i] - q[i]; e > 0 {
					g += e * G[i*k+j]
				}
			}
			if !(g > 0) || math.IsInf(g, 1) {
				return false
			}
			num += math.Min(p[j], q[j]) / g
			den += q[j] / g
		}
		hi = num / den * (1 + 1e-9)
	}
	ok := false
	for range 12 {
		if ok = greedy(hi, false); ok {
			break
		}
		hi *= 1.5
	}
	if !ok {
		return false
	}
	// the structure settles long before the level: the basic solution
	// then solves for t exactly
	lo := 1.0
	for range 40 {
		if hi-lo <= 1e-7*hi {
			break
		}
		mid := (lo + hi) / 2
		if greedy(mid, false) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return greedy(hi, true)
}

// crashBasis sets a starting basis near the closed-form plan: at a level
// t0 (first the closed form's t, docs/math.md §8.10) every row keeps
// min(p_i, t0·q_i) on its own column and sends its excess p_i − t0·q_i
// whole to one column with spare capacity (the cheapest that fits, else
// the roomiest); the excess rows' own columns are tight, t is basic at
// the column that binds and the other columns keep their slacks. With
// the assignment fixed, the basic solution is linear in t: a receiving
// column j carries a_j − b_j·t and binds at t_j = a_j/(q_j + b_j), so t is
// the largest t_j; when that t exceeds p_i/q_i for an excess row (its
// excess would turn negative) the assignment is redone at the new level,
// a few times at most. false when no consistent assignment is found (the
// caller then starts from coldBasis) or there is no excess at all.
func (s *lpSolver) crashBasis() bool {
	k, G, p, q := s.k, s.G, s.p, s.q
	np, nq := s.np, s.nq
	e := s.xb[:np] // scratch
	any := false
	for r, i := range s.rows {
		e[r] = math.Max(p[i]-q[i], 0)
		any = any || e[r] > 0
	}
	if !any {
		return false
	}
	num, den := 1.0, 0.0
	for _, j := range s.cols {
		g := 0.0
		for r, i := range s.rows {
			if e[r] > 0 {
				g += e[r] * G[i*k+j]
			}
		}
		if !(g > 0) || math.IsInf(g, 1) {
			return false
		}
		num += math.Min(p[j], q[j]) / g
		den += q[j] / g
	}
	t0 := num / den * (1 + 1e-9)
	cp := s.y[:nq]    // spare capacity at t0
	tight := s.w[:nq] // 1: the column of an excess row (slack nonbasic)
	av := s.scr[:nq]  // receiving columns' loads a_j − b_j·t (scr is free until factor)
	bv := s.xb[np:]
	for range 4 {
		for cc, j := range s.cols {
			cp[cc] = t0*q[j] - p[j]
			tight[cc] = 0
			av[cc], bv[cc] = 0, 0
		}
		clear(s.inB)
		pos := 0
		put := func(v int) {
			s.basis[pos] = v
			s.inB[v] = pos + 1
			pos++
		}
		c := 0
		okA := true
		minCap := math.Inf(1) // the least p_i/q_i over excess rows with a column
		for r, i := range s.rows {
			for c < nq && s.cols[c] < i {
				c++
			}
			own := c < nq && s.cols[c] == i
			ex := p[i]
			if own {
				put(r*nq + c)
				ex = p[i] - t0*q[i]
				if ex <= 0 {
					av[c] += p[i]
					continue
				}
				tight[c] = 1
				cp[c] = 0
				minCap = math.Min(minCap, p[i]/q[i])
			}
			best, bg, room, roomC := -1, math.Inf(1), math.Inf(-1), -1
			for cc, j := range s.cols {
				if tight[cc] == 1 {
					continue
				}
				g := G[i*k+j]
				if math.IsInf(g, 1) {
					continue
				}
				if g*ex <= cp[cc] && g < bg {
					best, bg = cc, g
				}
				if r := cp[cc] / g; r > room {
					room, roomC = r, cc
				}
			}
			if best < 0 {
				best = roomC
			}
			if best < 0 {
				okA = false
				break
			}
			put(r*nq + best)
			g := G[i*k+s.cols[best]]
			cp[best] -= g * ex
			// its load as a function of t: g·(p_i − t·q_i), or g·p_i
			av[best] += g * p[i]
			if own {
				bv[best] += g * q[i]
			}
		}
		if !okA {
			return false
		}
		// t binds at the receiving column with the largest a_j/(q_j + b_j)
		worst, t := -1, math.Inf(-1)
		for cc, j := range s.cols {
			if tight[cc] == 0 {
				if v := av[cc] / (q[j] + bv[cc]); v > t {
					worst, t = cc, v
				}
			}
		}
		if worst < 0 {
			return false
		}
		if t > minCap || tight[worst] == 1 {
			t0 = t * (1 + 1e-9)
			continue
		}
		for cc := range nq {
			if tight[cc] == 1 {
				continue
			}
			if cc == worst {
				put(s.tVar())
			} else {
				put(s.slackVar(cc))
			}
		}
		return pos == s.m
	}
	return false
}

// colEntries calls f(row, value) for the nonzeros of variable v's
// constraint column.
func (s *lpSolver) colEntries(v int, f func(int, float64)) {
	npq := s.np * s.nq
	switch {
	case v < npq:
		r, c := v/s.nq, v%s.nq
		f(r, 1)
		f(s.np+c, s.G[s.rows[r]*s.k+s.cols[c]])
	case v < npq+s.nq:
		f(s.np+v-npq, 1)
	default:
		for c, j := range s.cols {
			f(s.np+c, -s.q[j])
		}
	}
}

// factor computes B⁻¹ of the current basis by Gauss–Jordan elimination
// with partial pivoting; false when B is numerically singular.
func (s *lpSolver) factor() bool {
	m := s.m
	w := 2 * m
	a := s.scr
	clear(a)
	for pos, v := range s.basis {
		s.colEntries(v, func(r int, x float64) { a[r*w+pos] = x })
	}
	for i := range m {
		a[i*w+m+i] = 1
	}
	for col := range m {
		piv, pv := -1, 0.0
		for r := col; r < m; r++ {
			if v := math.Abs(a[r*w+col]); v > pv {
				pv, piv = v, r
			}
		}
		if piv < 0 || !(pv > 1e-300) {
			return false
		}
		if piv != col {
			for c := range w {
				a[piv*w+c], a[col*w+c] = a[col*w+c], a[piv*w+c]
			}
		}
		inv := 1 / a[col*w+col]
		for c := col; c < w; c++ {
			a[col*w+c] *= inv
		}
		for r := range m {
			if r == col {
				continue
			}
			f := a[r*w+col]
			if f == 0 {
				continue
			}
			for c := col; c < w; c++ {
				a[r*w+c] -= f * a[col*w+c]
			}
		}
	}
	for i := range m {
		copy(s.binv[i*m:(i+1)*m], a[i*w+m:i*w+w])
	}
	return true
}

// setX computes x_B = B⁻¹·b (b = p on the row constraints, 0 on the
// columns); false if it is not finite.
func (s *lpSolver) setX() bool {
	m := s.m
	for pos := range m {
		x := 0.0
		row := s.binv[pos*m : pos*m+s.np]
		for r, i := range s.rows {
			x += row[r] * s.p[i]
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
		s.xb[pos] = x
	}
	return true
}

// primalFeasible reports whether x_B ≥ 0 up to rounding.
func (s *lpSolver) primalFeasible() bool {
	for _, x := range s.xb {
		if x < -1e-12 {
			return false
		}
	}
	return true
}

// iterate runs primal simplex pivots from a feasible basis to an optimal
// one (Dantzig's rule, Bland's after a run of degenerate pivots); false
// when it does not finish within lpMaxPivotsPer·m pivots or loses
// feasibility.
func (s *lpSolver) iterate() bool {
	m, np, nq, k := s.m, s.np, s.nq, s.k
	for v := range s.wt {
		s.wt[v] = 1
	}
	degenerate := 0
	sinceFactor := 0
	for s.pivots < lpMaxPivotsPer*m {
		// duals: y = c_B B⁻¹, c_B = e at t's position
		pt := s.inB[s.tVar()] - 1
		if pt < 0 {
			return false // t ≥ 1 in every feasible solution: never leaves
		}
		copy(s.y, s.binv[pt*m:(pt+1)*m])
		bland := degenerate >= lpDegenerate
		// Devex pricing (reference weights wt approximate the steepest
		// edge): the largest d²/wt; Bland's rule (the first eligible) after
		// a run of degenerate pivots.
		enter, best := -1, 0.0
	price:
		for r, i := range s.rows {
			yr := s.y[r]
			gi := s.G[i*k:]
			for c, j := range s.cols {
				v := r*nq + c
				if s.inB[v] != 0 {
					continue
				}
				g := gi[j]
				if math.IsInf(g, 1) {
					continue
				}
				yc := s.y[np+c]
				d := -(yr + g*yc)
				if d < -lpTolD*(math.Abs(yr)+g*math.Abs(yc)) {
					if bland {
						enter = v
						break price
					}
					if sc := d * d / s.wt[v]; sc > best {
						enter, best = v, sc
					}
				}
			}
		}
		if enter < 0 || !bland {
			for c := range nq {
				v := s.slackVar(c)
				if s.inB[v] != 0 {
					continue
				}
				if d := -s.y[np+c]; d < -lpTolD*math.Abs(s.y[np+c]) {
					if bland {
						if enter < 0 {
							enter = v
						}
						break
					}
					if sc := d * d / s.wt[v]; sc > best {
						enter, best = v, sc
					}
				}
			}
		}
		if enter < 0 {
			return true
		}
		// w = B⁻¹ a_enter
		clear(s.w)
		s.colEntries(enter, func(r int, x float64) {
			for pos := range m {
				s.w[pos] += s.binv[pos*m+r] * x
			}
		})
		wmax := 0.0
		for _, x := range s.w {
			wmax = math.Max(wmax, math.Abs(x))
		}
		leave, theta := -1, math.Inf(1)
		for pos, x := range s.w {
			if x <= lpTolPivot*wmax {
				continue
			}
			ratio := math.Max(s.xb[pos], 0) / x
			switch {
			case leave < 0 || ratio < theta*(1-1e-12):
				leave, theta = pos, ratio
			case ratio <= theta*(1+1e-12):
				// tie: Bland takes the smallest variable, else the largest pivot
				if bland && s.basis[pos] < s.basis[leave] || !bland && x > s.w[leave] {
					leave, theta = pos, math.Min(ratio, theta)
				}
			}
		}
		if leave < 0 {
			return false // unbounded: impossible for this LP (t ≥ 1)
		}
		if theta == 0 {
			degenerate++
		} else {
			degenerate = 0
		}
		for pos := range m {
			s.xb[pos] -= theta * s.w[pos]
		}
		s.xb[leave] = theta
		// B⁻¹ update: pivot on w[leave]
		piv := s.w[leave]
		lr := s.binv[leave*m : (leave+1)*m]
		s.devex(lr, piv, enter, s.basis[leave])
		for c := range m {
			lr[c] /= piv
		}
		for pos := range m {
			if pos == leave || s.w[pos] == 0 {
				continue
			}
			f := s.w[pos]
			row := s.binv[pos*m : (pos+1)*m]
			for c := range m {
				row[c] -= f * lr[c]
			}
		}
		s.inB[s.basis[leave]] = 0
		s.basis[leave] = enter
		s.inB[enter] = leave + 1
		s.pivots++
		sinceFactor++
		if sinceFactor >= lpRefactorEvery {
			sinceFactor = 0
			if !s.factor() || !s.setX() {
				return false
			}
		}
	}
	return false
}

// devex updates the reference weights for a pivot on row lr of B⁻¹
// (before the update) with pivot element piv, q entering and out leaving:
// wt_e = max(wt_e, (α_e/α_q)²·wt_q) with α_e = (B⁻¹A)_{r,e}.
func (s *lpSolver) devex(lr []float64, piv float64, q, out int) {
	np, nq, k := s.np, s.nq, s.k
	wq := s.wt[q]
	f := wq / (piv * piv)
	for r, i := range s.rows {
		a := lr[r]
		gi := s.G[i*k:]
		for c, j := range s.cols {
			v := r*nq + c
			if s.inB[v] != 0 || v == q {
				continue
			}
			g := gi[j]
			if math.IsInf(g, 1) {
				continue
			}
			al := a + g*lr[np+c]
			if w := al * al * f; w > s.wt[v] {
				s.wt[v] = w
			}
		}
	}
	for c := range nq {
		v := s.slackVar(c)
		if s.inB[v] != 0 || v == q {
			continue
		}
		al := lr[np+c]
		if w := al * al * f; w > s.wt[v] {
			s.wt[v] = w
		}
	}
	s.wt[out] = math.Max(f, 1)
}

// certify reads the plan off the basis and returns the least t it proves,
// rounded up: each row is scaled so that its sum, as computed, is at least
// p_i after the worst rounding (a plan with row sums ≥ p is as good as one
// with sums = p, because messages are positive: docs/math.md §8.10), and
// the column loads are inflated by a bound on their summation error. With
// u = 2⁻⁵³, a computed sum of n ≤ 2k nonnegative terms is within a factor
// 1 ± (n+1)u of the exact sum of the computed terms, and each product or
// quotient adds a factor 1 ± u; the margin 1 + 4(n+4)u covers all of them.
func (s *lpSolver) certify() (float64, bool) {
	const u = 0x1p-53
	np, nq, k := s.np, s.nq, s.k
	clear(s.gam)
	for pos, v := range s.basis {
		if v < np*nq {
			s.gam[v] = math.Max(s.xb[pos], 0)
		}
	}
	margin := 1 + 4*float64(s.m+4)*u
	for r, i := range s.rows {
		row := s.gam[r*nq : (r+1)*nq]
		sum := 0.0
		for _, x := range row {
			sum += x
		}
		if !(sum > 0) || math.IsInf(sum, 0) {
			return 0, false
		}
		f := s.p[i] / sum * margin
		for c := range row {
			row[c] *= f
		}
	}
	t := 0.0
	for c, j := range s.cols {
		load := 0.0
		for r, i := range s.rows {
			if x := s.gam[r*nq+c]; x > 0 {
				load += x * s.G[i*k+j]
			}
		}
		t = math.Max(t, load/s.q[j])
	}
	t *= margin
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return 0, false
	}
	return math.Nextafter(t, math.Inf(1)), true
}

// plan returns the last certified plan as a k×k row-major matrix (tests).
func (s *lpSolver) plan() []float64 {
	out := make([]float64, s.k*s.k)
	for r, i := range s.rows {
		for c, j := range s.cols {
			out[i*s.k+j] = s.gam[r*s.nq+c]
		}
	}
	return out
}
