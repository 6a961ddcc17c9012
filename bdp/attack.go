package bdp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Posterior returns P(X_t = · | y) for every t = 1..n (index t−1) by the
// forward–backward algorithm, each vector rescaled to sum 1 at every step
// so that 10⁶ readings neither underflow nor lose precision. It is the
// correlation-aware adversary's view: it knows θ and the mechanism, and no
// reading. Outputs impossible under the model are an error.
func Posterior(ch *markov.Chain, mech Mechanism, y []int) ([][]float64, error) {
	md, err := newModel(ch, mech)
	if err != nil {
		return nil, err
	}
	n := len(y)
	for t, s := range y {
		if s < 0 || s >= md.m {
			return nil, fmt.Errorf("bdp: output %d at position %d is not a symbol of the mechanism (0..%d)", s, t+1, md.m-1)
		}
	}
	k := md.k
	fw := make([][]float64, n)
	cur := slices.Clone(md.q)
	for t := range n {
		// fw[t] ∝ P(X_t, y_1..t)
		f := make([]float64, k)
		for x := range k {
			f[x] = cur[x] * md.E[x][y[t]]
		}
		if !scale(f) {
			return nil, fmt.Errorf("bdp: outputs 1..%d have probability zero under the model", t+1)
		}
		fw[t] = f
		cur = rowTimes(f, md.P)
	}
	post := make([][]float64, n)
	bw := ones(k) // ∝ P(y_{t+1..n} | X_t)
	tmp := make([]float64, k)
	for t := n - 1; t >= 0; t-- {
		p := make([]float64, k)
		for x := range k {
			p[x] = fw[t][x] * bw[x]
		}
		if !scale(p) {
			return nil, fmt.Errorf("bdp: outputs have probability zero under the model")
		}
		post[t] = p
		if t > 0 {
			backwardStep(md.P, md.E)(tmp, bw, y[t])
			copy(bw, tmp)
			normalise(bw)
		}
	}
	return post, nil
}

// scale makes v sum to 1; false for the zero vector.
func scale(v []float64) bool {
	s := 0.0
	for _, x := range v {
		s += x
	}
	if s == 0 {
		return false
	}
	for i := range v {
		v[i] /= s
	}
	return true
}

// Estimate is an adversary's probability of guessing the target reading.
type Estimate struct {
	Success float64 `json:"success"`
	// ImpliedEpsilon is ln(p/(1−p)). When the target's prior is (1/2, 1/2)
	// (the symmetric chain from its stationary start) it is a lower bound
	// on the BDPL against K = ∅: a likelihood ratio ≤ e^ε bounds the
	// posterior odds, hence the Bayes success, by e^ε/(1+e^ε).
	ImpliedEpsilon float64 `json:"implied_epsilon"`
	Exact          bool    `json:"exact"`
	// Trials and the 95% Wilson interval, for Monte-Carlo estimates.
	Trials int         `json:"trials,omitempty"`
	CI     *[2]float64 `json:"ci95,omitempty"`
}

func estimate(p float64, exact bool) Estimate {
	return Estimate{Success: p, ImpliedEpsilon: math.Log(p) - math.Log1p(-p), Exact: exact}
}

// AttackResult compares the two adversaries on one target.
type AttackResult struct {
	Length int `json:"length"`
	Target int `json:"target"`
	// SingleReading guesses from y_i alone (the MAP of x_i given y_i);
	// CorrelationAware guesses the MAP of x_i given every output.
	SingleReading    Estimate `json:"single_reading"`
	CorrelationAware Estimate `json:"correlation_aware"`
}

// maxAttackSide bounds the output sequences enumerated on each side of the
// target by the exact attack.
const maxAttackSide = 1 << 22

