package pairwise

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	gemmk "github.com/pufferfish-privacy/pufferfish/internal/gemm"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl"

	"gonum.org/v1/gonum/blas/blas64"
)

// The functional recursion (docs/math.md §8.12): for a pair (a, a') and a
// trial ratio t, ψ_0 = t·e_{a'} − e_a and ψ_{n+1} = ρ(Mᵀψ_n) with
// ρ(c) = min(c, R·c) componentwise. Once ψ_N ≥ 0, every message m of M
// has m(a) ≤ t·m(a'); the least t with ψ_N(t)·1 ≥ 0 is the exact
// supremum over horizons ≤ N, which increases to the exact F (M = P) or B
// (M = P*). The past runs on P too: with φ = ψ/π, ψ ← ρ(P*ᵀψ) is
// φ ← ρ(Pφ), from (t/π_{a'})e_{a'} − e_a/π_a, so no time reversal is ever
// formed.

// fnSide is one side of the recursion for a batch of pairs: the step is
// X ← ρ(X·A) on the rows of X (one row per pair), A = P (forward: the
// row vector ψ·P is Pᵀψ) or Pᵀ (backward: φ·Pᵀ is Pφ).
type fnSide struct {
	k int
	A blas64.General
	// w weighs the exactness test ψ_N·1 ≥ 0: 1 forward, π backward
	w []float64
	// relErr bounds |computed X·A − exact X·A| by relErr·(|X|·A) entrywise:
	// the product's rounding and the rows' distance from stochastic
	relErr float64
	// sp, when not nil, holds A's nonzeros row by row: a sparse A (a
	// banded chain) costs nnz(A) a row of X instead of k²
	sp *sparseRows
}

// sparseRows is a k×k matrix by rows: row l's nonzeros are
// (col[i], val[i]) for i in start[l]..start[l+1]−1.
type sparseRows struct {
	start []int
	col   []int
	val   []float64
}

// fnSparse says when A is multiplied as sparse: at most a quarter of its
// entries nonzero (the dense kernel is several times faster per term).
const fnSparse = 0.25

// fnDense, when set (tests), multiplies every A as dense.
var fnDense bool

func newSparseRows(a []float64, k int) *sparseRows {
	if fnDense {
		return nil
	}
	sp := &sparseRows{start: make([]int, k+1)}
	for l := range k {
		for j, v := range a[l*k : (l+1)*k] {
			if v != 0 {
				sp.col = append(sp.col, j)
				sp.val = append(sp.val, v)
			}
		}
		sp.start[l+1] = len(sp.col)
	}
	if float64(len(sp.col)) > fnSparse*float64(k*k) {
		return nil
	}
	return sp
}

// mul sets Y = X·A (rows of length k): the sparse rows of A when there
// are few, each entry's terms added in increasing l as the dense kernel
// (at most k of them: γ_k bounds the rounding either way).
func (s *fnSide) mul(Y, X blas64.General) {
	if s.sp == nil {
		gemm(Y, X, s.A)
		return
	}
	k, sp := s.k, s.sp
	for i := range X.Rows {
		y := Y.Data[i*k : (i+1)*k]
		clear(y)
		for l, x := range X.Data[i*k : (i+1)*k] {
			if x == 0 {
				continue
			}
			for t := sp.start[l]; t < sp.start[l+1]; t++ {
				y[sp.col[t]] += x * sp.val[t]
			}
		}
	}
}

// cost is the multiply-adds of one row's product.
func (s *fnSide) cost() float64 {
	if s.sp != nil {
		return float64(len(s.sp.col))
	}
	return float64(s.k * s.k)
}

// fnChain is the recursion's data for one chain with a stationary start.
type fnChain struct {
	k        int
	fwd, bwd *fnSide
	pi       []float64
	piErr    float64 // relative error bound of a ratio π_a/π_{a'}
}

// newFnChain prepares the recursion of an irreducible chain P with
// stationary law π (entrywise relative error piErr0).
func newFnChain(P [][]float64, pi []float64, piErr0 float64) *fnChain {
	k := len(P)
	a := make([]float64, k*k)
	at := make([]float64, k*k)
	delta := 0.0
	for i, r := range P {
		s := 0.0
		for j, v := range r {
			a[i*k+j] = v
			at[j*k+i] = v
			s += v
		}
		// the row stands for r/s: within |1/s − 1| entrywise, plus the
		// rounding of the sum
		delta = max(delta, math.Abs(1/s-1)+float64(k+1)*unitRound)
	}
	// a dot product of length k: γ_k = k·u/(1 − k·u); the subtraction of
	// the bound and its product: 4u more
	gk := float64(k) * unitRound / (1 - float64(k)*unitRound)
	g := gk + 4*unitRound
	one := make([]float64, k)
	for i := range one {
		one[i] = 1
	}
	// |X|·A is itself computed: within γ_k of the exact, so the bound is
	// taken (1 + 2γ_k) times larger
	rel := (g + delta) * (1 + 2*gk)
	return &fnChain{
		k:     k,
		fwd:   &fnSide{k: k, A: blas64.General{Rows: k, Cols: k, Stride: k, Data: a}, w: one, relErr: rel, sp: newSparseRows(a, k)},
		bwd:   &fnSide{k: k, A: blas64.General{Rows: k, Cols: k, Stride: k, Data: at}, w: pi, relErr: rel, sp: newSparseRows(at, k)},
		pi:    pi,
		piErr: 2*piErr0 + 2*delta + 4*unitRound,
	}
}

