// Package framework describes a Pufferfish framework (S, Q, Θ) over a
// database of n records with a finite domain ([SWC17] §2.1, Def. 2.1;
// docs/math.md §1): secrets are the events X_i = a, secret pairs
// (X_i = a, X_i = b) with a ≠ b (all of them unless restricted), and Θ is a
// finite list of distributions, each an explicit joint table or a Bayesian
// network. A query F maps a database to a number or a vector.
//
// Everything here is exact: probabilities are rationals read exactly from
// the input (0.05 is 1/20), and conditional distributions of F given a secret
// are exact. Mechanisms over a framework live in package wasserstein (any
// framework), package mqm (Bayesian networks) and package robust (adversaries
// outside Θ).
package framework

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/bn"
	"github.com/pufferfish-privacy/pufferfish/estimate"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// EnumerateLimit bounds the number of joint assignments a Bayesian-network θ
// may have (K^n) before it is expanded into a joint table.
const EnumerateLimit = 1 << 22

// Atom is one assignment of all records (value indices into Domain) with its
// probability.
type Atom struct {
	X []int
	P *big.Rat
}

// Theta is one distribution in Θ: a joint table (Atoms, only positive
// probabilities) and, when it was given as a network, the network too.
type Theta struct {
	Name  string
	Atoms []Atom
	Net   *bn.Network
}

// Pair is the secret pair (X_Record = Domain[A], X_Record = Domain[B]).
type Pair struct {
	Record, A, B int
}

// Query is the released function F. Eval receives value indices into the
// domain and returns Dim exact numbers. Lipschitz is the largest change of F
// (in L1 for vectors) when one record changes; the Markov Quilt Mechanism
// needs it, the Wasserstein Mechanism does not.
type Query struct {
	Name      string
	Dim       int
	Lipschitz *big.Rat
	Eval      func(x []int) []*big.Rat
	// Estimate is the consistent estimate of a noisy answer on n records
	// (n is public: the framework names them): the closest answer the
	// query can give — a histogram projected onto {c ≥ 0, Σ c = n}, a
	// count clamped to [0, n], a sum to [n·min, n·max]. It reads the
	// noisy answer and n only: post-processing (docs/math.md §4.14).
	Estimate func(noisy []float64, n int) ([]float64, error)
}

// Framework is a validated Pufferfish framework with a query.
type Framework struct {
	Names  []string   // record names, len n
	Domain []*big.Rat // the values a record takes, distinct
	Thetas []Theta
	Pairs  []Pair // the secret pairs; each unordered pair once (a < b)
	Query  Query
	// Explicit is true when the pairs were listed by the user, in which
	// case a secret of probability zero under every θ is an error.
	Explicit bool
}

// N is the number of records.
func (f *Framework) N() int { return len(f.Names) }

// K is the number of domain values.
func (f *Framework) K() int { return len(f.Domain) }

// AllPairs returns every secret pair (X_i = a, X_i = b), a < b, in order.
func AllPairs(n, k int) []Pair {
	var out []Pair
	for i := range n {
		for a := range k {
			for b := a + 1; b < k; b++ {
				out = append(out, Pair{i, a, b})
			}
		}
	}
	return out
}

// Sum is F(x) = Σ_i x_i, Lipschitz max(domain) − min(domain).
func Sum(domain []*big.Rat) Query {
	lo, hi := domain[0], domain[0]
	for _, v := range domain {
		if v.Cmp(lo) < 0 {
			lo = v
		}
		if v.Cmp(hi) > 0 {
			hi = v
		}
	}
	lf, _ := lo.Float64()
	hf, _ := hi.Float64()
	return Query{Name: "sum", Dim: 1, Lipschitz: new(big.Rat).Sub(hi, lo), Eval: func(x []int) []*big.Rat {
		s := new(big.Rat)
		for _, v := range x {
			s.Add(s, domain[v])
		}
		return []*big.Rat{s}
	}, Estimate: func(noisy []float64, n int) ([]float64, error) {
		return clamp(noisy, float64(n)*lf, float64(n)*hf)
	}}
}

