package mqm

import (
	"math"
	"math/big"

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
