package framework

import (
	"fmt"
	"math"
	"math/big"
)

// Groups returns the partition of the records that group differential
// privacy must protect as units ([SWC16] App. A.2.2): records in different
// groups are independent under every θ. Candidate groups are the connected
// components of "dependent under some θ" (tested pairwise in float64); the
// factorisation P(x) = Π_G P(x_G) is then verified exactly for every θ, and if
// it fails (dependence that no pair shows, e.g. a parity) all records form
// one group, which can only overstate the group-DP baseline.
func (f *Framework) Groups() [][]int {
	n, k := f.N(), f.K()
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	for _, th := range f.Thetas {
		p := make([]float64, len(th.Atoms))
		marg := make([][]float64, n)
		for i := range marg {
			marg[i] = make([]float64, k)
		}
		for a, at := range th.Atoms {
			p[a], _ = at.P.Float64()
			for i, v := range at.X {
				marg[i][v] += p[a]
			}
		}
		for i := range n {
			for j := i + 1; j < n; j++ {
				if find(i) == find(j) {
					continue
				}
				joint := make([]float64, k*k)
				for a, at := range th.Atoms {
					joint[at.X[i]*k+at.X[j]] += p[a]
				}
				for u := range k {
					for v := range k {
						if math.Abs(joint[u*k+v]-marg[i][u]*marg[j][v]) > 1e-12 {
							parent[find(i)] = find(j)
						}
					}
				}
			}
		}
	}
	idx := map[int]int{}
	var groups [][]int
	for i := range n {
		r := find(i)
		g, ok := idx[r]
		if !ok {
			g = len(groups)
			idx[r] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	if len(groups) > 1 && !f.factorises(groups) {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return [][]int{all}
	}
	return groups
}

// factorises checks exactly that every θ is the product of its group
// marginals (zero-probability assignments included: the product of the
// marginals' supports must not exceed the joint's support).
func (f *Framework) factorises(groups [][]int) bool {
	key := func(x []int, g []int) string {
		s := ""
		for _, i := range g {
			s += fmt.Sprint(x[i], ",")
		}
		return s
	}
	for _, th := range f.Thetas {
		margs := make([]map[string]*big.Rat, len(groups))
		for gi, g := range groups {
			margs[gi] = map[string]*big.Rat{}
			for _, at := range th.Atoms {
				kk := key(at.X, g)
				if margs[gi][kk] == nil {
					margs[gi][kk] = new(big.Rat)
				}
				margs[gi][kk].Add(margs[gi][kk], at.P)
			}
		}
		// Support sizes: Π |supp P(x_G)| must equal |supp P(x)|.
		prodSupport := 1.0
		for _, m := range margs {
			prodSupport *= float64(len(m))
		}
		if prodSupport != float64(len(th.Atoms)) {
			return false
		}
		for _, at := range th.Atoms {
			q := big.NewRat(1, 1)
			for gi, g := range groups {
				q.Mul(q, margs[gi][key(at.X, g)])
			}
			if q.Cmp(at.P) != 0 {
				return false
			}
		}
	}
	return true
}

// GroupSensitivity is the global sensitivity of the query in the group-DP
// framework over Groups (Def. A.3): the largest group size times the query's
// Lipschitz constant, which the built-in queries (sum, count, histogram)
// attain exactly; for a custom query it is the Lipschitz bound.
func (f *Framework) GroupSensitivity() (*big.Rat, [][]int) {
	groups := f.Groups()
	largest := 0
	for _, g := range groups {
		largest = max(largest, len(g))
	}
	return new(big.Rat).Mul(big.NewRat(int64(largest), 1), f.Query.Lipschitz), groups
}
