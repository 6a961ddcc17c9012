// Package synth releases the matrix of transition counts of categorical
// series with Pufferfish privacy and turns it into synthetic series
// (docs/math.md §4.13).
//
// # Guarantee
//
// Transitions are counted between rows of one series at consecutive chain
// times with known values; one reading is in two of them, so the matrix
// moves by at most 4 in L1 when one reading changes. Every cell gets
// Laplace noise of scale 4σ, σ the smaller of the Markov Quilt
// Mechanism's over every series' observation pattern ([SWC17] Thm 4.3) and
// the temporal leakage bound's ([CYXX18]; docs/math.md §8.6), as for
// joint windows: ε-Pufferfish for the class. The chain (each row projected
// onto the simplex) and the synthetic series drawn from it are
// post-processing of the release and of the public observation patterns:
// they cost nothing more, and their sampling may use a seeded generator.
// The noise comes from package noise (crypto/rand).
package synth

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/pufferfish-privacy/pufferfish/estimate"
	"github.com/pufferfish-privacy/pufferfish/query"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// Lipschitz is the transition matrix's constant in L1 per reading
// (docs/math.md §4.13, Lemma): a reading is in two transitions.
const Lipschitz = 4 // query.Transitions' sensitivity

// Query names the release in reports and the ledger: query.Transitions.
var Query = query.Transitions.Name()

// Count is the k×k matrix of transition counts of data (from row, to
// column): pairs of known readings one chain step apart in one series
// (Data.Runs: a missing reading or value breaks them).
func Count(data *reading.Data) [][]float64 {
	k := len(data.States)
	c := make([][]float64, k)
	for i := range c {
		c[i] = make([]float64, k)
	}
	for _, run := range data.Runs() {
		for t := 1; t < len(run); t++ {
			c[run[t-1]][run[t]]++
		}
	}
	return c
}

// Pairs is the number of transitions the observation pattern holds: pairs
// of rows one time step apart, public like the pattern (docs/math.md
// §4.8). With every value known the transition counts sum to it; a
// missing value removes its pairs from Count, never from Pairs.
func Pairs(data *reading.Data) int {
	n := 0
	for s, seq := range data.Seqs {
		var off []int
		if data.Offsets != nil {
			off = data.Offsets[s]
		}
		for j := 1; j < len(seq); j++ {
			if off == nil || off[j] == off[j-1]+1 {
				n++
			}
		}
	}
	return n
}

// Project is the stochastic matrix of noisy counts (docs/math.md §4.13):
// each row projected in Euclidean norm onto the nonnegative vectors
// summing to the row's noisy total, over that total; a row whose total
// is not positive is uniform.
func Project(c [][]float64) [][]float64 {
	p := make([][]float64, len(c))
	for i, row := range c {
		total := 0.0
		for _, v := range row {
			total += v
		}
		if !(total > 0) {
			p[i] = make([]float64, len(row))
			for j := range p[i] {
				p[i][j] = 1 / float64(len(row))
			}
			continue
		}
		scaled := make([]float64, len(row))
		for j, v := range row {
			scaled[j] = v / total
		}
		p[i] = Simplex(scaled)
	}
	return p
}

// Simplex is the Euclidean projection of v onto the probability simplex
// ([DSSC08] Fig. 1; package estimate, docs/math.md §4.14): max(v − τ, 0)
// with τ such that the entries sum to 1. A v that is not finite gives the
// uniform law.
func Simplex(v []float64) []float64 {
	out, err := estimate.Simplex(v, 1)
	if err != nil {
		out = make([]float64, len(v))
		for j := range out {
			out[j] = 1 / float64(len(v))
		}
		return out
	}
	total := 0.0
	for _, x := range out {
		total += x
	}
	for j := range out { // rounding: sum to 1 exactly enough to sample
		out[j] /= total
	}
	return out
}

// Stationary is a stationary law of the stochastic matrix p (docs/math.md
// §4.13): the limit of u·Q^m from the uniform u for the lazy chain
// Q = (I + p)/2, which has the stationary laws of p and is aperiodic, so
// the powers converge (to a stationary law of p, reducible or not). It
// stops when a step moves the law by less than 10⁻¹⁴ in L1, or after 2²⁰
// steps.
func Stationary(p [][]float64) []float64 {
	k := len(p)
	v := make([]float64, k)
	for i := range v {
		v[i] = 1 / float64(k)
	}
	next := make([]float64, k)
	for range 1 << 20 {
		for j := range next {
			next[j] = v[j] / 2
		}
		for i, vi := range v {
			for j, pij := range p[i] {
				next[j] += vi * pij / 2
			}
		}
		d := 0.0
		for j := range v {
			d += math.Abs(next[j] - v[j])
		}
		v, next = next, v
		if d < 1e-14 {
			break
		}
	}
	return v
}

// Sample draws one synthetic series per series of data from the chain p
// with initial law pi: the same rows and times (the public observation
// pattern), the chain running through steps without a row, and a drawn
// value at every row (which values were missing is not copied). Series
// are named 1, 2, … in data's order: a series' name is an identifier that
// no report prints, so it is not copied either. data is not modified.
func Sample(p [][]float64, pi []float64, data *reading.Data, rng *rand.Rand) (*reading.Data, error) {
	k := len(data.States)
	if len(p) != k || len(pi) != k {
		return nil, errors.New("synth: the chain's states differ from the data's")
	}
	names := make([]string, len(data.Seqs))
	for i := range names {
		names[i] = strconv.Itoa(i + 1)
	}
	out := &reading.Data{States: data.States, Series: names, Offsets: data.Offsets, Step: data.Step, StepSource: data.StepSource,
		Times: data.Times, TimeText: data.TimeText, Levels: data.Levels, Starts: data.Starts, Seqs: make([][]int, len(data.Seqs))}
	draw := func(w []float64) int {
		u := rng.Float64()
		for j, x := range w {
			if u < x {
				return j
			}
			u -= x
		}
		for j := len(w) - 1; j >= 0; j-- { // rounding: the last positive
			if w[j] > 0 {
				return j
			}
		}
		return len(w) - 1
	}
	for s, seq := range data.Seqs {
		syn := make([]int, len(seq))
		var off []int
		if data.Offsets != nil {
			off = data.Offsets[s]
		}
		for j := range seq {
			if j == 0 {
				syn[0] = draw(pi)
				continue
			}
			x := syn[j-1]
			steps := 1
			if off != nil {
				steps = off[j] - off[j-1]
			}
			for range steps {
				x = draw(p[x])
			}
			syn[j] = x
		}
		out.Seqs[s] = syn
	}
	return out, nil
}
