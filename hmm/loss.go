package hmm

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pufferfish-privacy/pufferfish/epsilon"
)

// Result is the exact privacy loss over observation sequences of lengths
// 1..n and every secret pair given.
type Result struct {
	// Ratio is the largest likelihood ratio max(P_π(ω)/P_τ(ω),
	// P_τ(ω)/P_π(ω)) as a reduced fraction (≥ 1); nil when it is infinite
	// (some ω is possible under one distribution only).
	Ratio *big.Rat
	// Loss is ln Ratio (+Inf when Ratio is nil).
	Loss float64
	// Witness is a maximising observation sequence (indices into
	// Model.Obs), Secret the name of the pair, and Larger says which
	// distribution gives it the larger probability ("pi" or "tau").
	Witness []int
	Secret  string
	Larger  string
	// Explored counts the observation sequences whose probabilities were
	// computed (the rest were pruned).
	Explored int64
}

// search holds the shared best for the parallel prefix-tree search.
type search struct {
	c        *compiled
	n        int
	mu       sync.Mutex
	inf      bool
	have     bool     // some sequence has been offered
	num, den *big.Int // best ratio num/den ≥ 1
	witness  []int
	secret   string
	larger   string
	explored atomic.Int64
	meter    *meter // the work and the context (nil: none)
	// target: a second, single-threaded pass that knows the best ratio
	// (num/den, or ∞ when targetInf) and stops at the first sequence in
	// search order attaining it, so the witness does not depend on how the
	// parallel pass was scheduled.
	target, targetInf, found bool
}

// exceeds reports whether a/b exceeds the current best (a, b > 0) — or,
// when looking for the canonical witness of a known best, reaches it.
func (s *search) exceeds(a, b *big.Int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inf {
		return false
	}
	c := new(big.Int).Mul(a, s.den).Cmp(new(big.Int).Mul(s.num, b))
	return c > 0 || s.target && c == 0
}

func (s *search) offer(a, b *big.Int, path []int, secret, larger string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.target {
		// canonical pass: the first sequence, in search order, that
		// attains the known best
		hit := b.Sign() == 0 && s.targetInf || b.Sign() != 0 && !s.targetInf && new(big.Int).Mul(a, s.den).Cmp(new(big.Int).Mul(s.num, b)) == 0
		if hit && !s.found {
			s.found = true
			s.witness = append([]int(nil), path...)
			s.secret, s.larger = secret, larger
		}
		return
	}
	if s.inf {
		return
	}
	if b.Sign() == 0 {
		s.inf = true
	} else if c := new(big.Int).Mul(a, s.den).Cmp(new(big.Int).Mul(s.num, b)); s.have && (c < 0 || c == 0 && !witnessBefore(secret, larger, path, s.secret, s.larger, s.witness)) {
		// Not larger; among equal ratios the witness is the first in a
		// fixed order, so parallel scheduling never changes the answer.
		return
	} else {
		s.num, s.den = new(big.Int).Set(a), new(big.Int).Set(b)
	}
	s.have = true
	s.witness = append([]int(nil), path...)
	s.secret, s.larger = secret, larger
}

// witnessBefore orders witnesses of equal ratio: by secret name, then the
// side, then shorter sequences, then lexicographically.
func witnessBefore(sec, larger string, path []int, sec2, larger2 string, path2 []int) bool {
	if sec != sec2 {
		return sec < sec2
	}
	if larger != larger2 {
		return larger < larger2
	}
	if len(path) != len(path2) {
		return len(path) < len(path2)
	}
	return slices.Compare(path, path2) < 0
}

// Loss computes the exact privacy loss of the model for every secret pair
// over observation sequences of lengths 1..n.
//
// The search walks the tree of observation prefixes depth first, carrying
// the forward vectors α_π(ω)[s] = P_π(ω, S_|ω| = s) and α_τ(ω) so that
// each extension costs one sparse step. A subtree is pruned when no
// extension can beat the best ratio found so far: for any continuation ω',
// P_π(ωω') = Σ_s (α_π(ω)·P)[s]·β_ω'(s) with the same β_ω' ≥ 0 under τ, so
// P_π(ωω')/P_τ(ωω') is a mediant of the ratios (α_π·P)[s]/(α_τ·P)[s] and
// lies between their minimum and maximum. Prefixes with probability zero
// under both distributions are dropped with their subtrees. The first
// observations (and the secret pairs) are shared out to GOMAXPROCS
// workers; the best ratio is shared for pruning.
func Loss(m *Model, secrets []Secret, n int) (Result, error) {
	return lossWith(unlimited, m, secrets, n)
}