// Attack returns the exact success probabilities of the single-reading and
// the correlation-aware adversaries against reading target (1-based) of a
// two-state chain of length n. The correlation-aware success is
// Σ_y max_x P(X_i = x, y) = Σ_{y_i} Σ_L Σ_R max_x A_L(x)·E(x,y_i)·B_R(x),
// with A_L(x) = P(y_<i, X_i = x) and B_R(x) = P(y_>i | X_i = x) over the
// m^{i−1} left and m^{n−i} right output blocks. For binary x the max picks
// x = 0 exactly when B_R(0)/(B_R(0)+B_R(1)) exceeds a threshold set by the
// left block, so sorting the right blocks once and using prefix sums makes
// the double sum O((L + R) log R) instead of O(L·R). It returns an error
// when a side has more than 2²² blocks (use SimulateAttack).
func Attack(ch *markov.Chain, mech Mechanism, n, target int) (AttackResult, error) {
	md, err := attackModel(ch, mech, n, target)
	if err != nil {
		return AttackResult{}, err
	}
	for _, w := range []int{target - 1, n - target} {
		if math.Pow(float64(md.m), float64(w)) > maxAttackSide {
			return AttackResult{}, fmt.Errorf("bdp: exact attack enumerates %d^%d output blocks on one side (limit %d); use Monte Carlo", md.m, w, maxAttackSide)
		}
	}
	res := AttackResult{Length: n, Target: target, SingleReading: md.singleReading(target)}
	// Left blocks: P(y_<i, X_i = ·); right blocks: P(y_>i | X_i = ·).
	var left, right [][2]float64
	fwd, bwd := forwardStep(md.P, md.E), backwardStep(md.P, md.E)
	var walk func(v []float64, depth int, step stepFunc, out *[][2]float64)
	walk = func(v []float64, depth int, step stepFunc, out *[][2]float64) {
		if depth == 0 {
			*out = append(*out, [2]float64{v[0], v[1]})
			return
		}
		dst := make([]float64, 2)
		for y := range md.m {
			step(dst, v, y)
			walk(dst, depth-1, step, out)
		}
	}
	// The left walk starts from P(X_1 = ·) and applies (D_y P) per output.
	walk(md.q, target-1, fwd, &left)
	walk([]float64{1, 1}, n-target, bwd, &right)
	// Sort right blocks by s = B(0)/(B(0)+B(1)) and keep suffix sums of
	// B(0) and prefix sums of B(1).
	type rb struct{ s, b0, b1 float64 }
	rs := make([]rb, 0, len(right))
	for _, b := range right {
		if t := b[0] + b[1]; t > 0 {
			rs = append(rs, rb{b[0] / t, b[0], b[1]})
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].s < rs[j].s })
	pre1 := make([]float64, len(rs)+1) // Σ b1 over rs[:j]
	suf0 := make([]float64, len(rs)+1) // Σ b0 over rs[j:]
	for j, r := range rs {
		pre1[j+1] = pre1[j] + r.b1
	}
	for j := len(rs) - 1; j >= 0; j-- {
		suf0[j] = suf0[j+1] + rs[j].b0
	}
	total := 0.0
	for y := range md.m {
		for _, a := range left {
			alpha, gamma := a[0]*md.E[0][y], a[1]*md.E[1][y]
			if alpha+gamma == 0 {
				continue
			}
			// x = 0 wins where α·b0 > γ·b1, i.e. s > γ/(α+γ).
			th := gamma / (alpha + gamma)
			j := sort.Search(len(rs), func(j int) bool { return rs[j].s > th })
			total += alpha*suf0[j] + gamma*pre1[j]
		}
	}
	res.CorrelationAware = estimate(total, true)
	return res, nil
}

func attackModel(ch *markov.Chain, mech Mechanism, n, target int) (*model, error) {
	md, err := newModel(ch, mech)
	if err != nil {
		return nil, err
	}
	if md.k != 2 {
		return nil, fmt.Errorf("bdp: attacks are implemented for two-state chains; this chain has %d states", md.k)
	}
	if n < 1 || target < 1 || target > n {
		return nil, fmt.Errorf("bdp: target %d is not a position of a chain of length %d", target, n)
	}
	if n > MaxLength {
		return nil, fmt.Errorf("bdp: length %d exceeds %d readings (time and memory grow with the length); the success of an attack on one reading hardly changes beyond a few mixing times", n, MaxLength)
	}
	return md, nil
}