// Count is the number of records equal to Domain[a], Lipschitz 1.
func Count(a int, label string) Query {
	return Query{Name: "count of " + label, Dim: 1, Lipschitz: big.NewRat(1, 1), Eval: func(x []int) []*big.Rat {
		c := int64(0)
		for _, v := range x {
			if v == a {
				c++
			}
		}
		return []*big.Rat{big.NewRat(c, 1)}
	}, Estimate: func(noisy []float64, n int) ([]float64, error) {
		return clamp(noisy, 0, float64(n))
	}}
}

// Histogram counts every domain value; Lipschitz 2 in L1.
func Histogram(k int) Query {
	return Query{Name: "histogram", Dim: k, Lipschitz: big.NewRat(2, 1), Eval: func(x []int) []*big.Rat {
		c := make([]int64, k)
		for _, v := range x {
			c[v]++
		}
		out := make([]*big.Rat, k)
		for i := range c {
			out[i] = big.NewRat(c[i], 1)
		}
		return out
	}, Estimate: func(noisy []float64, n int) ([]float64, error) {
		return estimate.Simplex(noisy, float64(n))
	}}
}

// Estimate is the consistent estimate of a noisy answer of the
// framework's query on its records (Query.Estimate with n the number of
// records, public), nil when the query has none.
func (f *Framework) Estimate(noisy []float64) ([]float64, error) {
	if f.Query.Estimate == nil || noisy == nil {
		return nil, nil
	}
	return f.Query.Estimate(noisy, len(f.Names))
}

// EstimateNote says in words what the estimate is, for text reports.
const EstimateNote = "the noisy answer moved to the closest one the query can give on these records, from the released values alone: post-processing, no privacy cost"

// clamp is the one-number estimate: noisy[0] moved into [lo, hi].
func clamp(noisy []float64, lo, hi float64) ([]float64, error) {
	if len(noisy) != 1 {
		return nil, fmt.Errorf("framework: %d noisy values for a one-number query", len(noisy))
	}
	return []float64{estimate.Clamp(noisy[0], lo, hi)}, nil
}

// New validates a framework: records named and distinct, domain values
// distinct, every θ a distribution over n records (atoms in range, no
// duplicate assignment, probabilities positive and summing exactly to 1),
// pairs in range with a ≠ b. A θ with a network and no atoms is expanded by
// exact enumeration (at most EnumerateLimit assignments).
func New(names []string, domain []*big.Rat, thetas []Theta, pairs []Pair, q Query) (*Framework, error) {
	return build(names, domain, thetas, pairs, q, true)
}

// NewNetworks is New for frameworks whose thetas are all Bayesian networks,
// kept as networks (Atoms nil) however large they are: for the Markov Quilt
// Mechanism, which never needs the joint table.
func NewNetworks(names []string, domain []*big.Rat, thetas []Theta, pairs []Pair, q Query) (*Framework, error) {
	for t, th := range thetas {
		if th.Net == nil || th.Atoms != nil {
			return nil, fmt.Errorf("framework: thetas[%d] (%s) is not a Bayesian network", t, th.Name)
		}
	}
	return build(names, domain, thetas, pairs, q, false)
}

