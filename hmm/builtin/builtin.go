// Package builtin names the mechanisms puff verify can check without a
// model file: Noisy Max, the geometric mechanism, randomized response,
// [LWZ] Example 7.1, Above Threshold and Sparse Vector, each built by
// package hmm from a few parameters.
package builtin

import (
	"fmt"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/hmm"
)

// Names lists the built-ins.
var Names = []string{"noisy-max", "geometric", "rr", "example71", "above-threshold", "sparse-vector"}

// Params are the built-ins' parameters (each uses some of them).
type Params struct {
	Queries        int      // noisy-max, above-threshold, sparse-vector
	Returns        string   // noisy-max: "index" or "value"
	Neighbours     string   // noisy-max: "one" or "any"
	Alpha          *big.Rat // noisy-max, geometric, above-threshold/sparse-vector answers
	Range          int      // answers lie in 0..Range
	Keep           *big.Rat // rr
	P1, P2         *big.Rat // example71
	AlphaThreshold *big.Rat // above-threshold, sparse-vector
	Threshold      int
	Cutoff         int // sparse-vector
}

// Model is a built-in: what to check, a description and the observation
// length that covers it (1 for one-shot mechanisms). Noisy Max, the
// geometric mechanism and randomized response come as a DP mechanism
// (their model is built only when a length above 1 asks for it).
type Model struct {
	hmm.Problem
	Description   string
	DefaultLength int
}

// Load builds the named built-in.
func Load(name string, p Params) (Model, error) {
	switch name {
	case "noisy-max":
		ret := map[string]hmm.NoisyMaxReturns{"index": hmm.ReturnIndex, "value": hmm.ReturnValue}
		nb := map[string]hmm.Neighbours{"one": hmm.DifferByOne, "any": hmm.DifferAnyhow}
		r, ok := ret[p.Returns]
		if !ok {
			return Model{}, fmt.Errorf("returns %q: want index or value", p.Returns)
		}
		n, ok := nb[p.Neighbours]
		if !ok {
			return Model{}, fmt.Errorf("neighbours %q: want one or any", p.Neighbours)
		}
		d, err := hmm.NoisyMax(p.Queries, p.Range, p.Alpha, r, n)
		desc := fmt.Sprintf("Noisy Max over %d queries in 0..%d, α = %s, returns %s, DP neighbours %s", p.Queries, p.Range, p.Alpha.RatString(), p.Returns, p.Neighbours)
		return Model{Problem: hmm.Problem{DP: d}, Description: desc, DefaultLength: 1}, err
	case "geometric":
		d, err := hmm.GeometricMechanism(p.Alpha, p.Range)
		return Model{Problem: hmm.Problem{DP: d}, Description: fmt.Sprintf("α-geometric mechanism on 0..%d, α = %s, DP neighbours differ by one", p.Range, p.Alpha.RatString()), DefaultLength: 1}, err
	case "rr":
		d, err := hmm.RandomizedResponse(p.Keep)
		return Model{Problem: hmm.Problem{DP: d}, Description: "randomized response, keep " + p.Keep.RatString(), DefaultLength: 1}, err
	case "above-threshold", "sparse-vector":
		if p.Queries < 1 || p.Queries > 8 {
			return Model{}, fmt.Errorf("queries %d: want 1..8 (every answer vector in 0..RANGE is an input)", p.Queries)
		}
		c, label := 1, "Above Threshold"
		if name == "sparse-vector" {
			c, label = p.Cutoff, fmt.Sprintf("Sparse Vector (cutoff %d, fresh threshold after each ⊤)", p.Cutoff)
		}
		m, secs, err := hmm.SparseVectorDP(p.Queries, p.Threshold, p.Range, c, p.AlphaThreshold, p.Alpha)
		desc := fmt.Sprintf("%s over %d queries in 0..%d, threshold %d, α threshold %s, α answers %s, DP neighbours: every answer changes by ≤ 1",
			label, p.Queries, p.Range, p.Threshold, p.AlphaThreshold.RatString(), p.Alpha.RatString())
		return Model{Problem: hmm.Problem{Model: m, Secrets: secs}, Description: desc, DefaultLength: p.Queries}, err
	case "example71":
		m, sec, err := hmm.Example71(p.P1, p.P2)
		return Model{Problem: hmm.Problem{Model: m, Secrets: []hmm.Secret{sec}}, Description: fmt.Sprintf("[LWZ] Example 7.1, p1 = %s, p2 = %s", p.P1.RatString(), p.P2.RatString()), DefaultLength: 1}, err
	}
	return Model{}, fmt.Errorf("built-in %q: want one of %v", name, Names)
}