// lossWith is Loss under o: refused up front over o's limits, stopped
// when its context ends or its work passes the limit.
func lossWith(o Options, m *Model, secrets []Secret, n int) (Result, error) {
	if err := checkInputs(m, secrets, n); err != nil {
		return Result{}, err
	}
	c, init := compile(m, secrets)
	t, err := o.check(newCostModel(m, len(secrets), c.bits), n)
	if err != nil {
		return Result{}, err
	}
	s := &search{c: c, n: n, num: big.NewInt(1), den: big.NewInt(1), meter: t}
	type job struct{ sec, obs int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker(c)
			for j := range jobs {
				pi := w.emit(init[j.sec][0], j.obs)
				tau := w.emit(init[j.sec][1], j.obs)
				w.path = append(w.path[:0], j.obs)
				w.visit(s, pi, tau, 1, secrets[j.sec].Name)
			}
		}()
	}
	for i := range secrets {
		for o := range c.m {
			jobs <- job{i, o}
		}
	}
	close(jobs)
	wg.Wait()
	if err := t.Err(); err != nil {
		return Result{}, err
	}
	if s.explored.Load() > maxExplored {
		return Result{}, tooLarge(m, len(secrets), n)
	}
	r := Result{Witness: s.witness, Secret: s.secret, Larger: s.larger, Explored: s.explored.Load()}
	canonicalWitness(c, init, secrets, n, s, &r)
	if err := t.Err(); err != nil {
		return Result{}, err
	}
	r.setRatio(s.inf, s.num, s.den)
	return r, nil
}

// setRatio records the best ratio num/den, or ∞, with its logarithm.
func (r *Result) setRatio(inf bool, num, den *big.Int) {
	if inf {
		r.Loss = math.Inf(1)
		return
	}
	r.Ratio = new(big.Rat).SetFrac(num, den)
	r.Loss = logRat(r.Ratio)
}

// canonicalWitness replaces the parallel pass's witness by the first
// sequence, in the fixed order of secrets, first observations and
// depth-first extensions, that attains the same loss (ties broken the
// same way on every run). It keeps the parallel witness if the pass
// would exceed maxExplored.
func canonicalWitness(c *compiled, init [][2]sparse, secrets []Secret, n int, best *search, r *Result) {
	s := &search{c: c, n: n, target: true, targetInf: best.inf, num: best.num, den: best.den, meter: best.meter}
	w := newWorker(c)
	for i := range secrets {
		for o := range c.m {
			pi, tau := w.emit(init[i][0], o), w.emit(init[i][1], o)
			w.path = append(w.path[:0], o)
			w.visit(s, pi, tau, 1, secrets[i].Name)
			if s.found || s.explored.Load() > maxExplored || s.meter.Err() != nil {
				break
			}
		}
		if s.found || s.explored.Load() > maxExplored || s.meter.Err() != nil {
			break
		}
	}
	if s.found && s.explored.Load() <= maxExplored {
		r.Witness, r.Secret, r.Larger = s.witness, s.secret, s.larger
	}
}

// hasZeroRatio reports whether some state is positive in a and zero in b.
func hasZeroRatio(a, b sparse) bool {
	in := make(map[int]bool, len(b.idx))
	for i, st := range b.idx {
		if b.val[i].Sign() != 0 {
			in[st] = true
		}
	}
	for i, st := range a.idx {
		if a.val[i].Sign() != 0 && !in[st] {
			return true
		}
	}
	return false
}

// logRat is ln r for a positive rational, accurate for any size
// (epsilon.LogRat).
func logRat(r *big.Rat) float64 { return epsilon.LogRat(r) }

type worker struct {
	c       *compiled
	scratch []*big.Int
	mark    []bool
	path    []int
}

func newWorker(c *compiled) *worker {
	w := &worker{c: c, scratch: make([]*big.Int, c.k), mark: make([]bool, c.k)}
	for i := range w.scratch {
		w.scratch[i] = new(big.Int)
	}
	return w
}

// emit returns v ∘ E[·, o] without zero entries.
func (w *worker) emit(v sparse, o int) sparse {
	var out sparse
	for i, s := range v.idx {
		e := w.c.emit[s][o]
		if e.Sign() == 0 {
			continue
		}
		out.idx = append(out.idx, s)
		out.val = append(out.val, new(big.Int).Mul(v.val[i], e))
	}
	return out
}

