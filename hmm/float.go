package hmm

import (
	"errors"
	"math"
	"math/big"
	"runtime"
	"sync"
	"sync/atomic"
)

// errUnderflow is returned by LossFloat when a positive probability became
// zero in float64 (an entry more than 2^1074 times smaller than the largest
// of its forward vector); the exact path must be used.
var errUnderflow = errors.New("hmm: float path underflow")

// FloatResult encloses the privacy loss computed in float64.
type FloatResult struct {
	// The largest log-likelihood ratio over all sequences lies in
	// [LossLo, LossHi]; both are +Inf when some sequence is possible under
	// one distribution only (decided exactly: zero patterns are tracked).
	LossLo, LossHi float64
	Witness        []int // a sequence attaining LossLo's estimate
	Secret, Larger string
	Explored       int64
}

// LossFloat is Loss in float64 with rigorous error bounds, for models too
// large for exact arithmetic. Forward vectors are rescaled by powers of two
// at every step (exact), so long sequences do not underflow; every entry is
// a sum of products of non-negative numbers, so after d steps over k states
// its relative error is at most γ_m = m·u/(1 − m·u), u = 2^−53,
// m = d·(k + 4) + k + 2 (conversions of P, E and the initial distribution,
// one product and up to k additions per step, the final sum). A ratio of two
// such sums is within the factor f = (1 + γ_m)/(1 − γ_m) of the truth, and
// the logarithm adds a few ulps; the enclosure [LossLo, LossHi] accounts for
// both. Pruning uses the same mediant bound as Loss, widened by f, against
// the best lower bound, so a pruned subtree never holds a ratio above
// LossLo. Cost: like Loss, with float64 operations instead of big.Int.
func LossFloat(m *Model, secrets []Secret, n int) (FloatResult, error) {
	return lossFloatWith(unlimited, m, secrets, n)
}

func lossFloatWith(o Options, m *Model, secrets []Secret, n int) (FloatResult, error) {
	if err := checkInputs(m, secrets, n); err != nil {
		return FloatResult{}, err
	}
	c := compileFloat(m)
	t, err := o.check(newCostModel(m, len(secrets), 0), n)
	if err != nil {
		return FloatResult{}, err
	}
	s := &fsearch{n: n, k: len(m.States), lo: math.Inf(-1), hi: math.Inf(-1), meter: t}
	type job struct{ sec, obs int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &fworker{c: c, s: s}
			for j := range jobs {
				if failed.Load() {
					continue
				}
				pi, tau := initFloat(m, secrets[j.sec])
				pi, ok1 := w.emit(pi, j.obs)
				tau, ok2 := w.emit(tau, j.obs)
				if !ok1 || !ok2 {
					failed.Store(true)
					continue
				}
				w.path = append(w.path[:0], j.obs)
				if !w.visit(pi, tau, 1, secrets[j.sec].Name) {
					failed.Store(true)
				}
			}
		}()
	}
	for i := range secrets {
		for o := range len(m.Obs) {
			jobs <- job{i, o}
		}
	}
	close(jobs)
	wg.Wait()
	if err := t.Err(); err != nil {
		return FloatResult{}, err
	}
	if s.explored.Load() > maxExplored {
		return FloatResult{}, tooLarge(m, len(secrets), n)
	}
	if failed.Load() {
		return FloatResult{}, errUnderflow
	}
	r := FloatResult{LossLo: max(s.lo, 0), LossHi: max(s.hi, 0), Witness: s.witness, Secret: s.secret, Larger: s.larger, Explored: s.explored.Load()}
	if s.inf {
		r.LossLo, r.LossHi = math.Inf(1), math.Inf(1)
	}
	return r, nil
}

// checkFloat decides ε-Pufferfish privacy from the float enclosure:
// Holds when LossHi ≤ ln of the enclosure's lower end of e^ε, Violated when
// LossLo exceeds its upper end, Undecided otherwise (then use Check).
func checkFloat(o Options, m *Model, secrets []Secret, n int, eps Epsilon) (Verdict, FloatResult, error) {
	r, err := lossFloatWith(o, m, secrets, n)
	if err != nil {
		return "", r, err
	}
	lo, hi := logDown(eps.Lo), logUp(eps.Hi)
	switch {
	case r.LossLo > hi:
		return Violated, r, nil
	case r.LossHi <= lo:
		return Holds, r, nil
	}
	return Undecided, r, nil
}

