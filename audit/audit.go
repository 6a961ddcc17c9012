// Package audit machine-checks the product's own guarantee: it turns the
// private histogram that `puff release` publishes for a short Markov chain
// into a hidden Markov model and verifies the claimed ε exactly with package
// hmm ([LWZ]'s method applied to the Markov Quilt Mechanism of [SWC17]).
//
// # The model
//
// For every secret X_s = v the hidden chain is the data chain conditioned on
// that event (a Doob h-transform: before time s the transition x → y is
// reweighted by P^{s−t−1}(y, v)/P^{s−t}(x, v); after s it is P), carrying the
// histogram of the states seen so far. The secret pair (X_s = a, X_s = b)
// becomes two initial distributions over two disjoint copies of it. The
// chain emits nothing ("·") until the last step, which emits the noisy
// histogram.
//
// The noise is the one package noise samples: each count c plus K·g for a
// two-sided geometric K with P(K = k) ∝ exp(−λ|k|), λ = g/b', on a grid g
// (a power of two), b' = noise.Sampled(σ·L, L, k), L = 2, k bins. Counts are
// multiples of g, and between two consecutive integers (and beyond 0 and T)
// the likelihood ratio of the outputs is monotone (a Möbius function of
// exp(o/b') per bin), so the supremum over the product's outputs equals the
// maximum over the finite alphabet of cells {< 0}, {0}, …, {T}, {> T} per bin
// of the integer-lattice geometric mechanism with α = exp(−1/b'): the cell
// probabilities are (1−α)/(1+α)·α^{|o−c|}, α^{c+1}/(1+α) and α^{T−c+1}/(1+α).
// α is replaced by an exact rational α̲ ≤ exp(−1/b') (less noise), so a
// verdict "holds" is a proof for the product; the loss reported is an upper
// bound on the product's (the difference is in the 16th digit).
//
// What is modelled and what is not: the law of the sampler is its intended
// geometric distribution (the bisection sampler draws it up to float64
// rounding of its split probabilities); the chain's float64 transition
// probabilities are read as exact rationals and each row is rescaled to sum
// to exactly 1 (a change below 1e-16).
package audit

