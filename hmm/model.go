// Package hmm verifies Pufferfish privacy of mechanisms modelled as hidden
// Markov models, exactly ([LWZ]; docs/math.md §7).
//
// A Model is an HMM (states, transitions, observation alphabet, emission
// probabilities) with rational probabilities. A secret pair is two initial
// distributions π and τ (the adversary's prior conditioned on each of the
// two secrets). ε-Pufferfish privacy holds for observation sequences of
// lengths 1..n iff for every such ω
//
//	e^{−ε}·P_τ(ω) ≤ P_π(ω) ≤ e^{ε}·P_τ(ω),
//
// each side computed by the forward algorithm. Loss returns the exact
// privacy loss max_ω |ln P_π(ω) − ln P_τ(ω)| as a reduced fraction with a
// maximising ω; Check compares it with e^ε, exactly when ε = ln(p/q) and
// against a rigorous enclosure of e^ε otherwise.
//
// All arithmetic is exact: probabilities are scaled to integers over one
// common denominator, so the forward algorithm runs on big.Int numerators
// (no fraction reduction per operation).
package hmm

import (
	"fmt"
	"math/big"
)

// Entry is one non-zero transition probability.
type Entry struct {
	To int
	P  *big.Rat
}

// Model is a hidden Markov model with exact probabilities. Trans is sparse
// (row s lists the states reachable from s); Emit is k × m.
type Model struct {
	States []string
	Obs    []string
	Trans  [][]Entry
	Emit   [][]*big.Rat
}

// Secret is a secret pair as two initial distributions over the states
// (a nil entry is a zero). When Pi and Tau are both nil the pair is two
// point masses, on states PiAt and TauAt (the differential-privacy case,
// stored without k-long vectors). Name describes it in reports.
type Secret struct {
	Name        string
	Pi, Tau     []*big.Rat
	PiAt, TauAt int
}

func (sec Secret) points() bool { return sec.Pi == nil && sec.Tau == nil }

// Validate checks that the model is well formed: every transition row and
// every emission row is a probability distribution summing to exactly 1,
// indices are in range. Errors name the state and row.
func (m *Model) Validate() error {
	k := len(m.States)
	if k == 0 {
		return fmt.Errorf("hmm: no states")
	}
	if len(m.Obs) == 0 {
		return fmt.Errorf("hmm: no observations")
	}
	if len(m.Trans) != k || len(m.Emit) != k {
		return fmt.Errorf("hmm: %d states but %d transition rows and %d emission rows", k, len(m.Trans), len(m.Emit))
	}
	one := big.NewRat(1, 1)
	for s, row := range m.Trans {
		sum := new(big.Rat)
		for _, e := range row {
			if e.To < 0 || e.To >= k {
				return fmt.Errorf("hmm: transition from state %q goes to index %d, outside 0..%d", m.States[s], e.To, k-1)
			}
			if e.P.Sign() < 0 {
				return fmt.Errorf("hmm: transition %q → %q has negative probability %s", m.States[s], m.States[e.To], e.P.RatString())
			}
			sum.Add(sum, e.P)
		}
		if sum.Cmp(one) != 0 {
			return fmt.Errorf("hmm: transition row of state %q sums to %s, not 1", m.States[s], sum.RatString())
		}
	}
	for s, row := range m.Emit {
		if len(row) != len(m.Obs) {
			return fmt.Errorf("hmm: emission row of state %q has %d entries for %d observations", m.States[s], len(row), len(m.Obs))
		}
		sum := new(big.Rat)
		for o, p := range row {
			if p.Sign() < 0 {
				return fmt.Errorf("hmm: emission of %q by state %q is negative (%s)", m.Obs[o], m.States[s], p.RatString())
			}
			sum.Add(sum, p)
		}
		if sum.Cmp(one) != 0 {
			return fmt.Errorf("hmm: emission row of state %q sums to %s, not 1", m.States[s], sum.RatString())
		}
	}
	return nil
}

// ValidateSecret checks that π and τ are distributions over the states.
func (m *Model) ValidateSecret(sec Secret) error {
	if sec.points() {
		for _, s := range []int{sec.PiAt, sec.TauAt} {
			if s < 0 || s >= len(m.States) {
				return fmt.Errorf("hmm: secret %s: point mass on state index %d, outside 0..%d", sec.Name, s, len(m.States)-1)
			}
		}
		return nil
	}
	one := big.NewRat(1, 1)
	for _, d := range []struct {
		name string
		v    []*big.Rat
	}{{"pi", sec.Pi}, {"tau", sec.Tau}} {
		if len(d.v) != len(m.States) {
			return fmt.Errorf("hmm: secret %s: %s has %d entries for %d states", sec.Name, d.name, len(d.v), len(m.States))
		}
		sum := new(big.Rat)
		for s, p := range d.v {
			if p == nil {
				continue
			}
			if p.Sign() < 0 {
				return fmt.Errorf("hmm: secret %s: %s of state %q is negative", sec.Name, d.name, m.States[s])
			}
			sum.Add(sum, p)
		}
		if sum.Cmp(one) != 0 {
			return fmt.Errorf("hmm: secret %s: %s sums to %s, not 1", sec.Name, d.name, sum.RatString())
		}
	}
	return nil
}

