package mqm

import (
	"fmt"
	"io"
	"math"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/bn"
	"github.com/pufferfish-privacy/pufferfish/framework"
	"github.com/pufferfish-privacy/pufferfish/noise"
)

// NetworkRelease releases the framework's query on data with the Markov
// Quilt Mechanism on networks ([SWC17] Thm 4.3): every coordinate gets
// noise of scale σ_max·L, L the query's Lipschitz constant (in L1) rounded
// up to a float64, through the one release path noise.Laplace.Release. It
// returns the released values and the per-coordinate scale.
func NetworkRelease(f *framework.Framework, data []int, res NetworkResult, lap *noise.Laplace) ([]float64, float64, error) {
	L := ceilFloat(f.Query.Lipschitz)
	var exact []float64
	for _, v := range f.Query.Eval(data) {
		x, _ := v.Float64()
		exact = append(exact, x)
	}
	out, err := lap.Release(exact, res.Sigma, L)
	if err != nil {
		return nil, 0, err
	}
	return out, noise.ScaleFor(res.Sigma, L), nil
}

// ceilFloat is the least float64 ≥ x.
func ceilFloat(x *big.Rat) float64 {
	f, exact := x.Float64()
	if !exact && new(big.Rat).SetFloat64(f).Cmp(x) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// NetworkReport is puff bn's answer (JSON field names are a contract):
// σ_max, where it is attained, and the released answer when there is data.
type NetworkReport struct {
	Epsilon    float64   `json:"epsilon"`
	Sigma      float64   `json:"sigma"`
	Lipschitz  float64   `json:"lipschitz"`
	Scale      float64   `json:"scale"` // σ_max·L, rounded up
	Query      string    `json:"query"`
	Theta      string    `json:"theta"`
	Node       string    `json:"node"`
	Quilt      []string  `json:"quilt"`
	Nearby     int       `json:"nearby"`
	Influence  float64   `json:"influence"`
	Candidates int       `json:"candidates"`
	Released   []float64 `json:"released,omitempty"`
	Estimate   []float64 `json:"estimate,omitempty"` // the released answer's consistent estimate (framework.Query.Estimate)
}

// RunNetwork runs the search over the framework's networks and, when data
// is not nil, releases the query (NetworkRelease).
func RunNetwork(f *framework.Framework, data []int, eps float64, opt NetworkOptions, lap *noise.Laplace) (NetworkReport, error) {
	var nets []*bn.Network
	for _, th := range f.Thetas {
		if th.Net == nil {
			return NetworkReport{}, fmt.Errorf("mqm: θ %q is not a Bayesian network", th.Name)
		}
		nets = append(nets, th.Net)
	}
	res, err := NetworkScale(nets, eps, opt)
	if err != nil {
		return NetworkReport{}, err
	}
	L := ceilFloat(f.Query.Lipschitz)
	rep := NetworkReport{Epsilon: eps, Sigma: res.Sigma, Lipschitz: L, Scale: noise.ScaleFor(res.Sigma, L),
		Query: f.Query.Name, Theta: f.Thetas[res.Theta].Name, Node: f.Names[res.Node], Nearby: res.Nearby,
		Influence: res.Influence, Candidates: res.Candidates, Quilt: []string{}}
	for _, q := range res.Quilt {
		rep.Quilt = append(rep.Quilt, f.Names[q])
	}
	if data != nil {
		if rep.Released, rep.Scale, err = NetworkRelease(f, data, res, lap); err != nil {
			return NetworkReport{}, err
		}
		if rep.Estimate, err = f.Estimate(rep.Released); err != nil {
			return NetworkReport{}, err
		}
	}
	return rep, nil
}

// WriteText prints the report as puff bn does.
func (r NetworkReport) WriteText(out io.Writer) error {
	fmt.Fprintf(out, "σ_max = %.6g (1-Lipschitz), Laplace scale σ_max·L = %.6g for %s (L = %g)\n", r.Sigma, r.Scale, r.Query, r.Lipschitz)
	fmt.Fprintf(out, "attained at node %s under θ %q: quilt %v, %d nearby nodes, max-influence %.6g\n", r.Node, r.Theta, r.Quilt, r.Nearby, r.Influence)
	fmt.Fprintf(out, "%d candidate quilts scored\n", r.Candidates)
	if r.Released != nil {
		fmt.Fprintf(out, "released %v\n", r.Released)
	}
	if r.Estimate != nil {
		fmt.Fprintf(out, "estimate %v (%s)\n", r.Estimate, framework.EstimateNote)
	}
	return nil
}