// cost is the multiply-adds of one step of one pair, the larger side's.
func (fc *fnChain) cost() float64 { return max(fc.fwd.cost(), fc.bwd.cost()) }

// fnBatch is the state of a batch of pairs: X and its derivative D in t.
type fnBatch struct {
	pairs [][2]int
	t     []float64
	X, D  blas64.General
	Y, E  blas64.General // scratch
}

func newFnBatch(k int, pairs [][2]int, t []float64) *fnBatch {
	p := len(pairs)
	mk := func() blas64.General { return blas64.General{Rows: p, Cols: k, Stride: k, Data: make([]float64, p*k)} }
	return &fnBatch{pairs: pairs, t: t, X: mk(), D: mk(), Y: mk(), E: mk()}
}

// start sets row j to t_j·e_{a'} − e_a (and its derivative e_{a'}).
func (fb *fnBatch) start(k int) {
	clear(fb.X.Data)
	clear(fb.D.Data)
	for j, pr := range fb.pairs {
		fb.X.Data[j*k+pr[0]] = -1
		fb.X.Data[j*k+pr[1]] = fb.t[j]
		fb.D.Data[j*k+pr[1]] = 1
	}
}

// errNoPast: a start other than stationary on a chain with a zero in P,
// whose past has no finite Birkhoff bound (docs/math.md §8.5).
var errNoPast = errors.New("pairwise: no finite bound on the past for this start")

// gemm sets c = a·b (contiguous rows) by the project's vector kernels,
// in gonum's order and roundings (internal/gemm).
func gemm(c, a, b blas64.General) {
	gemmk.Mul(c.Data, a.Data, b.Data, a.Rows, a.Cols, b.Cols)
}

// estimate runs N plain steps of the recursion and its derivative in t for
// every row, and returns g_j = X_N·w and g'_j. The rows are independent:
// chunks of them run on their own goroutines (inRows).
func (s *fnSide) estimate(ctx context.Context, fb *fnBatch, R float64, N int) ([]float64, []float64, error) {
	return s.estimateR(ctx, fb, constR(R), N, s.w)
}

// constR is the ratio R at every step.
func constR(R float64) func(int) float64 { return func(int) float64 { return R } }