// condition returns the prior conditioned on a set of states (the secret
// event), i.e. prior restricted to the set and renormalised. An event of
// prior probability zero is an error.
func condition(prior []*big.Rat, event []int) ([]*big.Rat, error) {
	out := make([]*big.Rat, len(prior))
	for i := range out {
		out[i] = new(big.Rat)
	}
	total := new(big.Rat)
	for _, s := range event {
		if s < 0 || s >= len(prior) {
			return nil, fmt.Errorf("hmm: event state %d out of range", s)
		}
		out[s].Set(prior[s])
	}
	for _, p := range out {
		total.Add(total, p)
	}
	if total.Sign() == 0 {
		return nil, fmt.Errorf("hmm: the secret event has prior probability zero")
	}
	for _, p := range out {
		p.Quo(p, total)
	}
	return out, nil
}

// compiled is the model over one common denominator D: every transition,
// emission and initial probability p is stored as the integer p·D.
type compiled struct {
	k, m  int
	bits  int // of D
	trans [][]ientry
	emit  [][]*big.Int
}

type ientry struct {
	to int
	p  *big.Int
}

// sparse is a non-negative integer vector as parallel index/value slices.
type sparse struct {
	idx []int
	val []*big.Int
}

func (v sparse) sum() *big.Int {
	s := new(big.Int)
	for _, x := range v.val {
		s.Add(s, x)
	}
	return s
}

func lcmDen(d *big.Int, r *big.Rat) {
	den := r.Denom()
	g := new(big.Int).GCD(nil, nil, d, den)
	d.Mul(d, new(big.Int).Quo(den, g))
}

func scaled(r *big.Rat, D *big.Int) *big.Int {
	n := new(big.Int).Mul(r.Num(), D)
	return n.Quo(n, r.Denom())
}

// commonDenominator is the least common denominator D of the model's and
// the secrets' probabilities.
func commonDenominator(m *Model, secrets []Secret) *big.Int {
	D := big.NewInt(1)
	for _, row := range m.Trans {
		for _, e := range row {
			lcmDen(D, e.P)
		}
	}
	for _, row := range m.Emit {
		for _, p := range row {
			lcmDen(D, p)
		}
	}
	for _, s := range secrets {
		for _, d := range [][]*big.Rat{s.Pi, s.Tau} {
			for _, p := range d {
				if p != nil {
					lcmDen(D, p)
				}
			}
		}
	}
	return D
}

// costModelOf prices the search arith starts with (Evaluate: the float
// enclosure unless it is exact).
func costModelOf(m *Model, secrets []Secret, arith Arithmetic) costModel {
	bits := 0
	if arith == ExactArithmetic {
		bits = commonDenominator(m, secrets).BitLen()
	}
	return newCostModel(m, len(secrets), bits)
}

// compile scales the model and the secrets to one denominator.
func compile(m *Model, secrets []Secret) (*compiled, [][2]sparse) {
	D := commonDenominator(m, secrets)
	c := &compiled{k: len(m.States), m: len(m.Obs), bits: D.BitLen(), trans: make([][]ientry, len(m.Trans)), emit: make([][]*big.Int, len(m.Emit))}
	for s, row := range m.Trans {
		for _, e := range row {
			if e.P.Sign() != 0 {
				c.trans[s] = append(c.trans[s], ientry{e.To, scaled(e.P, D)})
			}
		}
	}
	for s, row := range m.Emit {
		c.emit[s] = make([]*big.Int, len(row))
		for o, p := range row {
			c.emit[s][o] = scaled(p, D)
		}
	}
	init := make([][2]sparse, len(secrets))
	for i, s := range secrets {
		if s.points() {
			init[i][0] = sparse{idx: []int{s.PiAt}, val: []*big.Int{new(big.Int).Set(D)}}
			init[i][1] = sparse{idx: []int{s.TauAt}, val: []*big.Int{new(big.Int).Set(D)}}
			continue
		}
		for j, d := range [][]*big.Rat{s.Pi, s.Tau} {
			var v sparse
			for st, p := range d {
				if p != nil && p.Sign() != 0 {
					v.idx = append(v.idx, st)
					v.val = append(v.val, scaled(p, D))
				}
			}
			init[i][j] = v
		}
	}
	return c, init
}
