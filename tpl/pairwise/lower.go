package pairwise

import (
	"context"
	"errors"
	"fmt"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"math"
	"slices"
	"sort"
)

// Concrete lower bounds on the noise limit (docs/math.md §8.10): the loss
// of one explicit output of the per-step one-hot release is a true loss,
// so a scale at which it reaches ε is one no valid calibration of that
// release may undercut. The output: at the secret step t a vector of
// likelihood ratio R between a and a'; at step t+n (t−n) the vertex
// 1 + (R−1)·1_S of K_R. The loss of the pair is
//
//	log R + log F(a)/F(a') + log B(a)/B(a'),
//	F = P diag(h_1) P diag(h_2) ⋯ P diag(h_N) 1   (the future),
//	B the same with the time reversal P* (the stationary past).
//
// The sets S start at {x : Pⁿ(a,x) > Pⁿ(a',x)} and improve by coordinate
// ascent: with the other steps fixed, step n's best set is a prefix of the
// states sorted by α_a(x)/α_a'(x), the two conditional messages that
// reach step n (docs/math.md (8.1)).

// Limits of LowerBound's work.
const (
	lbHorizonTol  = 1e-10   // a side stops when TV(Pⁿ(a,·), Pⁿ(a',·)) falls below this
	lbMaxHorizon  = 1 << 15 // steps per side at most
	lbPassWork    = 2e7     // multiply-adds of one pass over a side's horizon at most
	lbSweeps      = 4       // coordinate-ascent sweeps per scale at most
	lbRounds      = 12      // re-optimisations of the output at a new scale at most
	lbCandidates  = 3       // unordered pairs examined in full (both orders)
	lbScreenWork  = 1.5e8   // multiply-adds the pair screening may spend
	lbCheckPeriod = 64      // steps between context checks
)

const unitRound = 0x1p-53

// LowerBound returns b_lo: a Laplace scale b at which an explicit output sequence of per-step one-hot
// releases of the chain P (stationary unbounded stream, sensitivity-scaled R = e^{sensitivity/b}) loses ≥ eps;
// no valid calibration may be below it.
//
// More precisely (docs/math.md §8.10): the per-step release (Lap(b) on
// every bin of the one-hot vector scaled by sensitivity/2; the one-hot
// histogram at sensitivity 2) at every scale b' < b_lo has loss > eps,
// so every calibration of it, and every calibration by a bound on it
// (the pairwise and scalar recursions, for windows of any widths, §8.6),
// is ≥ b_lo. The loss of the output is evaluated in floating point and
// lowered by a bound on the rounding error, so b_lo is never above the
// value exact arithmetic would give. P must be irreducible (the
// stationary law unique and positive).
//
// The pairs (a, a') examined are the few with the largest first-order
// leakage Σ_n TV(Pⁿ(a,·), Pⁿ(a',·)) + the same for P*; LowerBoundPairs
// takes them from the caller. Cost: the screening spends at most
// 1.5·10⁸ multiply-adds; each pair some 25–40 passes of 2N·nnz(P), N the
// horizon of a side (the steps until the two rows' laws agree to 1e-10
// in total variation, at most 32,768 and 10⁷/nnz(P)), so at most about
// 3·10⁹ per pair. Measured (CPU): the UCI house's 51 fitted levels 1.4 s;
// banded (half-width 3, no smoothing) k = 51 2 s, k = 101 10 s, k = 201
// 18 s (there the horizon cap binds); banded k = 201 with 10⁻³ smoothing
// 3 s. ctx is checked every 64 steps: a report should give it a deadline.
func LowerBound(ctx context.Context, P [][]float64, eps, sensitivity float64) (float64, error) {
	return LowerBoundPairs(ctx, P, eps, sensitivity, nil)
}

