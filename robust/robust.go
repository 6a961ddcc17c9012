// Package robust bounds the privacy loss of an ε-Pufferfish mechanism
// against an adversary whose belief θ̃ lies outside the class Θ it was
// calibrated for ([SWC17] Theorem 2.4; docs/math.md §3).
//
// # Guarantee
//
// If M is ε-Pufferfish private for Θ, then against θ̃ it is (ε + 2Δ)-Pufferfish
// private, where
//
//	Δ = min_{θ ∈ Θ} max_{secrets s} max( D∞(θ̃|s ‖ θ|s), D∞(θ|s ‖ θ̃|s) )
//
// and θ|s is the distribution of the whole database given the secret s. Why:
// M's output law given the data does not depend on θ, so for every output w,
// P(M = w | s, θ̃) = Σ_x P(M = w | x)·θ̃(x|s) ≤ e^{D∞(θ̃|s‖θ|s)}·P(M = w | s, θ);
// the ratio for a pair (s_i, s_j) under θ̃ then splits into θ̃→θ for s_i, the
// ε-guarantee under θ, and θ→θ̃ for s_j.
//
// Secrets of probability zero under θ̃ are unconstrained and skipped; a
// secret possible under θ̃ but impossible under θ makes that θ unusable
// (D∞ = +∞). Ratios are exact rationals; their logarithms are rounded up.
package robust

import (
	"fmt"
	"io"
	"math"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/framework"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/wasserstein"
)

// Result is Δ for one adversary belief.
type Result struct {
	Delta     float64 // Δ, rounded up; +Inf when no θ covers θ̃'s secrets
	Theta     int     // index in Θ attaining the minimum
	Record    int     // the secret X_Record = Domain[Value] attaining the max for Theta
	Value     int
	PerTheta  []float64 // max over secrets of the two-way D∞, for every θ
	Guarantee float64   // ε + 2Δ for the ε given to Bound
}

// Bound computes Δ between the adversary's belief adv (a distribution over
// the framework's records, like any θ) and the framework's Θ, and the
// resulting guarantee for an ε-Pufferfish mechanism. Cost: O(|Θ|·n·K·atoms)
// exact rational operations.
func Bound(f *framework.Framework, adv framework.Theta, eps float64) (Result, error) {
	if err := checks.EpsilonSpent(eps); err != nil {
		return Result{}, fmt.Errorf("robust: %w", err)
	}
	g, err := framework.New(f.Names, f.Domain, []framework.Theta{adv}, nil, f.Query)
	if err != nil {
		return Result{}, fmt.Errorf("robust: adversary belief: %w", err)
	}
	advA := index(g.Thetas[0].Atoms)
	secrets := map[[2]int]bool{}
	for _, p := range f.Pairs {
		secrets[[2]int{p.Record, p.A}] = true
		secrets[[2]int{p.Record, p.B}] = true
	}
	res := Result{Delta: math.Inf(1), PerTheta: make([]float64, len(f.Thetas))}
	for t := range f.Thetas {
		thA := index(f.Thetas[t].Atoms)
		worst, wr, wv := 0.0, -1, -1
		for s := range secrets {
			i, v := s[0], s[1]
			pa := g.SecretProb(0, i, v)
			if pa.Sign() == 0 {
				continue
			}
			pt := f.SecretProb(t, i, v)
			d := math.Inf(1)
			if pt.Sign() > 0 {
				d = twoWay(g.Thetas[0].Atoms, f.Thetas[t].Atoms, advA, thA, i, v, pa, pt)
			}
			if d > worst || wr < 0 {
				worst, wr, wv = d, i, v
			}
		}
		res.PerTheta[t] = worst
		if t == 0 || worst < res.Delta {
			res.Delta, res.Theta, res.Record, res.Value = worst, t, wr, wv
		}
	}
	res.Guarantee = math.Nextafter(eps+2*res.Delta, math.Inf(1))
	return res, nil
}

func index(atoms []framework.Atom) map[string]*big.Rat {
	m := make(map[string]*big.Rat, len(atoms))
	for _, a := range atoms {
		m[fmt.Sprint(a.X)] = a.P
	}
	return m
}

