package tpl

import (
	"math"
	"math/rand/v2"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x7e1)) }

// randomStochastic draws a k×k row-stochastic matrix; with zeroFrac > 0
// some entries are zero (rows keep at least one positive entry).
func randomStochastic(rng *rand.Rand, k int, conc float64) [][]float64 {
	P := make([][]float64, k)
	for i := range P {
		P[i] = randomDist(rng, k, conc)
	}
	return P
}

// randomDist draws from a symmetric Dirichlet-like law (exponentials raised
// to 1/conc, normalised).
func randomDist(rng *rand.Rand, k int, conc float64) []float64 {
	p := make([]float64, k)
	s := 0.0
	for j := range p {
		p[j] = rng.ExpFloat64()
		if conc != 1 {
			p[j] = math.Pow(p[j], 1/conc)
		}
		s += p[j]
	}
	for j := range p {
		p[j] /= s
	}
	return p
}