// LowerBoundPairs is LowerBound over the given ordered pairs (a, a') of
// states — for instance the pair a pairwise bound finds worst — or, when
// pairs is empty, over the pairs LowerBound screens.
func LowerBoundPairs(ctx context.Context, P [][]float64, eps, sensitivity float64, pairs [][2]int) (float64, error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, fmt.Errorf("pairwise: lower bound: ε = %v, want a finite ε > 0", eps)
	}
	if !(sensitivity > 0) || math.IsInf(sensitivity, 0) {
		return 0, fmt.Errorf("pairwise: lower bound: sensitivity %v, want a finite value > 0", sensitivity)
	}
	fw, err := newCSR(P)
	if err != nil {
		return 0, err
	}
	k := fw.k
	for _, pr := range pairs {
		if pr[0] < 0 || pr[0] >= k || pr[1] < 0 || pr[1] >= k || pr[0] == pr[1] {
			return 0, fmt.Errorf("pairwise: lower bound: pair (%d, %d) of a %d-state chain", pr[0], pr[1], k)
		}
	}
	// The trivial output: the secret step alone loses log R = sensitivity/b.
	best := sensitivity / eps * (1 - 1e-12)
	if k == 1 {
		return best, nil
	}
	pi, err := stationaryGTH(ctx, P)
	if err != nil {
		return 0, err
	}
	bw := reversalCSR(P, pi)
	lb := &lowerBounder{ctx: ctx, fw: fw, bw: bw, eps: eps, sens: sensitivity,
		piErr: gthError(k)}
	if len(pairs) == 0 {
		if pairs, err = lb.screen(); err != nil {
			return 0, err
		}
	}
	for _, pr := range pairs {
		b, err := lb.pairBound(pr[0], pr[1], best)
		if err != nil {
			return 0, err
		}
		best = math.Max(best, b)
	}
	return best, nil
}

// csr is a row-stochastic matrix in compressed sparse rows.
type csr struct {
	k   int
	ptr []int
	idx []int
	val []float64
	dev float64 // the rows' largest distance from sum 1, plus the sum's rounding
}

func newCSR(P [][]float64) (*csr, error) {
	k := len(P)
	if k == 0 {
		return nil, errors.New("pairwise: lower bound: empty transition matrix")
	}
	c := &csr{k: k, ptr: make([]int, 1, k+1)}
	for i, row := range P {
		if len(row) != k {
			return nil, fmt.Errorf("pairwise: lower bound: row %d has %d entries, want %d", i, len(row), k)
		}
		s := 0.0
		for j, x := range row {
			if !(x >= 0) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("pairwise: lower bound: P[%d][%d] = %v", i, j, x)
			}
			if x > 0 {
				c.idx = append(c.idx, j)
				c.val = append(c.val, x)
			}
			s += x
		}
		if math.Abs(s-1) > 1e-9 {
			return nil, fmt.Errorf("pairwise: lower bound: row %d sums to %v, want 1", i, s)
		}
		c.dev = math.Max(c.dev, math.Abs(s-1)+float64(k)*unitRound)
		c.ptr = append(c.ptr, len(c.idx))
	}
	return c, nil
}

// left sets dst = x·M (row vector); dst must not alias x.
func (c *csr) left(dst, x []float64) {
	clear(dst)
	for i, xi := range x {
		if xi == 0 {
			continue
		}
		for p := c.ptr[i]; p < c.ptr[i+1]; p++ {
			dst[c.idx[p]] += xi * c.val[p]
		}
	}
}

// right sets dst = M·v (column vector); dst must not alias v.
func (c *csr) right(dst, v []float64) {
	for i := range c.k {
		s := 0.0
		for p := c.ptr[i]; p < c.ptr[i+1]; p++ {
			s += c.val[p] * v[c.idx[p]]
		}
		dst[i] = s
	}
}

func (c *csr) row(dst []float64, i int) {
	clear(dst)
	for p := c.ptr[i]; p < c.ptr[i+1]; p++ {
		dst[c.idx[p]] = c.val[p]
	}
}

// stationaryGTH is markov.StationaryGTH, its error wrapped for the lower bound.
func stationaryGTH(ctx context.Context, P [][]float64) ([]float64, error) {
	pi, err := markov.StationaryGTH(ctx, P)
	if errors.Is(err, markov.ErrNoPositiveLaw) {
		return nil, fmt.Errorf("pairwise: lower bound: %w", err)
	}
	return pi, err
}