// singleReading is Σ_y max_x P(X_i = x)·E(x, y): the success of the best
// guess from the target's own output.
func (md *model) singleReading(target int) Estimate {
	mu := md.marginals(target)[target]
	p := 0.0
	for y := range md.m {
		p += max(mu[0]*md.E[0][y], mu[1]*md.E[1][y])
	}
	return estimate(p, true)
}

// SimulateAttack estimates the correlation-aware adversary's success by
// Monte Carlo: trials independent draws of readings and outputs from rng,
// each guessed by the posterior MAP at the target (ties go to state 0),
// with a 95% Wilson interval. The single-reading success is exact. rng is
// for reproducible experiments; it has nothing to do with the noise that
// protects real data (Sanitize uses crypto/rand).
func SimulateAttack(ch *markov.Chain, mech Mechanism, n, target, trials int, rng *rand.Rand) (AttackResult, error) {
	md, err := attackModel(ch, mech, n, target)
	if err != nil {
		return AttackResult{}, err
	}
	if trials < 1 {
		return AttackResult{}, fmt.Errorf("bdp: trials %d must be positive", trials)
	}
	if float64(n)*float64(trials) > maxSimulation {
		return AttackResult{}, fmt.Errorf("bdp: %d trials of %d readings is %.3g simulated readings, more than the limit %d: use fewer trials or a shorter chain", trials, n, float64(n)*float64(trials), maxSimulation)
	}
	res := AttackResult{Length: n, Target: target, SingleReading: md.singleReading(target)}
	x := make([]int, n)
	y := make([]int, n)
	wins := 0
	for range trials {
		md.draw(rng, x, y)
		if md.guess(y, target) == x[target-1] {
			wins++
		}
	}
	p := float64(wins) / float64(trials)
	e := estimate(p, false)
	e.Trials = trials
	lo, hi := wilson(wins, trials)
	e.CI = &[2]float64{lo, hi}
	res.CorrelationAware = e
	return res, nil
}

// draw samples readings x from the chain and outputs y from the mechanism.
func (md *model) draw(rng *rand.Rand, x, y []int) {
	pick := func(p []float64) int {
		u := rng.Float64()
		for s, w := range p {
			if u < w {
				return s
			}
			u -= w
		}
		return len(p) - 1
	}
	for t := range x {
		if t == 0 {
			x[t] = pick(md.q)
		} else {
			x[t] = pick(md.P[x[t-1]])
		}
		y[t] = pick(md.E[x[t]])
	}
}

// guess is the posterior MAP of X_target given y, computing only the
// forward pass up to the target and the backward pass down to it.
func (md *model) guess(y []int, target int) int {
	f := []float64{md.q[0], md.q[1]}
	for t := 0; t < target-1; t++ {
		f[0], f[1] = f[0]*md.E[0][y[t]], f[1]*md.E[1][y[t]]
		f0 := f[0]*md.P[0][0] + f[1]*md.P[1][0]
		f1 := f[0]*md.P[0][1] + f[1]*md.P[1][1]
		s := f0 + f1
		f[0], f[1] = f0/s, f1/s
	}
	b0, b1 := 1.0, 1.0
	for t := len(y) - 1; t >= target; t-- {
		e0, e1 := md.E[0][y[t]]*b0, md.E[1][y[t]]*b1
		n0 := md.P[0][0]*e0 + md.P[0][1]*e1
		n1 := md.P[1][0]*e0 + md.P[1][1]*e1
		s := n0 + n1
		b0, b1 = n0/s, n1/s
	}
	e := y[target-1]
	if f[0]*md.E[0][e]*b0 >= f[1]*md.E[1][e]*b1 {
		return 0
	}
	return 1
}

// wilson is the 95% Wilson score interval for wins out of n.
func wilson(wins, n int) (float64, float64) {
	const z = 1.959963984540054
	p, nf := float64(wins)/float64(n), float64(n)
	den := 1 + z*z/nf
	c := (p + z*z/(2*nf)) / den
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return max(0, c-h), min(1, c+h)
}