func build(names []string, domain []*big.Rat, thetas []Theta, pairs []Pair, q Query, expand bool) (*Framework, error) {
	n, k := len(names), len(domain)
	if n == 0 {
		return nil, fmt.Errorf("framework: no records")
	}
	if k < 2 {
		return nil, fmt.Errorf("framework: the domain needs at least two values (got %d)", k)
	}
	for i := range domain {
		for j := range i {
			if domain[i].Cmp(domain[j]) == 0 {
				return nil, fmt.Errorf("framework: domain value %s is listed twice", domain[i].RatString())
			}
		}
	}
	seen := map[string]int{}
	for i, nm := range names {
		if j, dup := seen[nm]; dup {
			return nil, fmt.Errorf("framework: records %d and %d are both named %q", j+1, i+1, nm)
		}
		seen[nm] = i
	}
	if len(thetas) == 0 {
		return nil, fmt.Errorf("framework: Θ is empty (give at least one distribution in thetas)")
	}
	if q.Eval == nil || q.Dim < 1 {
		return nil, fmt.Errorf("framework: no query")
	}
	f := &Framework{Names: slices.Clone(names), Domain: domain, Query: q, Explicit: pairs != nil}
	one := big.NewRat(1, 1)
	for t, th := range thetas {
		label := th.Name
		if label == "" {
			label = fmt.Sprintf("thetas[%d]", t)
		}
		if th.Net != nil {
			if th.Net.N() != n || th.Net.K != k {
				return nil, fmt.Errorf("framework: %s: network has %d nodes over %d values, want %d records over %d", label, th.Net.N(), th.Net.K, n, k)
			}
			if !expand {
				f.Thetas = append(f.Thetas, Theta{Name: label, Net: th.Net})
				continue
			}
			if th.Atoms == nil {
				var atoms []Atom
				if err := th.Net.Enumerate(EnumerateLimit, func(x []int, p *big.Rat) {
					atoms = append(atoms, Atom{slices.Clone(x), new(big.Rat).Set(p)})
				}); err != nil {
					return nil, fmt.Errorf("framework: %s: %w", label, err)
				}
				th.Atoms = atoms
			}
		}
		total := new(big.Rat)
		keys := map[string]bool{}
		for a, at := range th.Atoms {
			if len(at.X) != n {
				return nil, fmt.Errorf("framework: %s: assignment %d has %d values, want %d", label, a+1, len(at.X), n)
			}
			for _, v := range at.X {
				if v < 0 || v >= k {
					return nil, fmt.Errorf("framework: %s: assignment %d has a value outside the domain", label, a+1)
				}
			}
			key := fmt.Sprint(at.X)
			if keys[key] {
				return nil, fmt.Errorf("framework: %s: assignment %s is listed twice", label, f.Format(at.X))
			}
			keys[key] = true
			if at.P == nil || at.P.Sign() < 0 {
				return nil, fmt.Errorf("framework: %s: assignment %s has a negative probability", label, f.Format(at.X))
			}
			total.Add(total, at.P)
		}
		if total.Cmp(one) != 0 {
			return nil, fmt.Errorf("framework: %s: probabilities sum to %s, not 1", label, total.RatString())
		}
		kept := make([]Atom, 0, len(th.Atoms))
		for _, at := range th.Atoms {
			if at.P.Sign() > 0 {
				kept = append(kept, at)
			}
		}
		f.Thetas = append(f.Thetas, Theta{Name: label, Atoms: kept, Net: th.Net})
	}
	if pairs == nil {
		f.Pairs = AllPairs(n, k)
	} else {
		for _, p := range pairs {
			if p.Record < 0 || p.Record >= n || p.A < 0 || p.A >= k || p.B < 0 || p.B >= k || p.A == p.B {
				return nil, fmt.Errorf("framework: secret pair %+v is out of range or compares a value with itself", p)
			}
			if p.A > p.B {
				p.A, p.B = p.B, p.A
			}
			f.Pairs = append(f.Pairs, p)
		}
		for _, p := range f.Pairs {
			if !expand {
				break // networks keep no joint table; MQM skips impossible secrets per node
			}
			for _, v := range []int{p.A, p.B} {
				zero := true
				for t := range f.Thetas {
					if f.SecretProb(t, p.Record, v).Sign() > 0 {
						zero = false
					}
				}
				if zero {
					return nil, fmt.Errorf("framework: secret %s = %s has probability zero under every θ; the pair protects nothing", f.Names[p.Record], domain[v].RatString())
				}
			}
		}
	}
	return f, nil
}

// Format renders an assignment with domain values.
func (f *Framework) Format(x []int) string {
	s := "["
	for i, v := range x {
		if i > 0 {
			s += ","
		}
		s += f.Domain[v].RatString()
	}
	return s + "]"
}

