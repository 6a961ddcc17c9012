package wasserstein

import (
	"fmt"
	"io"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/framework"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/noise"
)

// Attained names where W is attained: the θ, the record and its two values.
type Attained struct {
	Theta  string   `json:"theta"`
	Record string   `json:"record"`
	Values []string `json:"values"`
}

// GroupBaseline is the group-DP comparison: the largest group of dependent
// records times the query's Lipschitz constant ([SWC17] Thm 3.3: W never
// exceeds it).
type GroupBaseline struct {
	Sensitivity float64    `json:"sensitivity"`
	Sigma       float64    `json:"sigma"`
	Groups      [][]string `json:"groups"`
}

// Report is the outcome of the Wasserstein Mechanism on a framework (puff
// wasserstein; JSON field names are a contract). It never holds the exact
// answer.
type Report struct {
	W            float64       `json:"W"`
	WExact       string        `json:"W_exact"`
	Sigma        float64       `json:"sigma"`
	Epsilon      float64       `json:"epsilon"`
	Delta        string        `json:"delta"`
	Query        string        `json:"query"`
	Attained     Attained      `json:"attained"`
	GroupDP      GroupBaseline `json:"group_dp"`
	SkippedPairs int           `json:"skipped_pairs"`
	Released     []float64     `json:"released,omitempty"`
	Estimate     []float64     `json:"estimate,omitempty"` // the released answer's consistent estimate (framework.Query.Estimate)
	Guarantee    string        `json:"guarantee"`

	Result Result `json:"-"` // the exact parameter, for callers
}

// Run computes W (δ-trimmed when delta > 0), σ = W/ε and the group-DP
// baseline, and releases the query on data when data is not nil.
func Run(f *framework.Framework, data []int, eps float64, delta *big.Rat, lap *noise.Laplace) (Report, error) {
	if err := checks.Epsilon(eps); err != nil {
		return Report{}, fmt.Errorf("wasserstein: %w", err)
	}
	if err := checks.Delta(delta); err != nil {
		return Report{}, fmt.Errorf("wasserstein: %w", err)
	}
	res, err := Parameter(f, delta)
	if err != nil {
		return Report{}, err
	}
	sigma, err := res.Sigma(eps)
	if err != nil {
		return Report{}, err
	}
	w, _ := res.W.Float64()
	p := res.Pair
	rep := Report{W: w, WExact: res.W.RatString(), Sigma: sigma, Epsilon: eps, Delta: delta.RatString(), Query: f.Query.Name,
		Attained:     Attained{Theta: f.Thetas[res.Theta].Name, Record: f.Names[p.Record], Values: []string{f.Domain[p.A].RatString(), f.Domain[p.B].RatString()}},
		SkippedPairs: len(res.Skips), Result: res}
	gs, groups := f.GroupSensitivity()
	rep.GroupDP.Sensitivity, _ = gs.Float64()
	rep.GroupDP.Sigma = rep.GroupDP.Sensitivity / eps
	for _, g := range groups {
		var names []string
		for _, i := range g {
			names = append(names, f.Names[i])
		}
		rep.GroupDP.Groups = append(rep.GroupDP.Groups, names)
	}
	rep.Guarantee = fmt.Sprintf("ε = %g Pufferfish privacy for every secret pair and every θ in the file ([SWC17] Theorem 3.2)", eps)
	if delta.Sign() > 0 {
		rep.Guarantee = fmt.Sprintf("(ε, δ) = (%g, %s) Pufferfish privacy ([SWC16] Theorem A.8)", eps, delta.RatString())
	}
	if data != nil {
		if rep.Released, err = Release(f, data, eps, res, lap); err != nil {
			return Report{}, err
		}
		if rep.Estimate, err = f.Estimate(rep.Released); err != nil {
			return Report{}, err
		}
	}
	return rep, nil
}

// WriteText prints the report as puff wasserstein does.
func (r Report) WriteText(f *framework.Framework, out io.Writer) error {
	fmt.Fprintf(out, "W = %s (%s), attained under θ %q for %s\n", r.WExact, f.Query.Name, r.Attained.Theta, f.PairString(r.Result.Pair))
	fmt.Fprintf(out, "Laplace scale σ = W/ε = %.6g\n", r.Sigma)
	fmt.Fprintf(out, "group DP baseline: sensitivity %g, σ = %.6g (groups %v)\n", r.GroupDP.Sensitivity, r.GroupDP.Sigma, r.GroupDP.Groups)
	if r.SkippedPairs > 0 {
		fmt.Fprintf(out, "%d (pair, θ) combinations skipped: a secret has probability zero there\n", r.SkippedPairs)
	}
	if r.Released != nil {
		fmt.Fprintf(out, "released %v\n", r.Released)
	}
	if r.Estimate != nil {
		fmt.Fprintf(out, "estimate %v (%s)\n", r.Estimate, framework.EstimateNote)
	}
	_, err := fmt.Fprintln(out, "guarantee:", r.Guarantee)
	return err
}