// gthError is markov.GTHError.
func gthError(k int) float64 { return markov.GTHError(k) }

// reversalCSR is P*(x,y) = π(y)P(y,x)/π(x).
func reversalCSR(P [][]float64, pi []float64) *csr {
	k := len(P)
	c := &csr{k: k, ptr: make([]int, 1, k+1)}
	for x := range k {
		for y := range k {
			if v := pi[y] * P[y][x] / pi[x]; v > 0 {
				c.idx = append(c.idx, y)
				c.val = append(c.val, v)
			}
		}
		c.ptr = append(c.ptr, len(c.idx))
	}
	return c
}

// lowerBounder holds one LowerBound call.
type lowerBounder struct {
	ctx       context.Context
	fw, bw    *csr // P and P*
	eps, sens float64
	piErr     float64 // entrywise relative error bound of π
	steps     int     // context-check counter
}

func (lb *lowerBounder) tick() error {
	lb.steps++
	if lb.steps%lbCheckPeriod == 0 {
		return lb.ctx.Err()
	}
	return nil
}

// side is one direction (future with P, past with P*) of one ordered
// pair: the horizon and the set of every step.
type side struct {
	m    *csr
	a, b int
	n    int    // horizon N
	sets []bool // N×k, sets[(n−1)k + x]: x ∈ S_n
	tv   float64
}

// newSide starts the sets at {x : Pⁿ(a,x) > Pⁿ(a',x)} and takes the
// horizon N where the two laws agree to lbHorizonTol in total variation.
func (lb *lowerBounder) newSide(m *csr, a, b int) (*side, error) {
	return lb.newSideN(m, a, b, horizonCap(m), lbHorizonTol)
}

// horizonCap is the longest horizon of a side: lbMaxHorizon, and a pass
// over the horizon (two messages) within lbPassWork multiply-adds. A
// shorter horizon gives a valid, looser bound; it binds on slowly mixing
// sparse chains (banded k = 101 and beyond, without smoothing).
func horizonCap(m *csr) int {
	return min(lbMaxHorizon, max(1024, int(lbPassWork/float64(2*len(m.val)))))
}

// newSideN is newSide with the horizon at most maxN and the tolerance tol
// (0: exactly maxN steps).
func (lb *lowerBounder) newSideN(m *csr, a, b, maxN int, tol float64) (*side, error) {
	k := m.k
	s := &side{m: m, a: a, b: b}
	u, v := make([]float64, k), make([]float64, k)
	u2, v2 := make([]float64, k), make([]float64, k)
	m.row(u, a)
	m.row(v, b)
	for n := 1; n <= maxN; n++ {
		if err := lb.tick(); err != nil {
			return nil, err
		}
		tv := 0.0
		for x := range k {
			in := u[x] > v[x]
			s.sets = append(s.sets, in)
			if in {
				tv += u[x] - v[x]
			}
		}
		s.tv += tv
		s.n = n
		if tv < tol {
			break
		}
		m.left(u2, u)
		m.left(v2, v)
		u, u2, v, v2 = u2, u, v2, v
	}
	return s, nil
}

// logRatio returns log F(a)/F(a') for the current sets at ratio R, with
// F = M diag(h_1) ⋯ M diag(h_N) 1, and the number of arithmetic steps
// for the error bound. The two row messages are rescaled by powers of 2
// (exact) to stay in range.
func (lb *lowerBounder) logRatio(s *side, R float64) (float64, error) {
	if s.n == 0 {
		return 0, nil
	}
	k := s.m.k
	u, v := make([]float64, k), make([]float64, k)
	u2, v2 := make([]float64, k), make([]float64, k)
	s.m.row(u, s.a)
	s.m.row(v, s.b)
	le := 0 // log2 scale of u minus that of v
	for n := 1; n <= s.n; n++ {
		if err := lb.tick(); err != nil {
			return 0, err
		}
		set := s.sets[(n-1)*k : n*k]
		for x := range k {
			if set[x] {
				u[x] *= R
				v[x] *= R
			}
		}
		if n == s.n {
			break
		}
		s.m.left(u2, u)
		s.m.left(v2, v)
		u, u2, v, v2 = u2, u, v2, v
		le += rescale(u) - rescale(v)
	}
	su, sv := 0.0, 0.0
	for x := range k {
		su += u[x]
		sv += v[x]
	}
	return math.Log(su) - math.Log(sv) + float64(le)*math.Ln2, nil
}