// SecretProb is P(X_record = Domain[v] | θ_t), exactly.
func (f *Framework) SecretProb(t, record, v int) *big.Rat {
	s := new(big.Rat)
	for _, at := range f.Thetas[t].Atoms {
		if at.X[record] == v {
			s.Add(s, at.P)
		}
	}
	return s
}

// Outcome is one value of the query with its exact conditional probability.
type Outcome struct {
	Value []*big.Rat
	P     *big.Rat
}

// Conditionals returns, for every record i and value v with P(X_i = v | θ_t)
// > 0, the exact distribution of F(X) given X_i = v under θ_t, sorted by
// value (lexicographically for vectors); cond[i][v] is nil when the secret
// has probability zero. One pass over the atoms per θ: probabilities are
// accumulated as integers over the atoms' common denominator.
func (f *Framework) Conditionals(t int) [][][]Outcome {
	n, k := f.N(), f.K()
	atoms := f.Thetas[t].Atoms
	den := big.NewInt(1)
	for _, at := range atoms {
		d := at.P.Denom()
		g := new(big.Int).GCD(nil, nil, den, d)
		den.Mul(den, new(big.Int).Quo(d, g))
	}
	// intern query values
	ids := map[string]int{}
	var values [][]*big.Rat
	fid := make([]int, len(atoms))
	num := make([]*big.Int, len(atoms))
	for a, at := range atoms {
		v := f.Query.Eval(at.X)
		key := ""
		for _, c := range v {
			key += c.RatString() + ","
		}
		id, ok := ids[key]
		if !ok {
			id = len(values)
			ids[key] = id
			values = append(values, v)
		}
		fid[a] = id
		num[a] = new(big.Int).Mul(at.P.Num(), new(big.Int).Quo(den, at.P.Denom()))
	}
	order := make([]int, len(values))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpVec(values[a], values[b]) })
	out := make([][][]Outcome, n)
	mass := make([][]*big.Int, k)
	for i := range n {
		for v := range k {
			mass[v] = make([]*big.Int, len(values))
		}
		for a, at := range atoms {
			m := &mass[at.X[i]][fid[a]]
			if *m == nil {
				*m = new(big.Int)
			}
			(*m).Add(*m, num[a])
		}
		out[i] = make([][]Outcome, k)
		for v := range k {
			tot := new(big.Int)
			for _, m := range mass[v] {
				if m != nil {
					tot.Add(tot, m)
				}
			}
			if tot.Sign() == 0 {
				continue
			}
			var dist []Outcome
			for _, id := range order {
				if m := mass[v][id]; m != nil && m.Sign() > 0 {
					dist = append(dist, Outcome{Value: values[id], P: new(big.Rat).SetFrac(m, tot)})
				}
			}
			out[i][v] = dist
		}
	}
	return out
}

func cmpVec(a, b []*big.Rat) int {
	for i := range a {
		if c := a[i].Cmp(b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// PairString renders a pair as "X_i: a vs b" with the record's name.
func (f *Framework) PairString(p Pair) string {
	return fmt.Sprintf("%s: %s vs %s", f.Names[p.Record], f.Domain[p.A].RatString(), f.Domain[p.B].RatString())
}

// ParseData reads a database written "v1,v2,...": one domain value per
// record (numbers or fractions), as indices into the domain.
func (f *Framework) ParseData(s string) ([]int, error) {
	parts := strings.Split(s, ",")
	if len(parts) != f.N() {
		return nil, fmt.Errorf("%d values, the framework has %d records", len(parts), f.N())
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		v, err := ratexpr.Eval(strings.TrimSpace(p), nil)
		if err != nil {
			return nil, fmt.Errorf("value %d: %v", i+1, err)
		}
		out[i] = -1
		for j, d := range f.Domain {
			if d.Cmp(v) == 0 {
				out[i] = j
			}
		}
		if out[i] < 0 {
			return nil, fmt.Errorf("value %d: %s is not in the domain", i+1, v.RatString())
		}
	}
	return out, nil
}