// estimateR is estimate with the ratio R(n) at step n (n = 0, 1, …: a
// finite stream's per-step budgets, 1 at a missing reading) and the
// exactness test's weights w.
func (s *fnSide) estimateR(ctx context.Context, fb *fnBatch, rAt func(int) float64, N int, w []float64) ([]float64, []float64, error) {
	k := s.k
	fb.start(k)
	p := len(fb.pairs)
	err := inRows(p, func(r0, r1 int) error {
		rows := func(m blas64.General) blas64.General {
			return blas64.General{Rows: r1 - r0, Cols: k, Stride: k, Data: m.Data[r0*k : r1*k]}
		}
		X, D, Y, E := rows(fb.X), rows(fb.D), rows(fb.Y), rows(fb.E)
		for n := 0; n < N; n++ {
			if n%32 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			s.mul(Y, X)
			s.mul(E, D)
			R := rAt(n)
			for i, y := range Y.Data {
				d := E.Data[i]
				if y < 0 || (y == 0 && d < 0) {
					y, d = R*y, R*d
				}
				X.Data[i], D.Data[i] = y, d
			}
			if n%8 == 7 {
				rescaleRows(X.Data, D.Data, k)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	g, dg := make([]float64, p), make([]float64, p)
	for j := range p {
		for x := range k {
			g[j] += fb.X.Data[j*k+x] * w[x]
			dg[j] += fb.D.Data[j*k+x] * w[x]
		}
	}
	return g, dg, nil
}

// inRows runs f on contiguous chunks of the rows [0, p), one goroutine
// each (at most workers, at least fnChunkRows rows a chunk), and returns
// the first error.
func inRows(p int, f func(r0, r1 int) error) error {
	nw := min(workers, p/fnChunkRows)
	if nw <= 1 {
		return f(0, p)
	}
	errs := make([]error, nw)
	var wg sync.WaitGroup
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = f(p*w/nw, p*(w+1)/nw)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fnChunkRows is the least number of pairs worth a goroutine of their own.
const fnChunkRows = 4

// exact returns, for every pair, the least t ≥ lo_j with ψ_N(t)·w ≥ 0 —
// the exact supremum over horizons ≤ N (up to rounding; an estimate, not
// a bound) — by Newton's method: t ↦ ψ_N(t)·w is concave, increasing and
// piecewise linear, so the tangent at any point has its root at or below
// the least root (a supergradient of a concave function), and from below
// the iteration increases to the root, ending in finitely many steps. It
// starts at start_j when given (any value: a warm start from another R or
// horizon), else at lo_j, which must be at most the answer (1 forward,
// π_a/π_{a'} backward).
func (s *fnSide) exact(ctx context.Context, pairs [][2]int, R float64, N int, lo []float64) ([]float64, error) {
	t, _, err := s.exactCounted(ctx, pairs, constR(R), N, s.w, lo, nil, nil, 0)
	return t, err
}

// exactCounted is exact, also returning the number of pairs' N-step runs
// made (a run of the recursion for one pair over N steps).
// charge, when not nil, is told each run's pairs as it ends, and stops
// the solve with its error. runs > 0 caps the Newton steps (a ranking's
// estimates, below the root from lo), else 60.
// The ratio at step n is rAt(n), the test's weights w (s.w, or a finite
// stream's start).
func (s *fnSide) exactCounted(ctx context.Context, pairs [][2]int, rAt func(int) float64, N int, w, lo, start []float64, charge func(pairs int) error, runs int) ([]float64, int, error) {
	t := append([]float64(nil), lo...)
	if start != nil {
		for j := range t {
			t[j] = max(t[j], start[j])
		}
	}
	done := 0
	active := make([]int, len(pairs))
	for j := range active {
		active[j] = j
	}
	below := make([]bool, len(pairs)) // t_j known ≤ the root
	for j := range below {
		below[j] = start == nil
	}
	if runs <= 0 {
		runs = 60
	}
	for it := 0; it < runs && len(active) > 0; it++ {
		sub := make([][2]int, len(active))
		ts := make([]float64, len(active))
		for i, j := range active {
			sub[i], ts[i] = pairs[j], t[j]
		}
		fb := newFnBatch(s.k, sub, ts)
		g, dg, err := s.estimateR(ctx, fb, rAt, N, w)
		if err != nil {
			return nil, done, err
		}
		done += len(active)
		if charge != nil {
			if err := charge(len(active)); err != nil {
				return nil, done, err
			}
		}
		next := active[:0]
		for i, j := range active {
			switch {
			case !(dg[i] > 0) || math.IsNaN(g[i]):
				if !below[j] { // no usable tangent: restart from the floor
					t[j], below[j] = lo[j], true
					next = append(next, j)
				}
				continue
			case g[i] >= 0 && below[j]:
				continue // t_j is the least root
			}
			nt := max(lo[j], t[j]-g[i]/dg[i])
			if below[j] && !(nt > t[j]*(1+1e-11)) {
				t[j] = max(t[j], nt)
				continue
			}
			t[j], below[j] = nt, true
			next = append(next, j)
		}
		active = next
	}
	return t, done, nil
}

// certify runs the rounding-safe recursion (docs/math.md §8.12) from the
// given t for at most N steps and reports, per pair, whether the computed
// lower bound on ψ_n became ≥ 0 componentwise for some n ≤ N: then the
// exact ψ_n is ≥ 0 and t bounds every message's ratio. Each step lowers
// the computed product by relErr·(|X|·A), a bound on its error, and uses
// R rounded up, so the computed rows stay below the exact ones (ρ and
// X ↦ X·A are monotone). It also returns the pairs' steps done (the sum
// over steps of the pairs not yet certified).
func (s *fnSide) certify(ctx context.Context, pairs [][2]int, t []float64, R float64, N int) ([]bool, int, error) {
	return s.certifyR(ctx, pairs, t, constR(R), N, nil, 0)
}

// certifyR is certify with the ratio R(n) at step n (each rounded up
// here) and, when w is not nil, the exactness test of part (ii) after the
// N-th step for the rows not yet ≥ 0: ψ_N·w ≥ 0, computed as
// Σ w_x ψ̂_x − (γ_k + wErr)·Σ w_x|ψ̂_x| (the sum's rounding and the
// weights' relative error wErr), proves that t bounds every message of
// horizon N (not of every horizon).
func (s *fnSide) certifyR(ctx context.Context, pairs [][2]int, t []float64, rAt func(int) float64, N int, w []float64, wErr float64) ([]bool, int, error) {
	k := s.k
	ok := make([]bool, len(pairs))
	fb := newFnBatch(k, pairs, t)
	fb.start(k)
	abs := make([]float64, len(pairs)*k)
	var mu sync.Mutex
	steps := 0
	err := inRows(len(pairs), func(r0, r1 int) error {
		idx := make([]int, r1-r0)
		for j := range idx {
			idx[j] = r0 + j
		}
		sub := func(d []float64, p int) blas64.General {
			return blas64.General{Rows: p, Cols: k, Stride: k, Data: d[r0*k : (r0+p)*k]}
		}
		done := 0
		defer func() {
			mu.Lock()
			steps += done
			mu.Unlock()
		}()
		for n := 1; n <= N && len(idx) > 0; n++ {
			if n%32 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			p := len(idx)
			X, Y, Ab, Eb := sub(fb.X.Data, p), sub(fb.Y.Data, p), sub(abs, p), sub(fb.E.Data, p)
			for i, v := range X.Data {
				Ab.Data[i] = math.Abs(v)
			}
			s.mul(Y, X)
			s.mul(Eb, Ab)
			done += p
			Rup := rAt(n-1) * (1 + 4*unitRound)
			// keep the rows not yet certified, in place
			kept := 0
			for i := range p {
				row := Y.Data[i*k : (i+1)*k]
				erow := Eb.Data[i*k : (i+1)*k]
				nonneg := true
				for x := range k {
					c := row[x] - s.relErr*erow[x]
					if !(c >= 0) { // NaN (an overflow) certifies nothing
						c *= Rup
						nonneg = false
					}
					row[x] = c
				}
				if nonneg {
					ok[idx[i]] = true // rows of this chunk only
					continue
				}
				if n%8 == 0 {
					rescaleRows(row, nil, k)
				}
				copy(X.Data[kept*k:(kept+1)*k], row)
				idx[kept] = idx[i]
				kept++
			}
			idx = idx[:kept]
		}
		if w != nil {
			// part (ii) on the rows left, which hold ψ̂_N
			gk := float64(k) * unitRound / (1 - float64(k)*unitRound)
			for i, j := range idx {
				row := fb.X.Data[(r0+i)*k : (r0+i+1)*k]
				sum, abs := 0.0, 0.0
				for x, v := range row {
					sum += w[x] * v
					abs += w[x] * math.Abs(v)
				}
				ok[j] = sum-(2*gk+wErr)*abs*(1+2*gk) >= 0
			}
		}
		return nil
	})
	if err != nil {
		return nil, steps, err
	}
	return ok, steps, nil
}

// lower is each pair's least possible answer: the ratio 1 of the message
// 1, in the side's variable (t̃ = t·π_a/π_{a'} backward).
func (fc *fnChain) lower(pairs [][2]int, backward bool) []float64 {
	lo := make([]float64, len(pairs))
	for j, pr := range pairs {
		lo[j] = 1
		if backward {
			lo[j] = fc.pi[pr[0]] / fc.pi[pr[1]]
		}
	}
	return lo
}

// noFunctional, when set (tests of the plans' certificates), skips the
// functional recursion.
var noFunctional bool

// fnTrace, when set (tests), traces the search.
var fnTrace func(format string, args ...any)

// fnSolver calibrates one stationary chain by the functional recursion.
type fnSolver struct {
	fc    *fnChain
	pairs [][2]int
	N     int     // the estimates' horizon
	tuned bool    // N was chosen (estimateLoss); the certificate may double it
	work  float64 // multiply-adds so far
	max   float64 // the limit (0: none)
	// the last estimates and the R they were made at (warm starts)
	lastR float64
	lastN int
	// gap is 1 − τ(P) (rounded down) for a start other than stationary,
	// whose past is bounded by β* = e/(1 − τ); 0: stationary, the past
	// by the recursion on P*
	gap    float64
	lastF  []float64
	lastBt []float64
	// runs caps the estimates' Newton steps (0: none; a ranking's)
	runs int
	// the ratios the last certificate (certifyAt) proved, per pair
	certF, certBt []float64
	// parent, when set, is the solver of every pair this one searches a
	// few of (tiered): the work is counted and limited there
	parent *fnSolver
}

func newFnSolver(ctx context.Context, ch *markov.Chain, maxWork float64) (*fnSolver, error) {
	k := ch.K()
	var pi []float64
	gap := 0.0
	if ch.Init == markov.InitStationary {
		var err error
		if pi, err = markov.StationaryGTH(ctx, ch.P); err != nil {
			return nil, err
		}
	} else {
		// a given or any start: the past by Birkhoff's contraction,
		// uniformly over starts (docs/math.md §8.5, §8.12)
		if gap = tpl.BirkhoffGap(ch.P); !(gap > 0) {
			return nil, errNoPast
		}
		pi = make([]float64, k) // not used
		for i := range pi {
			pi[i] = 1 / float64(k)
		}
	}
	fc := newFnChain(ch.P, pi, markov.GTHError(k))
	fs := &fnSolver{fc: fc, N: 8, max: maxWork, gap: gap}
	for a := range k {
		for b := range k {
			if a != b {
				fs.pairs = append(fs.pairs, [2]int{a, b})
			}
		}
	}
	return fs, nil
}

// charge counts steps·pairs·k² multiply-adds and stops at the limit.
func (fs *fnSolver) charge(steps, pairs int) error {
	if fs.parent != nil {
		return fs.parent.charge(steps, pairs)
	}
	fs.work += float64(steps) * float64(pairs) * fs.fc.cost()
	if fs.max > 0 && fs.work > fs.max {
		return fmt.Errorf("%w: about %.2g multiply-adds done, over the limit %.2g", ErrWork, fs.work, fs.max)
	}
	return nil
}

// estimates returns F_N and B̃_N (B̃ = B·π_a/π_{a'}) of every pair at R.
func (fs *fnSolver) estimates(ctx context.Context, R float64) ([]float64, []float64, error) {
	fc := fs.fc
	if fs.lastF != nil && R == fs.lastR && fs.lastN == fs.N {
		return fs.lastF, fs.lastBt, nil
	}
	loF, loB := fc.lower(fs.pairs, false), fc.lower(fs.pairs, true)
	// warm starts: the last answers, their logarithms scaled as R's (the
	// suprema's logarithms are nearly proportional to log R); any start
	// is safe (exactCounted)
	var sF, sB []float64
	if fs.lastF != nil {
		c := math.Log(R) / math.Log(fs.lastR)
		sF, sB = make([]float64, len(fs.pairs)), make([]float64, len(fs.pairs))
		for j, pr := range fs.pairs {
			sF[j] = math.Pow(fs.lastF[j], c)
			if fs.lastBt != nil {
				r := fc.pi[pr[0]] / fc.pi[pr[1]]
				sB[j] = math.Pow(fs.lastBt[j]/r, c) * r
			}
		}
	}
	charge := func(pairs int) error { return fs.charge(2*fs.N, pairs) }
	F, itF, err := fc.fwd.exactCounted(ctx, fs.pairs, constR(R), fs.N, fc.fwd.w, loF, sF, charge, fs.runs)
	if err != nil {
		return nil, nil, err
	}
	var Bt []float64
	itB := 0
	if fs.gap == 0 {
		Bt, itB, err = fc.bwd.exactCounted(ctx, fs.pairs, constR(R), fs.N, fc.bwd.w, loB, sB, charge, fs.runs)
		if err != nil {
			return nil, nil, err
		}
	}
	fs.lastR, fs.lastN, fs.lastF, fs.lastBt = R, fs.N, F, Bt
	if fnTrace != nil {
		fnTrace("estimates at R %.9g, N %d: %d and %d pairs' Newton runs (work %.3g)", R, fs.N, itF, itB, fs.work)
	}
	return F, Bt, nil
}

// lossOf is e + max over pairs of log F + log B, and the pair; up rounds
// every ratio up by that factor (1 for estimates).
func (fs *fnSolver) lossOf(e float64, F, Bt []float64, up float64) (float64, int, int) {
	best, ba, bb := math.Inf(-1), -1, -1
	for j, pr := range fs.pairs {
		var b float64
		if fs.gap == 0 {
			b = Bt[j]
		}
		if v := fs.pairLogs(pr, F[j], b, up); v > best || math.IsNaN(v) {
			best, ba, bb = v, pr[0], pr[1]
		}
	}
	return fs.withStep(e, best), ba, bb
}

// pairLogs is log F + log B of a pair from F and B̃ = B·π_a/π_{a'} (not
// used with a start other than stationary), each rounded up by up.
func (fs *fnSolver) pairLogs(pr [2]int, F, Bt, up float64) float64 {
	v := math.Log(F * up)
	if fs.gap == 0 {
		B := Bt * fs.fc.pi[pr[1]] / fs.fc.pi[pr[0]]
		v += math.Log(B * up * (1 + fs.fc.piErr))
	}
	return v
}

// withStep adds the secret's own step at budget e to the largest pairLogs,
// rounded up.
func (fs *fnSolver) withStep(e, best float64) float64 {
	if fs.gap > 0 {
		// β* = e/(1 − τ) holds the secret's own step (§8.5)
		return (e/fs.gap*(1+2*unitRound) + best) * (1 + 4*unitRound)
	}
	return (e + best) * (1 + 4*unitRound)
}

// estimateLoss is the loss of the horizon-N estimates at budget e, the
// horizon doubled until it moves the loss by less than 10⁻⁹ relative.
func (fs *fnSolver) estimateLoss(ctx context.Context, e float64) (float64, error) {
	R := math.Exp(e)
	F, Bt, err := fs.estimates(ctx, R)
	if err != nil {
		return 0, err
	}
	l, _, _ := fs.lossOf(e, F, Bt, 1)
	if fs.tuned {
		return l, nil
	}
	fs.tuned = true
	for fs.N < fnMaxHorizon {
		// one Newton step at horizon 2N from the horizon-N answers (which
		// are at most the 2N ones): when it moves the loss by less than
		// 10⁻⁹, N is kept; a full solve at 2N costs several such runs
		F2, B2, err := fs.stepAt(ctx, R, 2*fs.N, F, Bt)
		if err != nil {
			return 0, err
		}
		if l2, _, _ := fs.lossOf(e, F2, B2, 1); l2-l <= 1e-9*l2 {
			return l, nil
		}
		fs.N *= 2
		if F, Bt, err = fs.estimates(ctx, R); err != nil {
			return 0, err
		}
		l, _, _ = fs.lossOf(e, F, Bt, 1)
	}
	return l, nil
}

// stepAt is one Newton step at horizon N from F and B̃ (each pair's
// answers at a shorter horizon, so below the ones at N): a lower estimate
// of the horizon-N answers.
func (fs *fnSolver) stepAt(ctx context.Context, R float64, N int, F, Bt []float64) ([]float64, []float64, error) {
	step := func(side *fnSide, t []float64) ([]float64, error) {
		fb := newFnBatch(fs.fc.k, fs.pairs, append([]float64(nil), t...))
		g, dg, err := side.estimate(ctx, fb, R, N)
		if err == nil {
			err = fs.charge(2*N, len(fs.pairs))
		}
		if err != nil {
			return nil, err
		}
		out := append([]float64(nil), t...)
		for j := range out {
			if g[j] < 0 && dg[j] > 0 {
				out[j] -= g[j] / dg[j]
			}
		}
		return out, nil
	}
	F2, err := step(fs.fc.fwd, F)
	if err != nil || fs.gap > 0 {
		return F2, nil, err
	}
	B2, err := step(fs.fc.bwd, Bt)
	return F2, B2, err
}

// fnMaxHorizon caps the horizon: chains that need more (periodic ones
// never certify; very slowly mixing ones) fall back to the other bounds.
const fnMaxHorizon = 1 << 16

// certifyAt checks, at budget e, the estimates inflated by 1+η on both
// sides by the rounding-safe recursion and returns the certified loss
// (+Inf when some pair was not certified within 4N steps).
func (fs *fnSolver) certifyAt(ctx context.Context, e, eta float64) (Result, error) {
	R := math.Exp(e) * (1 + 2*unitRound)
	F, Bt := fs.lastF, fs.lastBt
	tF, tB := make([]float64, len(F)), make([]float64, len(Bt))
	for j := range F {
		tF[j] = F[j] * (1 + eta)
	}
	for j := range Bt {
		tB[j] = Bt[j] * (1 + eta)
	}
	sides := []*fnSide{fs.fc.fwd, fs.fc.bwd}
	if fs.gap > 0 {
		sides = sides[:1]
	}
	for i, side := range sides {
		t := tF
		if i == 1 {
			t = tB
		}
		ok, steps, err := side.certify(ctx, fs.pairs, t, R, 4*fs.N)
		if err == nil {
			err = fs.charge(2*steps, 1)
		}
		if err != nil {
			return Result{}, err
		}
		for _, o := range ok {
			if !o {
				return Result{Loss: math.Inf(1), A: -1, B: -1}, nil
			}
		}
	}
	fs.certF, fs.certBt = tF, tB
	l, a, b := fs.lossOf(e, tF, tB, 1+2*unitRound)
	return Result{Loss: l, A: a, B: b}, nil
}

// calibrate finds the least per-bin scale b whose certified loss at
// budget s/b is at most eps(1 − Slack): a secant search on the estimates
// (the loss is nearly ∝ 1/b) aimed aimMargin below ε, then the certificate
// at the found b, raised a little until it fits.
func (fs *fnSolver) calibrate(ctx context.Context, eps, s, guess float64) (float64, Result, error) {
	target := eps * (1 - Slack)
	b := guess
	// The horizon is chosen where the search starts; at the scale found it
	// may be too short (the estimates too low), so it is chosen again
	// there, and doubled when a certificate fails for want of steps: each
	// time the search restarts from the scale reached.
	for round := 0; round < 12; round++ {
		var err error
		if b, err = fs.search(ctx, eps, s, b); err != nil || math.IsInf(b, 1) {
			return b, Result{}, err
		}
		n0 := fs.N
		fs.tuned = false
		if _, err := fs.estimateLoss(ctx, s/b); err != nil {
			return 0, Result{}, err
		}
		if fs.N > n0 {
			continue
		}
		for try := 0; try < 8; try++ {
			e := s / b
			if _, err := fs.estimateLoss(ctx, e); err != nil {
				return 0, Result{}, err
			}
			r, err := fs.certifyAt(ctx, e, eps*aimMargin/8)
			if err != nil {
				return 0, Result{}, err
			}
			if fnTrace != nil {
				fnTrace("certify b %.12g: %.12g (target %.12g, N %d)", b, r.Loss, target, fs.N)
			}
			if r.Loss <= target {
				return b, r, nil
			}
			if math.IsInf(r.Loss, 1) {
				break
			}
			b *= 1 + 4e-6*math.Pow(2, float64(try))
		}
		if fs.N >= fnMaxHorizon {
			return math.Inf(1), Result{}, nil
		}
		fs.N *= 2 // the horizon was too short for the certificate
	}
	return math.Inf(1), Result{}, nil
}

// search is a secant search (the loss is nearly ∝ 1/b) on the estimates
// at the current horizon for the scale whose estimated loss is aimMargin
// below ε, from guess; +Inf when none is found.
func (fs *fnSolver) search(ctx context.Context, eps, s, guess float64) (float64, error) {
	aim := eps * (1 - aimMargin)
	// the secret's own step costs s/b: no b ≤ s/ε reaches ε
	lo, hi := s/eps, math.Inf(1)
	b := max(guess, 2*lo)
	var pb, pl float64
	for it := 0; it < 60; it++ {
		l, err := fs.estimateLoss(ctx, s/b)
		if err != nil {
			return 0, err
		}
		if math.IsNaN(l) || math.IsInf(l, 0) {
			l = math.Inf(1) // an overflow: b is far too small
		}
		if fnTrace != nil {
			fnTrace("search b %.12g: estimate %.12g (N %d)", b, l, fs.N)
		}
		if l > aim {
			lo = b
		} else {
			hi = b
		}
		if math.IsInf(l, 1) {
			pb, pl, b = 0, 0, 2*b
			if !math.IsInf(hi, 1) {
				b = (lo + hi) / 2
			}
			continue
		}
		if math.Abs(l/aim-1) < 1e-8 || hi-lo < 1e-10*hi {
			if l > aim {
				hi = b * l / aim * (1 + 1e-9)
			}
			break
		}
		var nb float64
		if pb > 0 && pl != l && pl > 0 && l > 0 {
			slope := (math.Log(l) - math.Log(pl)) / (math.Log(b) - math.Log(pb))
			if slope >= 0 {
				slope = -1
			}
			nb = b * math.Exp((math.Log(aim)-math.Log(l))/slope)
		} else {
			nb = b * l / aim
		}
		if nb <= lo || nb >= hi {
			nb = (lo + hi) / 2
			if math.IsInf(hi, 1) {
				nb = 2 * b
			}
		}
		pb, pl, b = b, l, nb
	}
	return hi, nil
}

// fnMaxStates and fnMaxWork bound where the functional recursion runs by
// default (fnWork): every ordered pair is certified, tiered — ranked and
// covered in about fnWorkPerPair·k² multiply-adds each (a horizon-16
// ranking of at most 3 Newton runs a side; a few dozen steps to cover
// it), and the pairs nearest the limit searched over the mixing time
// (the UCI house's 51 levels: 1.3·10⁹ estimated up front, 1.3·10¹⁰ done,
// most of it the exact search of its 16 nearest pairs over 1,024 steps;
// a random dense chain of 101 states: 2.1·10¹⁰ estimated, 2.2·10¹⁰
// done). Chains of more states, or whose estimate is over the work left,
// are left to the plans' certificates (§8.11).
const (
	fnMaxStates   = 128
	fnMaxWork     = 3e10
	fnWorkPerPair = 200
)

// fnStream calibrates one chain of an unbounded stream by the functional
// recursion when it applies — a stationary start, an irreducible chain of
// at most fnMaxStates states — within the work left (≤ 0: fnMaxWork) and
// fnMaxWork. ok is false, with no error, when it does not apply, runs out
// of work or certifies nothing (periodic chains): the caller falls back.
// It returns the work done.
func fnStream(ctx context.Context, ch *markov.Chain, eps, s, guess, left float64) (float64, Result, float64, bool, error) {
	limit, ok := fnApplies(ch, left)
	if !ok {
		return 0, Result{}, 0, false, nil
	}
	fs, err := newFnSolver(ctx, ch, limit)
	if err != nil {
		if ctx.Err() != nil {
			return 0, Result{}, 0, false, err
		}
		return 0, Result{}, 0, false, nil
	}
	b, r, err := fs.calibrateTiered(ctx, eps, s, guess)
	switch {
	case ctx.Err() != nil:
		return 0, Result{}, fs.work, false, ctx.Err()
	case errors.Is(err, ErrWork):
		return 0, Result{}, fs.work, false, nil
	case err != nil:
		return 0, Result{}, fs.work, false, err
	case math.IsInf(b, 1):
		return 0, Result{}, fs.work, false, nil
	}
	if r.Scalar, err = scalarLoss(ch, 0, b, s, nil); err != nil {
		return 0, Result{}, fs.work, false, err
	}
	r.BirkhoffPast = fs.gap > 0
	return b, r, fs.work, true, nil
}

// rescaleRows divides every row of X (and the same row of D, when not nil)
// by the power of two nearest its largest magnitude: the recursion is
// positively homogeneous (ρ(cψ) = cρ(ψ), c > 0), so signs, the root of
// ψ_N(t)·w and Newton's ratio g/g' are unchanged, and a power of two
// scales exactly; without it the negative parts grow as Rⁿ and overflow.
func rescaleRows(X, D []float64, k int) {
	for r := 0; r+k <= len(X); r += k {
		m := 0.0
		for _, v := range X[r : r+k] {
			m = max(m, math.Abs(v))
		}
		if m == 0 || math.IsInf(m, 0) || math.IsNaN(m) {
			continue
		}
		_, e := math.Frexp(m)
		for i := r; i < r+k; i++ {
			X[i] = math.Ldexp(X[i], -e)
			if D != nil {
				D[i] = math.Ldexp(D[i], -e)
			}
		}
	}
}

// HowCertified says, for a report, which certificate gave an unbounded
// stream's pairwise bound (r from Calibrate with T = 0).
func HowCertified(r Result) string {
	switch {
	case r.Functional && r.BirkhoffPast:
		return "the pairwise bound is the functional recursion's for the future, exact and certified (docs/math.md §8.12), and Birkhoff's contraction for the past, uniformly over initial distributions (§8.5)"
	case r.Functional:
		return "the pairwise bound is the functional recursion's: the exact noise limit of the stream, certified (docs/math.md §8.12)"
	}
	return fmt.Sprintf("the pairwise bound is the transport plans' certificate (docs/math.md §8.11): the exact functional recursion (§8.12) runs on irreducible chains of at most %d states where its estimate, about %d·k⁴ multiply-adds for k states, fits the work limit (%.0g at most) and, beyond 24 states, is at most the plans'", fnMaxStates, fnWorkPerPair, fnMaxWork)
}

// fnLoss is the functional recursion's certified loss of an unbounded
// stream at per-step budget e (per-bin scale s/e), where it runs (as
// fnStream), tiered (lossTiered): the pairs nearest the limit at
// (1 + 10⁻⁷) times their estimates. ok is false, with no error, where it
// does not apply or certifies nothing within the work. It returns the
// work done.
func fnLoss(ctx context.Context, ch *markov.Chain, e, left float64) (Result, float64, bool, error) {
	limit, ok := fnApplies(ch, left)
	if !ok {
		return Result{}, 0, false, nil
	}
	fs, err := newFnSolver(ctx, ch, limit)
	if err != nil {
		return Result{}, 0, false, ctx.Err()
	}
	r, err := fs.lossTiered(ctx, e)
	switch {
	case ctx.Err() != nil || err != nil && !errors.Is(err, ErrWork):
		return Result{}, fs.work, false, err
	case err != nil || math.IsInf(r.Loss, 1):
		return Result{}, fs.work, false, nil
	}
	r.Functional, r.BirkhoffPast = true, fs.gap > 0
	return r, fs.work, true, nil
}

// fnApplies says whether the functional recursion runs on ch (fnWork)
// and its work limit: fnMaxWork, or the work left (workLeft) when that is
// smaller; false also when its estimate is over that limit.
func fnApplies(ch *markov.Chain, left float64) (float64, bool) {
	w, ok := fnWork(ch)
	if !ok {
		return 0, false
	}
	limit, ok := fnLimit(fnMaxWork, left)
	if !ok || w > limit {
		return 0, false // refused up front: its estimate is over the limit
	}
	return limit, true
}

// rowCost is the multiply-adds of one row's product with P (or Pᵀ, the
// same count): its nonzeros when sparse (fnSparse), else k².
func rowCost(P [][]float64) float64 {
	k, nnz := len(P), 0
	for _, r := range P {
		for _, v := range r {
			if v != 0 {
				nnz++
			}
		}
	}
	if float64(nnz) > fnSparse*float64(k*k) {
		return float64(k * k)
	}
	return float64(nnz)
}

// fnWork is the functional recursion's estimated work on ch — ranking and
// covering every ordered pair, fnWorkPerPair·k² multiply-adds each — and
// whether it runs there by default: an irreducible chain (any start) of
// at most fnMaxStates states, and, beyond 24 states, only where the
// estimate is at most the plans' (cfWork + lpWork): a slowly mixing
// sparse chain (banded) costs the recursion its mixing time in every
// pair, and the plans little, so the limit is left to them.
func fnWork(ch *markov.Chain) (float64, bool) {
	k := ch.K()
	if noFunctional || k > fnMaxStates || k < 2 || ch.Init == markov.InitStationary && !ch.Irreducible() {
		return 0, false
	}
	// priced as dense even when P is sparse: a sparse chain is typically
	// banded and mixes slowly, its nearest pairs needing horizons of tens
	// of thousands of steps (the banded k = 101: 1.9·10¹¹ multiply-adds
	// to its limit), where the plans certify in less
	kf := float64(k)
	w := fnWorkPerPair * kf * kf * kf * (kf - 1)
	if k > 24 && w > cfWork(ch)+lpWork(ch) {
		return w, false
	}
	return w, true
}

// workLeft is the work a computation may still do under a limit max
// (≤ 0: none) of which used is spent: 0 for no limit, −1 when spent.
func workLeft(max, used float64) float64 {
	switch {
	case max <= 0:
		return 0
	case max > used:
		return max - used
	}
	return -1
}

// fnLimit is the functional recursion's own limit base, lowered to the
// work left (workLeft); false when none is left.
func fnLimit(base, left float64) (float64, bool) {
	switch {
	case left < 0:
		return 0, false
	case left > 0:
		return min(base, left), true
	}
	return base, true
}