// rescale multiplies x by a power of 2 so that its largest entry is in
// [1, 2) and returns the exponent removed; exact in floating point.
func rescale(x []float64) int {
	mx := 0.0
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	if mx == 0 || mx >= 0x1p-200 && mx < 0x1p200 {
		return 0
	}
	_, e := math.Frexp(mx)
	for i := range x {
		x[i] = math.Ldexp(x[i], -e)
	}
	return e
}

// ascend runs one sweep of coordinate ascent on the sets at ratio R:
// backward messages β_n = M diag(h_{n+1}) β_{n+1} (β_N = 1) from the old
// sets, then forward in n the best prefix for step n given the rest.
func (lb *lowerBounder) ascend(s *side, R float64) error {
	k, N := s.m.k, s.n
	if N == 0 {
		return nil
	}
	beta := make([]float64, N*k)
	tmp := make([]float64, k)
	last := beta[(N-1)*k:]
	for x := range last {
		last[x] = 1
	}
	for n := N - 1; n >= 1; n-- {
		if err := lb.tick(); err != nil {
			return err
		}
		next := beta[n*k : (n+1)*k] // β_{n+1}
		set := s.sets[n*k : (n+1)*k]
		for x := range k {
			tmp[x] = next[x]
			if set[x] {
				tmp[x] *= R
			}
		}
		cur := beta[(n-1)*k : n*k]
		s.m.right(cur, tmp)
		rescale(cur)
	}
	u, v := make([]float64, k), make([]float64, k)
	u2, v2 := make([]float64, k), make([]float64, k)
	s.m.row(u, s.a)
	s.m.row(v, s.b)
	order := make([]int, 0, k)
	for n := 1; n <= N; n++ {
		if err := lb.tick(); err != nil {
			return err
		}
		bn := beta[(n-1)*k : n*k]
		A, B := 0.0, 0.0
		order = order[:0]
		for x := range k {
			A += u[x] * bn[x]
			B += v[x] * bn[x]
			if (u[x] > 0 || v[x] > 0) && bn[x] > 0 {
				order = append(order, x)
			}
		}
		sort.Slice(order, func(i, j int) bool {
			x, y := order[i], order[j]
			return u[x]*v[y] > u[y]*v[x]
		})
		bestM, bestF := 0, A/B
		wa, wb := 0.0, 0.0
		for m, x := range order {
			wa += u[x] * bn[x]
			wb += v[x] * bn[x]
			if f := (A + (R-1)*wa) / (B + (R-1)*wb); f > bestF {
				bestM, bestF = m+1, f
			}
		}
		set := s.sets[(n-1)*k : n*k]
		clear(set)
		for _, x := range order[:bestM] {
			set[x] = true
			u[x] *= R
			v[x] *= R
		}
		if n == N {
			break
		}
		s.m.left(u2, u)
		s.m.left(v2, v)
		u, u2, v, v2 = u2, u, v2, v
		rescale(u)
		rescale(v)
	}
	return nil
}