// logDown and logUp bound ln r from below and above. logRat subtracts two
// logarithms of 60-bit numbers (each ≈ 42, an ulp ≈ 7e-15) and adds a
// multiple of ln 2, so its error is below 1e-13·(1 + |ln r|); the margin
// 1e-12·(1 + |ln r|) covers it with room (a value that close to e^ε is left
// to the exact checker as undecided).
func logDown(r *big.Rat) float64 {
	l := logRat(r)
	return l - 1e-12*(1+math.Abs(l))
}

func logUp(r *big.Rat) float64 {
	l := logRat(r)
	return l + 1e-12*(1+math.Abs(l))
}

type fentry struct {
	to int
	p  float64
}

type fcompiled struct {
	trans [][]fentry
	emit  [][]float64
}

func compileFloat(m *Model) *fcompiled {
	c := &fcompiled{trans: make([][]fentry, len(m.Trans)), emit: make([][]float64, len(m.Emit))}
	for s, row := range m.Trans {
		for _, e := range row {
			if e.P.Sign() != 0 {
				p, _ := e.P.Float64()
				c.trans[s] = append(c.trans[s], fentry{e.To, p})
			}
		}
	}
	for s, row := range m.Emit {
		c.emit[s] = make([]float64, len(row))
		for o, p := range row {
			c.emit[s][o], _ = p.Float64()
		}
	}
	return c
}

// fvec is a non-negative vector v·2^exp with its support.
type fvec struct {
	idx []int
	val []float64
	exp int
}

func initFloat(m *Model, sec Secret) (fvec, fvec) {
	if sec.points() {
		return fvec{idx: []int{sec.PiAt}, val: []float64{1}}, fvec{idx: []int{sec.TauAt}, val: []float64{1}}
	}
	conv := func(d []*big.Rat) fvec {
		var v fvec
		for st, p := range d {
			if p != nil && p.Sign() != 0 {
				f, _ := p.Float64()
				v.idx = append(v.idx, st)
				v.val = append(v.val, f)
			}
		}
		return v
	}
	return conv(sec.Pi), conv(sec.Tau)
}

// normalise rescales v so its largest entry is in [1/2, 1) (exact).
func (v *fvec) normalise() {
	mx := 0.0
	for _, x := range v.val {
		mx = max(mx, x)
	}
	if mx == 0 {
		return
	}
	_, e := math.Frexp(mx)
	for i := range v.val {
		v.val[i] = math.Ldexp(v.val[i], -e)
	}
	v.exp += e
}

// sum is Σ val (the scale 2^exp kept apart).
func (v fvec) sum() float64 {
	s := 0.0
	for _, x := range v.val {
		s += x
	}
	return s
}

// logRatio returns ln((a·2^ea)/(b·2^eb)) as log(a/b) + shift with the
// shift (ea−eb)·ln 2 also returned, for the error bound in slack.
func logRatio(a, b float64, ea, eb int) (lr, shift float64) {
	shift = float64(ea-eb) * math.Ln2
	return math.Log(a/b) + shift, shift
}

type fsearch struct {
	n, k           int
	mu             sync.Mutex
	inf            bool
	lo, hi         float64 // best lower bound / largest upper bound seen
	est            float64 // estimate of the witness
	witness        []int
	secret, larger string
	explored       atomic.Int64
	meter          *meter
}

// slack is the half-width of the log-ratio enclosure at depth d for a
// log-ratio lr computed by logRatio with the given shift: the relative
// error of the two sums (factor f, see LossFloat) plus the rounding of the
// division, math.Log (an ulp), the shift (Ln2 and the product, 2 ulps of
// |shift|) and the final addition.
func (s *fsearch) slack(d int, lr, shift float64) float64 {
	const u = 0x1p-53
	m := float64(d*(s.k+4) + s.k + 2)
	g := m * u / (1 - m*u)
	return math.Log1p(2*g/(1-g)) + 8*u*(1+math.Abs(lr)+math.Abs(shift))
}

type fworker struct {
	c    *fcompiled
	s    *fsearch
	path []int
}

