package wasserstein

import (
	"fmt"
	"math"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/framework"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/noise"
)

// Skip records a secret pair left out under one θ because one of its secrets
// has probability zero there (Pufferfish constrains only pairs whose secrets
// both have positive probability, docs/math.md §1).
type Skip struct {
	Pair  framework.Pair
	Theta int
	Value int // the domain index with probability zero
}

// Result is the Wasserstein Mechanism's parameter W with where it is attained.
type Result struct {
	W     *big.Rat // exact
	Delta *big.Rat // δ of the (ε, δ) variant; 0 for pure ε
	Pair  framework.Pair
	Theta int
	Skips []Skip
	// Unit is the smallest non-zero change of any coordinate of F between
	// two of its possible values; the noise sampler needs it (Release).
	Unit *big.Rat
}

// Parameter computes W = max over secret pairs and θ of the (δ-trimmed) W∞
// between the conditional distributions of F (Algorithm 1, or App. A.4 when
// δ > 0). Scalar queries use WInf / Trimmed, vector queries WInfL1.
//
// Cost: one pass over each θ's joint table per record to build the
// conditionals (O(|Θ|·n·atoms) exact integer additions), then one W∞ per pair
// and θ: O(s log s) for a scalar query with s distinct values, a bisection
// of max-flows for a vector query.
func Parameter(f *framework.Framework, delta *big.Rat) (Result, error) {
	if delta == nil {
		delta = new(big.Rat)
	}
	res := Result{W: new(big.Rat), Delta: new(big.Rat).Set(delta), Pair: f.Pairs[0]}
	found := false
	gaps := make([][]*big.Rat, f.Query.Dim)
	for t := range f.Thetas {
		cond := f.Conditionals(t)
		for _, byValue := range cond {
			for _, d := range byValue {
				for _, o := range d {
					for c, v := range o.Value {
						gaps[c] = append(gaps[c], v)
					}
				}
			}
		}
		for _, p := range f.Pairs {
			mu, nu := cond[p.Record][p.A], cond[p.Record][p.B]
			if mu == nil || nu == nil {
				v := p.A
				if mu != nil {
					v = p.B
				}
				res.Skips = append(res.Skips, Skip{p, t, v})
				continue
			}
			w, err := Between(mu, nu, delta)
			if err != nil {
				return Result{}, fmt.Errorf("wasserstein: θ %s, pair %s: %w", f.Thetas[t].Name, f.PairString(p), err)
			}
			if !found || w.Cmp(res.W) > 0 {
				res.W, res.Pair, res.Theta, found = w, p, t, true
			}
		}
	}
	if !found {
		return Result{}, fmt.Errorf("wasserstein: no secret pair has both secrets of positive probability under any θ")
	}
	for _, vs := range gaps {
		vs = sortUnique(vs)
		for i := 1; i < len(vs); i++ {
			g := new(big.Rat).Sub(vs[i], vs[i-1])
			if res.Unit == nil || g.Cmp(res.Unit) < 0 {
				res.Unit = g
			}
		}
	}
	if res.Unit == nil { // F is constant: W = 0
		res.Unit = big.NewRat(1, 1)
	}
	return res, nil
}

// Between is the (δ-trimmed) W∞ between two conditional distributions of a
// query, in L1 for vectors.
func Between(mu, nu []framework.Outcome, delta *big.Rat) (*big.Rat, error) {
	if len(mu[0].Value) == 1 {
		return Trimmed(line(mu), line(nu), delta)
	}
	return WInfL1(vec(mu), vec(nu), delta)
}

func line(d []framework.Outcome) Dist {
	out := Dist{X: make([]*big.Rat, len(d)), W: make([]*big.Rat, len(d))}
	for i, o := range d {
		out.X[i], out.W[i] = o.Value[0], o.P
	}
	return out
}

func vec(d []framework.Outcome) VDist {
	out := VDist{X: make([][]*big.Rat, len(d)), W: make([]*big.Rat, len(d))}
	for i, o := range d {
		out.X[i], out.W[i] = o.Value, o.P
	}
	return out
}

// Sigma is the Laplace scale W/ε, rounded up so the noise is never below it.
func (r Result) Sigma(eps float64) (float64, error) {
	if err := checks.Epsilon(eps); err != nil {
		return 0, fmt.Errorf("wasserstein: %w", err)
	}
	return ceilFloat(new(big.Rat).Quo(r.W, new(big.Rat).SetFloat64(eps))), nil
}

// ceilFloat is the least float64 ≥ x.
func ceilFloat(x *big.Rat) float64 {
	f, exact := x.Float64()
	if !exact && new(big.Rat).SetFloat64(f).Cmp(x) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// Release returns F(data) + Lap(W/ε) on every coordinate, with noise from
// package noise (crypto/rand, snapped to a power-of-two grid; the ratio for
// inputs s ≥ Unit apart stays within exp(s/σ)). When W = 0
// the query's distribution does not depend on any secret and F(data) is
// released as is.
func Release(f *framework.Framework, data []int, eps float64, r Result, lap *noise.Laplace) ([]float64, error) {
	if len(data) != f.N() {
		return nil, fmt.Errorf("wasserstein: data has %d records, the framework %d", len(data), f.N())
	}
	sigma, err := r.Sigma(eps)
	if err != nil {
		return nil, err
	}
	exact := f.Query.Eval(data)
	out := make([]float64, len(exact))
	// Coupled values differ in each coordinate by 0 or by at least Unit, so
	// the sampler's guarantee for shifts ≥ unit covers every coordinate.
	unit, _ := r.Unit.Float64()
	unit = math.Nextafter(unit, 0)
	for i, v := range exact {
		x, _ := v.Float64()
		if r.W.Sign() == 0 {
			out[i] = x
			continue
		}
		if out[i], err = lap.Add(x, sigma, unit); err != nil {
			return nil, err
		}
	}
	return out, nil
}