// margin bounds the rounding error of a computed loss with horizons nf,
// nb (docs/math.md §8.10): every entry of a message is a sum of products
// of nonnegative numbers, so each step (a product with the kernel, whose
// entries of P* carry 3u of their own; the factor R; an exact rescaling)
// adds at most (k+6)·u to its relative error, for each of the two
// messages of a side; the sums over the k entries and the logarithms add
// a few u more. π's error enters once, not per step: P* = D⁻¹PᵀD with
// D = diag(π), and diag(h) commutes with D, so a product of n steps of
// the computed P* is D̂⁻¹(Pᵀ diag(h))ⁿ D̂ — π̂ only at its two ends, where
// it moves the ratio by at most a factor (1+δ)²/(1−δ)², δ = piErr. R =
// e^{s/b} is computed one ulp low and lowered two more (ratioAt), so it is
// ≤ the true R and h ∈ [1, R] is a possible likelihood vector. P's rows
// may sum to 1 only within rounding (a fitted or parsed chain): each
// step is then charged their distance from 1 (for P* twice, through π).
func (lb *lowerBounder) margin(nf, nb int) float64 {
	k := float64(lb.fw.k)
	// rows of P that sum to 1 ± dev change each step's message by that
	// factor at most against the stochastic chain they stand for
	dev := 2 * float64(nf+nb) * 2 * lb.fw.dev
	return 2*float64(nf+nb)*(k+6)*unitRound + 4.5*lb.piErr + 8*(k+8)*unitRound + 1e-15 + dev
}

// ratioAt is the R used at scale b: below e^{sens/b}.
func (lb *lowerBounder) ratioAt(b float64) float64 {
	R := math.Exp(lb.sens / b)
	return math.Nextafter(math.Nextafter(R*(1-2*unitRound), 0), 0)
}

// loss is the certified-low loss of the pair's current output at scale b.
func (lb *lowerBounder) loss(f, p *side, b float64) (float64, error) {
	R := lb.ratioAt(b)
	lf, err := lb.logRatio(f, R)
	if err != nil {
		return 0, err
	}
	lp, err := lb.logRatio(p, R)
	if err != nil {
		return 0, err
	}
	l := math.Log(R) + lf + lp
	return l - lb.margin(f.n, p.n) - 4*unitRound*math.Abs(l), nil
}

// optimise runs ascent sweeps on both sides at scale b until the loss
// stops rising, and returns it.
func (lb *lowerBounder) optimise(f, p *side, b float64) (float64, error) {
	R := lb.ratioAt(b)
	prev, err := lb.loss(f, p, b)
	if err != nil {
		return 0, err
	}
	fs, ps := slices.Clone(f.sets), slices.Clone(p.sets)
	for range lbSweeps {
		if err := lb.ascend(f, R); err != nil {
			return 0, err
		}
		if err := lb.ascend(p, R); err != nil {
			return 0, err
		}
		l, err := lb.loss(f, p, b)
		if err != nil {
			return 0, err
		}
		if l < prev { // rounding only: keep the better output
			copy(f.sets, fs)
			copy(p.sets, ps)
			return prev, nil
		}
		done := l-prev < 1e-12
		prev = l
		copy(fs, f.sets)
		copy(ps, p.sets)
		if done {
			break
		}
	}
	return prev, nil
}

// rootScale returns the largest scale ≥ floor found at which the current
// output's certified loss is ≥ ε, searching up from b when it is there
// and down from b when not (a bracket, then regula falsi in 1/b, the loss
// being nearly linear in 1/b, with the Illinois modification); 0 when
// none ≥ floor is found.
func (lb *lowerBounder) rootScale(f, p *side, b, floor float64) (float64, error) {
	g := func(b float64) (float64, error) {
		l, err := lb.loss(f, p, b)
		return l - lb.eps, err
	}
	gb, err := g(b)
	if err != nil {
		return 0, err
	}
	lo, hi := b, b
	var glo, ghi float64
	if gb >= 0 {
		glo = gb
		for i := 0; ; i++ {
			hi *= 1.25
			if ghi, err = g(hi); err != nil {
				return 0, err
			}
			if ghi < 0 {
				break
			}
			lo, glo = hi, ghi
			if i > 200 {
				return lo, nil
			}
		}
	} else {
		ghi = gb
		for {
			if lo <= floor {
				return 0, nil
			}
			lo = math.Max(lo/1.25, floor)
			if glo, err = g(lo); err != nil {
				return 0, err
			}
			if glo >= 0 {
				break
			}
			hi, ghi = lo, glo
		}
	}
	side := 0
	for range 100 {
		if hi-lo <= 1e-12*lo {
			break
		}
		x0, x1 := 1/lo, 1/hi
		b := 1 / (x1 + (x0-x1)*(-ghi)/(glo-ghi))
		if !(b > lo && b < hi) {
			b = (lo + hi) / 2
		}
		gb, err := g(b)
		if err != nil {
			return 0, err
		}
		if gb >= 0 {
			lo, glo = b, gb
			if side == 1 {
				ghi /= 2
			}
			side = 1
		} else {
			hi, ghi = b, gb
			if side == -1 {
				glo /= 2
			}
			side = -1
		}
	}
	return lo, nil
}