import (
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/pufferfish-privacy/pufferfish/hmm"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Lipschitz is L of the count histogram in L1.
const Lipschitz = 2

// MaxStates bounds the hidden states of the audit model.
const MaxStates = 20000

// Report is the outcome of an audit.
type Report struct {
	Method         mechanism.Name `json:"method"`
	Epsilon        float64        `json:"epsilon"`
	Length         int            `json:"length"`
	Sigma          float64        `json:"sigma"`
	PerBinScale    float64        `json:"per_bin_scale"`
	EffectiveScale float64        `json:"effective_scale"`
	Alpha          string         `json:"alpha"` // α̲ as an exact fraction
	Verdict        hmm.Verdict    `json:"verdict"`
	Loss           float64        `json:"loss"`
	Ratio          string         `json:"ratio"` // exact maximal likelihood ratio, "inf" if unbounded
	Secret         string         `json:"secret"`
	Output         []string       `json:"output"` // the maximising noisy histogram (cells per bin)
	States         int            `json:"states"`
	Explored       int64          `json:"explored"`
}

// MaxLength is the longest chain Histogram audits.
const MaxLength = 10

// Histogram audits the count histogram of one chain of length T released
// with the given method ("exact", "approx", "groupdp", "dp" as in package
// release) at ε: it builds the model, runs hmm.Check against the decimal ε
// and reports the exact loss and a witness. The chain must have a given or
// stationary initial distribution (a single θ).
func Histogram(ch *markov.Chain, T int, eps float64, method mechanism.Name) (Report, error) {
	if T < 1 {
		return Report{}, fmt.Errorf("audit: length %d must be at least 1", T)
	}
	if T > MaxLength {
		return Report{}, fmt.Errorf("audit: length %d exceeds %d: the exact model grows steeply with the length (T = 10 takes ≈ 13 s and 0.4 GB, T = 12 ≈ 50 s and 1.2 GB)", T, MaxLength)
	}
	cl, err := markov.NewClass(ch.States, ch)
	if err != nil {
		return Report{}, err
	}
	sc, err := release.ComputeScale(cl, T, eps, method)
	if err != nil {
		return Report{}, err
	}
	if !sc.Applicable || sc.Sigma == nil {
		return Report{}, fmt.Errorf("audit: method %s does not apply: %s", method, sc.Guarantee)
	}
	rep := Report{Method: method, Epsilon: eps, Length: T, Sigma: *sc.Sigma}
	rep.PerBinScale = noise.ScaleFor(rep.Sigma, Lipschitz) // what release samples
	rep.EffectiveScale = noise.Sampled(rep.PerBinScale, Lipschitz, len(cl.States))
	// α̲ ≤ exp(−1/b'): math.Exp is within one ulp; step one ulp down.
	af := math.Nextafter(math.Exp(-1/rep.EffectiveScale), 0)
	alpha := new(big.Rat).SetFloat64(af)
	rep.Alpha = alpha.RatString()
	q, err := ch.Initial()
	if err != nil {
		return Report{}, fmt.Errorf("audit: %w (give the chain a fixed or stationary initial distribution)", err)
	}
	m, secs, names, err := Model(exactRows(q), exactMatrix(ch.P), T, alpha)
	if err != nil {
		return Report{}, err
	}
	rep.States = len(m.States)
	e, err := hmm.ParseEpsilon(fmt.Sprintf("%.17g", eps))
	if err != nil {
		return Report{}, err
	}
	v, r, err := hmm.Check(m, secs, T, e)
	if err != nil {
		return Report{}, err
	}
	rep.Verdict, rep.Loss, rep.Explored, rep.Secret = v, r.Loss, r.Explored, r.Secret
	rep.Ratio = "inf"
	if r.Ratio != nil {
		rep.Ratio = r.Ratio.RatString()
	}
	if len(r.Witness) > 0 {
		rep.Output = names[r.Witness[len(r.Witness)-1]]
	}
	return rep, nil
}

// exactRows reads a float64 distribution as exact rationals rescaled to sum
// to exactly 1.
func exactRows(p []float64) []*big.Rat {
	out := make([]*big.Rat, len(p))
	sum := new(big.Rat)
	for i, x := range p {
		out[i] = new(big.Rat).SetFloat64(x)
		sum.Add(sum, out[i])
	}
	for i := range out {
		out[i].Quo(out[i], sum)
	}
	return out
}

func exactMatrix(P [][]float64) [][]*big.Rat {
	out := make([][]*big.Rat, len(P))
	for i, row := range P {
		out[i] = exactRows(row)
	}
	return out
}

// cellProbs returns, for a count c in 0..T, the probabilities of the T+3
// cells {<0}, {0}, …, {T}, {>T} of c plus two-sided geometric(α) noise.
func cellProbs(c, T int, alpha *big.Rat) []*big.Rat {
	one := big.NewRat(1, 1)
	onePlus := new(big.Rat).Add(one, alpha)
	center := new(big.Rat).Quo(new(big.Rat).Sub(one, alpha), onePlus)
	pow := func(e int) *big.Rat {
		r := big.NewRat(1, 1)
		for range e {
			r.Mul(r, alpha)
		}
		return r
	}
	out := make([]*big.Rat, T+3)
	out[0] = new(big.Rat).Quo(pow(c+1), onePlus)
	for o := 0; o <= T; o++ {
		out[o+1] = new(big.Rat).Mul(center, pow(abs(o-c)))
	}
	out[T+2] = new(big.Rat).Quo(pow(T-c+1), onePlus)
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func cellName(j, T int) string {
	switch j {
	case 0:
		return "<0"
	case T + 2:
		return fmt.Sprintf(">%d", T)
	}
	return fmt.Sprint(j - 1)
}

// Model builds the audit HMM for a chain (q, P) with exact rational entries
// (rows summing to 1), length T and noise parameter α: one secret pair per
// time s and values a < b with positive probability. It returns the model,
// the secrets and, per observation, its cells per bin. Cost: T·k copies of
// the chain with the histogram in the state, (T+3)^k observations.
func Model(q []*big.Rat, P [][]*big.Rat, T int, alpha *big.Rat) (*hmm.Model, []hmm.Secret, [][]string, error) {
	k := len(q)
	one := big.NewRat(1, 1)
	if alpha.Sign() <= 0 || alpha.Cmp(one) >= 0 {
		return nil, nil, nil, fmt.Errorf("audit: α = %s must be in (0, 1)", alpha.RatString())
	}
	m := &hmm.Model{}
	var names [][]string
	m.Obs, names = observations(k, T)
	b := newModelBuilder(q, P, T)
	b.copies()
	trans, err := b.expand()
	if err != nil {
		return nil, nil, nil, err
	}
	b.fill(m, trans, alpha)
	secrets := b.secrets()
	if len(secrets) == 0 {
		return nil, nil, nil, fmt.Errorf("audit: no secret pair has both values possible")
	}
	return m, secrets, names, nil
}

// observations returns the observations: "·" then the cells of the
// histogram, mixed radix, and per observation its cells per bin (nil for
// "·").
func observations(k, T int) ([]string, [][]string) {
	cells := T + 3
	nObs := 1
	for range k {
		nObs *= cells
	}
	obs := []string{"·"}
	names := [][]string{nil}
	for o := range nObs {
		var parts []string
		c := o
		for range k {
			parts = append(parts, cellName(c%cells, T))
			c /= cells
		}
		slices.Reverse(parts)
		names = append(names, parts)
		obs = append(obs, fmt.Sprint(parts))
	}
	return obs, names
}

// stateKey is a hidden state of the copy (s, v) of the chain conditioned
// on X_s = v: time t, value x and the histogram so far.
type stateKey struct {
	s, v, t, x int
	counts     string
}

// modelBuilder discovers the hidden states of the audit model.
type modelBuilder struct {
	q    []*big.Rat
	P    [][]*big.Rat
	T, k int
	pows [][][]*big.Rat // P^d for d = 0..T
	marg [][]*big.Rat   // marg[t] = q P^{t−1}

	index    map[stateKey]int
	keys     []stateKey
	countsOf [][]int

	initials [][]hmm.Entry // per copy, the initial entries
	copyOf   map[[2]int]int
}

func newModelBuilder(q []*big.Rat, P [][]*big.Rat, T int) *modelBuilder {
	k := len(q)
	// Powers of P and marginals.
	pows := [][][]*big.Rat{identity(k)}
	for d := 1; d <= T; d++ {
		pows = append(pows, mul(pows[d-1], P))
	}
	marg := make([][]*big.Rat, T+1) // marg[t] = q P^{t−1}
	marg[1] = q
	for t := 2; t <= T; t++ {
		marg[t] = vecMul(marg[t-1], P)
	}
	return &modelBuilder{q: q, P: P, T: T, k: k, pows: pows, marg: marg, index: map[stateKey]int{}, copyOf: map[[2]int]int{}}
}

// state returns the index of the state kk, adding it if new.
func (b *modelBuilder) state(kk stateKey, counts []int) int {
	if i, ok := b.index[kk]; ok {
		return i
	}
	i := len(b.keys)
	b.index[kk] = i
	b.keys = append(b.keys, kk)
	b.countsOf = append(b.countsOf, slices.Clone(counts))
	return i
}

// copies adds the initial states of every copy (s, v) with P(X_s = v) > 0.
func (b *modelBuilder) copies() {
	k, q, pows, marg := b.k, b.q, b.pows, b.marg
	for s := 1; s <= b.T; s++ {
		for v := range k {
			if marg[s][v].Sign() == 0 {
				continue
			}
			// initial: P(X_1 = x | X_s = v) = q(x) P^{s−1}(x, v) / q_s(v)
			var init []hmm.Entry
			for x := range k {
				p := new(big.Rat).Mul(q[x], pows[s-1][x][v])
				if p.Sign() == 0 {
					continue
				}
				p.Quo(p, marg[s][v])
				counts := make([]int, k)
				counts[x] = 1
				init = append(init, hmm.Entry{To: b.state(stateKey{s, v, 1, x, fmt.Sprint(counts)}, counts), P: p})
			}
			b.copyOf[[2]int{s, v}] = len(b.initials)
			b.initials = append(b.initials, init)
		}
	}
}

// expand returns the transitions of every state, discovering states
// breadth first (nil rows for the states at t = T, which go to the end
// state).
func (b *modelBuilder) expand() ([][]hmm.Entry, error) {
	P, pows, T := b.P, b.pows, b.T
	var trans [][]hmm.Entry
	for i := 0; i < len(b.keys); i++ {
		if len(b.keys) > MaxStates {
			return nil, fmt.Errorf("audit: the model needs more than %d hidden states (T = %d, %d chain states); use a shorter chain", MaxStates, T, b.k)
		}
		kk := b.keys[i]
		if kk.t == T {
			trans = append(trans, nil) // filled with the end state below
			continue
		}
		var row []hmm.Entry
		for y := range b.k {
			p := new(big.Rat).Set(P[kk.x][y])
			if kk.t < kk.s { // condition on X_s = v
				p.Mul(p, pows[kk.s-kk.t-1][y][kk.v])
				den := pows[kk.s-kk.t][kk.x][kk.v]
				if den.Sign() == 0 {
					p.SetInt64(0)
				} else {
					p.Quo(p, den)
				}
			}
			if p.Sign() == 0 {
				continue
			}
			counts := slices.Clone(b.countsOf[i])
			counts[y]++
			row = append(row, hmm.Entry{To: b.state(stateKey{kk.s, kk.v, kk.t + 1, y, fmt.Sprint(counts)}, counts), P: p})
		}
		trans = append(trans, row)
	}
	return trans, nil
}

// fill sets the states, transitions and emissions of m (whose Obs are
// set): states before T emit "·"; states at T emit the noisy histogram and
// go to an absorbing end state that emits "·".
func (b *modelBuilder) fill(m *hmm.Model, trans [][]hmm.Entry, alpha *big.Rat) {
	k, T := b.k, b.T
	cells := T + 3
	nObs := len(m.Obs) - 1
	end := len(b.keys)
	m.States = make([]string, end+1)
	m.Trans = make([][]hmm.Entry, end+1)
	m.Emit = make([][]*big.Rat, end+1)
	cellCache := map[int][]*big.Rat{}
	for i, kk := range b.keys {
		m.States[i] = fmt.Sprintf("X%d=%d t=%d x=%d counts=%s", kk.s, kk.v, kk.t, kk.x, kk.counts)
		m.Emit[i] = make([]*big.Rat, len(m.Obs))
		for o := range m.Emit[i] {
			m.Emit[i][o] = new(big.Rat)
		}
		if kk.t < T {
			m.Trans[i] = trans[i]
			m.Emit[i][0].SetInt64(1)
			continue
		}
		m.Trans[i] = []hmm.Entry{{To: end, P: big.NewRat(1, 1)}}
		per := make([][]*big.Rat, k)
		for bin, c := range b.countsOf[i] {
			if cellCache[c] == nil {
				cellCache[c] = cellProbs(c, T, alpha)
			}
			per[bin] = cellCache[c]
		}
		for o := range nObs {
			p := big.NewRat(1, 1)
			c := o
			for bin := k - 1; bin >= 0; bin-- {
				p.Mul(p, per[bin][c%cells])
				c /= cells
			}
			m.Emit[i][o+1] = p
		}
	}
	m.States[end] = "end"
	m.Trans[end] = []hmm.Entry{{To: end, P: big.NewRat(1, 1)}}
	m.Emit[end] = make([]*big.Rat, len(m.Obs))
	for o := range m.Emit[end] {
		m.Emit[end][o] = new(big.Rat)
	}
	m.Emit[end][0].SetInt64(1)
}

// secrets returns one secret pair per time s and values a < b whose
// copies both exist, with the copies' initial distributions.
func (b *modelBuilder) secrets() []hmm.Secret {
	end := len(b.keys)
	dist := func(c int) []*big.Rat {
		d := make([]*big.Rat, end+1)
		for _, e := range b.initials[c] {
			d[e.To] = e.P
		}
		return d
	}
	var secrets []hmm.Secret
	for s := 1; s <= b.T; s++ {
		for a := range b.k {
			for c := a + 1; c < b.k; c++ {
				ca, okA := b.copyOf[[2]int{s, a}]
				cb, okB := b.copyOf[[2]int{s, c}]
				if !okA || !okB {
					continue
				}
				secrets = append(secrets, hmm.Secret{Name: fmt.Sprintf("X%d = %d vs %d", s, a, c), Pi: dist(ca), Tau: dist(cb)})
			}
		}
	}
	return secrets
}

func identity(k int) [][]*big.Rat {
	out := make([][]*big.Rat, k)
	for i := range out {
		out[i] = make([]*big.Rat, k)
		for j := range out[i] {
			out[i][j] = new(big.Rat)
		}
		out[i][i].SetInt64(1)
	}
	return out
}

func mul(A, B [][]*big.Rat) [][]*big.Rat {
	k := len(A)
	out := make([][]*big.Rat, k)
	for i := range out {
		out[i] = make([]*big.Rat, k)
		for j := range out[i] {
			s := new(big.Rat)
			for l := range k {
				s.Add(s, new(big.Rat).Mul(A[i][l], B[l][j]))
			}
			out[i][j] = s
		}
	}
	return out
}

func vecMul(v []*big.Rat, P [][]*big.Rat) []*big.Rat {
	out := make([]*big.Rat, len(v))
	for j := range out {
		s := new(big.Rat)
		for i := range v {
			s.Add(s, new(big.Rat).Mul(v[i], P[i][j]))
		}
		out[j] = s
	}
	return out
}