// twoWay is max(D∞(θ̃|s‖θ|s), D∞(θ|s‖θ̃|s)) for s = (X_i = v), given the
// secret's probabilities pa under θ̃ and pt under θ. Both conditionals must
// have the same support, else +∞.
func twoWay(adv, th []framework.Atom, advIdx, thIdx map[string]*big.Rat, i, v int, pa, pt *big.Rat) float64 {
	r := new(big.Rat)
	// best ratio (p/pNum)/(q/pDen) over atoms of num with x_i = v; false if
	// den lacks one of them.
	worst := func(num []framework.Atom, den map[string]*big.Rat, pNum, pDen *big.Rat) (*big.Rat, bool) {
		var best *big.Rat
		for _, a := range num {
			if a.X[i] != v {
				continue
			}
			q, ok := den[fmt.Sprint(a.X)]
			if !ok || q.Sign() == 0 {
				return nil, false
			}
			r.Quo(a.P, q)
			r.Mul(r, pDen)
			r.Quo(r, pNum)
			if best == nil || r.Cmp(best) > 0 {
				best = new(big.Rat).Set(r)
			}
		}
		return best, true
	}
	up, ok1 := worst(adv, thIdx, pa, pt)
	down, ok2 := worst(th, advIdx, pt, pa)
	if !ok1 || !ok2 {
		return math.Inf(1)
	}
	return max(logUp(up), logUp(down), 0)
}

// logUp is an upper bound on log r: the log of the least float ≥ r, moved
// up two ulps for the error of math.Log.
func logUp(r *big.Rat) float64 {
	if r.Cmp(big.NewRat(1, 1)) == 0 {
		return 0
	}
	f, _ := r.Float64()
	if new(big.Rat).SetFloat64(f).Cmp(r) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	l := math.Log(f)
	return math.Nextafter(math.Nextafter(l, math.Inf(1)), math.Inf(1))
}

// Belief is the guarantee against one adversary belief, as puff robust
// reports it (JSON field names are a contract). Delta and Guarantee are −1
// when Infinite (JSON has no infinity).
type Belief struct {
	Name      string   `json:"name"`
	Delta     float64  `json:"delta"`
	Infinite  bool     `json:"infinite"` // no θ in Θ covers the belief: no guarantee
	Theta     string   `json:"closest_theta"`
	Secret    string   `json:"secret"`
	Guarantee float64  `json:"guarantee"`
	Actual    *float64 `json:"wasserstein_actual_loss,omitempty"`
}

// Beliefs bounds every belief (theta) of adv against f's Θ for an
// ε-Pufferfish mechanism, and for a scalar query computes the actual loss
// under each belief of the Wasserstein Mechanism calibrated on Θ (by brute
// force over the belief's atoms), which never exceeds the bound.
func Beliefs(f, adv *framework.Framework, eps float64) ([]Belief, error) {
	if adv.N() != f.N() || adv.K() != f.K() {
		return nil, fmt.Errorf("robust: the beliefs cover %d records over %d values, the framework %d over %d", adv.N(), adv.K(), f.N(), f.K())
	}
	var sigma float64
	if f.Query.Dim == 1 {
		res, err := wasserstein.Parameter(f, nil)
		if err != nil {
			return nil, err
		}
		if sigma, err = res.Sigma(eps); err != nil {
			return nil, err
		}
	}
	var out []Belief
	for _, th := range adv.Thetas {
		r, err := Bound(f, th, eps)
		if err != nil {
			return nil, err
		}
		b := Belief{Name: th.Name, Delta: r.Delta, Infinite: math.IsInf(r.Delta, 1), Theta: f.Thetas[r.Theta].Name, Guarantee: r.Guarantee}
		if b.Infinite {
			b.Delta, b.Guarantee = -1, -1
		}
		if r.Record >= 0 {
			b.Secret = fmt.Sprintf("%s = %s", f.Names[r.Record], f.Domain[r.Value].RatString())
		}
		if sigma > 0 {
			g, err := framework.New(f.Names, f.Domain, []framework.Theta{th}, nil, f.Query)
			if err != nil {
				return nil, err
			}
			l, _, _, err := g.MechanismLoss(sigma)
			if err != nil {
				return nil, err
			}
			b.Actual = &l
		}
		out = append(out, b)
	}
	return out, nil
}

// WriteBeliefs prints the beliefs as puff robust does.
func WriteBeliefs(w io.Writer, bs []Belief) error {
	for _, b := range bs {
		if b.Infinite {
			fmt.Fprintf(w, "%s: no θ in Θ covers this belief (a secret it considers possible is impossible under every θ); no guarantee\n", b.Name)
			continue
		}
		fmt.Fprintf(w, "%s: Δ = %.6g (closest θ %q, worst secret %s), guarantee ε + 2Δ = %.6g", b.Name, b.Delta, b.Theta, b.Secret, b.Guarantee)
		if b.Actual != nil {
			fmt.Fprintf(w, "; Wasserstein Mechanism's actual loss %.6g", *b.Actual)
		}
		fmt.Fprintln(w)
	}
	return nil
}