// step returns v·P.
func (w *worker) step(v sparse) sparse {
	var touched []int
	for i, s := range v.idx {
		for _, e := range w.c.trans[s] {
			if !w.mark[e.to] {
				w.mark[e.to] = true
				w.scratch[e.to].SetInt64(0)
				touched = append(touched, e.to)
			}
			w.scratch[e.to].Add(w.scratch[e.to], new(big.Int).Mul(v.val[i], e.p))
		}
	}
	out := sparse{idx: touched, val: make([]*big.Int, len(touched))}
	for i, s := range touched {
		out.val[i] = new(big.Int).Set(w.scratch[s])
		w.mark[s] = false
	}
	return out
}

// visit evaluates the prefix whose forward vectors are pi, tau (depth d)
// and its extensions.
func (w *worker) visit(s *search, pi, tau sparse, d int, name string) {
	if len(pi.idx) == 0 && len(tau.idx) == 0 || s.target && s.found {
		return
	}
	if s.explored.Add(1) > maxExplored {
		return // Loss reports errTooLarge
	}
	if !s.meter.add(d) {
		return // Loss reports the meter's error
	}
	sp, st := pi.sum(), tau.sum()
	if sp.Cmp(st) >= 0 {
		s.offer(sp, st, w.path, name, "pi")
	} else {
		s.offer(st, sp, w.path, name, "tau")
	}
	if d == s.n {
		return
	}
	wp, wt := w.step(pi), w.step(tau)
	if !w.mayExceed(s, wp, wt) {
		return
	}
	for o := range w.c.m {
		cp, ct := w.emit(wp, o), w.emit(wt, o)
		w.path = append(w.path, o)
		w.visit(s, cp, ct, d+1, name)
		w.path = w.path[:len(w.path)-1]
	}
}

// mayExceed reports whether some state's ratio (α_π·P)[s]/(α_τ·P)[s], or
// its inverse, beats the current best: otherwise no extension can.
func (w *worker) mayExceed(s *search, wp, wt sparse) bool {
	s.mu.Lock()
	inf, target, targetInf := s.inf, s.target, s.targetInf
	s.mu.Unlock()
	if inf {
		return false
	}
	if target && targetInf {
		// only an outcome impossible under one side reaches ∞
		return hasZeroRatio(wp, wt) || hasZeroRatio(wt, wp)
	}
	val := func(v sparse) map[int]*big.Int {
		m := make(map[int]*big.Int, len(v.idx))
		for i, st := range v.idx {
			m[st] = v.val[i]
		}
		return m
	}
	mp, mt := val(wp), val(wt)
	zero := new(big.Int)
	check := func(a, b map[int]*big.Int) bool {
		for st, x := range a {
			if x.Sign() == 0 {
				continue
			}
			y, ok := b[st]
			if !ok {
				y = zero
			}
			if y.Sign() == 0 || s.exceeds(x, y) {
				return true
			}
		}
		return false
	}
	return check(mp, mt) || check(mt, mp)
}

// checkInputs validates the arguments of Loss and LossFloat.
// maxLength is the longest observation sequence a search accepts, and
// maxExplored the most sequences it visits before giving up with
// errTooLarge (the search tree has up to |O|^n leaves; pruning usually
// visits far fewer, but not always).
const (
	maxLength   = 100_000
	maxExplored = 1 << 24
)

// errTooLarge is returned (wrapped) when a search would visit more than
// maxExplored sequences.
var errTooLarge = errors.New("hmm: search too large")

func tooLarge(m *Model, secrets, n int) error {
	return fmt.Errorf("%w: more than %d observation sequences visited without finishing (%d secret pairs × lengths 1..%d over %d observations: up to %.3g sequences); use a shorter length or fewer pairs", errTooLarge, maxExplored, secrets, n, len(m.Obs), float64(secrets)*math.Pow(float64(len(m.Obs)), float64(n)))
}

func checkInputs(m *Model, secrets []Secret, n int) error {
	if n < 1 {
		return fmt.Errorf("hmm: maximum length %d must be at least 1", n)
	}
	if n > maxLength {
		return fmt.Errorf("hmm: maximum length %d exceeds %d", n, maxLength)
	}
	if len(secrets) == 0 {
		return fmt.Errorf("hmm: no secret pair")
	}
	if err := m.Validate(); err != nil {
		return err
	}
	for _, sec := range secrets {
		if err := m.ValidateSecret(sec); err != nil {
			return err
		}
	}
	return nil
}