// emit returns v ∘ E[·, o], normalised; false on underflow.
func (w *fworker) emit(v fvec, o int) (fvec, bool) {
	out := fvec{exp: v.exp}
	for i, s := range v.idx {
		e := w.c.emit[s][o]
		if e == 0 {
			continue
		}
		x := v.val[i] * e
		if x == 0 {
			return fvec{}, false
		}
		out.idx = append(out.idx, s)
		out.val = append(out.val, x)
	}
	out.normalise()
	return out, true
}

// step returns v·P; false on underflow.
func (w *fworker) step(v fvec) (fvec, bool) {
	acc := map[int]float64{}
	var order []int
	for i, s := range v.idx {
		for _, e := range w.c.trans[s] {
			x := v.val[i] * e.p
			if x == 0 {
				return fvec{}, false
			}
			if _, ok := acc[e.to]; !ok {
				order = append(order, e.to)
			}
			acc[e.to] += x
		}
	}
	out := fvec{exp: v.exp, idx: order, val: make([]float64, len(order))}
	for i, s := range order {
		out.val[i] = acc[s]
	}
	return out, true
}

func (w *fworker) offer(lr, shift float64, d int, larger, name string, inf bool) {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inf && !inf {
		return
	}
	if inf {
		if !s.inf || witnessBefore(name, larger, w.path, s.secret, s.larger, s.witness) {
			s.witness = append([]int(nil), w.path...)
			s.secret, s.larger = name, larger
		}
		s.inf = true
		return
	}
	sl := s.slack(d, lr, shift)
	s.lo = max(s.lo, lr-sl)
	s.hi = max(s.hi, lr+sl)
	if s.witness == nil || lr > s.est || lr == s.est && witnessBefore(name, larger, w.path, s.secret, s.larger, s.witness) {
		s.est = lr
		s.witness = append([]int(nil), w.path...)
		s.secret, s.larger = name, larger
	}
}

// visit mirrors worker.visit; false on underflow.
func (w *fworker) visit(pi, tau fvec, d int, name string) bool {
	if len(pi.idx) == 0 && len(tau.idx) == 0 {
		return true
	}
	if w.s.explored.Add(1) > maxExplored {
		return true // LossFloat reports errTooLarge
	}
	if !w.s.meter.add(d) {
		return true // LossFloat reports the meter's error
	}
	switch {
	case len(tau.idx) == 0:
		w.offer(0, 0, d, "pi", name, true)
	case len(pi.idx) == 0:
		w.offer(0, 0, d, "tau", name, true)
	default:
		lr, shift := logRatio(pi.sum(), tau.sum(), pi.exp, tau.exp)
		if lr >= 0 {
			w.offer(lr, shift, d, "pi", name, false)
		} else {
			w.offer(-lr, shift, d, "tau", name, false)
		}
	}
	if d == w.s.n {
		return true
	}
	wp, ok1 := w.step(pi)
	wt, ok2 := w.step(tau)
	if !ok1 || !ok2 {
		return false
	}
	if !w.mayExceed(wp, wt, d+1) {
		return true
	}
	for o := range len(w.c.emit[0]) {
		cp, ok1 := w.emit(wp, o)
		ct, ok2 := w.emit(wt, o)
		if !ok1 || !ok2 {
			return false
		}
		w.path = append(w.path, o)
		if !w.visit(cp, ct, d+1, name) {
			return false
		}
		w.path = w.path[:len(w.path)-1]
	}
	return true
}

// mayExceed: could some extension's log-ratio (a mediant of the per-state
// ratios, docs/math.md §7 / Loss) exceed the best lower bound, allowing for error?
func (w *fworker) mayExceed(wp, wt fvec, d int) bool {
	s := w.s
	s.mu.Lock()
	inf, lo := s.inf, s.lo
	s.mu.Unlock()
	if inf {
		return false
	}
	val := func(v fvec) map[int]float64 {
		m := make(map[int]float64, len(v.idx))
		for i, st := range v.idx {
			m[st] = v.val[i]
		}
		return m
	}
	mp, mt := val(wp), val(wt)
	for st, x := range mp {
		y := mt[st]
		if y == 0 {
			return true
		}
		lr, shift := logRatio(x, y, wp.exp, wt.exp)
		if math.Abs(lr)+s.slack(d, lr, shift) > lo {
			return true
		}
	}
	for st := range mt {
		if mp[st] == 0 {
			return true
		}
	}
	return false
}