// pairBound returns the largest scale above floor at which an output built
// for the ordered pair (a, a') is certified to lose ≥ ε, or 0 when it
// finds none: optimise the output at a scale, move the scale to where that
// output's loss is ε, and again, until the scale settles.
func (lb *lowerBounder) pairBound(a, a2 int, floor float64) (float64, error) {
	f, err := lb.newSide(lb.fw, a, a2)
	if err != nil {
		return 0, err
	}
	p, err := lb.newSide(lb.bw, a, a2)
	if err != nil {
		return 0, err
	}
	// first-order estimate of the pair's limit: sens·(1 + S_F + S_B)/ε
	b := math.Max(floor, lb.sens*(1+f.tv+p.tv)/lb.eps*0.99)
	best := 0.0
	for range lbRounds {
		if _, err := lb.optimise(f, p, b); err != nil {
			return 0, err
		}
		nb, err := lb.rootScale(f, p, b, floor)
		if err != nil {
			return 0, err
		}
		if nb <= floor {
			break
		}
		best = math.Max(best, nb)
		if math.Abs(nb-b) <= 1e-10*b {
			break
		}
		b = nb
	}
	return best, nil
}

// screen ranks the unordered pairs by their first-order leakage, the sum
// over steps of TV(Mⁿ(a,·), Mⁿ(a',·)) for M = P and P*, within a work
// budget (later steps are sampled when the budget is short; a ranking
// needs no more), and returns the best lbCandidates in both orders.
func (lb *lowerBounder) screen() ([][2]int, error) {
	k := lb.fw.k
	score := make([]float64, k*k)
	for _, m := range []*csr{lb.fw, lb.bw} {
		rows := make([]float64, k*k)
		next := make([]float64, k*k)
		for i := range k {
			m.row(rows[i*k:(i+1)*k], i)
		}
		budget := lbScreenWork / 2
		stride := 1
		for n := 1; n <= lbMaxHorizon && budget > 0; n++ {
			if err := lb.ctx.Err(); err != nil {
				return nil, err
			}
			if n%stride == 0 {
				maxTV := 0.0
				for a := range k {
					if a%64 == 63 {
						if err := lb.ctx.Err(); err != nil {
							return nil, err
						}
					}
					ra := rows[a*k : (a+1)*k]
					for a2 := a + 1; a2 < k; a2++ {
						rb := rows[a2*k : (a2+1)*k]
						tv := 0.0
						for x := range k {
							if d := ra[x] - rb[x]; d > 0 {
								tv += d
							}
						}
						score[a*k+a2] += tv * float64(stride)
						maxTV = math.Max(maxTV, tv)
					}
				}
				if maxTV < lbHorizonTol {
					break
				}
				budget -= float64(k*k*k) / 2
			}
			if n == 32*stride { // TV decays smoothly: sample later steps sparser
				stride *= 2
			}
			for i := range k {
				if i%64 == 63 {
					if err := lb.ctx.Err(); err != nil {
						return nil, err
					}
				}
				m.left(next[i*k:(i+1)*k], rows[i*k:(i+1)*k])
			}
			rows, next = next, rows
			budget -= float64(k * len(m.val))
		}
	}
	type cand struct {
		a, b int
		s    float64
	}
	var cs []cand
	for a := range k {
		for a2 := a + 1; a2 < k; a2++ {
			cs = append(cs, cand{a, a2, score[a*k+a2]})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].s > cs[j].s })
	var out [][2]int
	for i := 0; i < len(cs) && i < lbCandidates; i++ {
		out = append(out, [2]int{cs[i].a, cs[i].b}, [2]int{cs[i].b, cs[i].a})
	}
	return out, nil
}
