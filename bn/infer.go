package bn

import (
	"fmt"
	"slices"
)

// Marginal is the joint distribution of Vars as a dense table in mixed radix
// (Vars[0] most significant). RelErr bounds the relative floating-point error
// of every entry: all operations of variable elimination are products and
// sums of non-negative numbers, so each entry is within a factor
// (1 ± RelErr) of the exact marginal.
type Marginal struct {
	Vars   []int
	P      []float64
	RelErr float64
}

type factor struct {
	vars  []int
	table []float64
	depth int // longest chain of roundings behind any entry
}

// Marginal computes P(X_vars) by variable elimination over the ancestors of
// vars (other nodes sum to one and are dropped), eliminating at each step the
// variable whose elimination creates the smallest table. It fails with the
// size that would be needed when an intermediate table would exceed limit
// entries. Cost: O(Σ steps K^{width+1}), linear in n for trees and chains.
func (net *Network) Marginal(vars []int, limit int) (Marginal, error) {
	n := net.N()
	want := make([]bool, n)
	for _, v := range vars {
		if v < 0 || v >= n {
			return Marginal{}, fmt.Errorf("bn: node %d out of range", v)
		}
		if want[v] {
			return Marginal{}, fmt.Errorf("bn: node %q requested twice", net.Nodes[v].Name)
		}
		want[v] = true
	}
	anc := make([]bool, n)
	var mark func(int)
	mark = func(u int) {
		if anc[u] {
			return
		}
		anc[u] = true
		for _, p := range net.Nodes[u].Parents {
			mark(p)
		}
	}
	for _, v := range vars {
		mark(v)
	}
	var fs []*factor
	for u := range n {
		if !anc[u] {
			continue
		}
		nd := net.Nodes[u]
		f := &factor{vars: append(slices.Clone(nd.Parents), u)}
		f.table = make([]float64, 0, len(nd.CPT)*net.K)
		for _, row := range net.cpt[u] {
			f.table = append(f.table, row...)
		}
		fs = append(fs, f)
	}
	for {
		// Pick the non-query variable whose elimination table is smallest.
		best, bestSize := -1, 0.0
		for u := range n {
			if !anc[u] || want[u] {
				continue
			}
			size := float64(len(unionVars(fs, u)))
			if best < 0 || size < bestSize {
				best, bestSize = u, size
			}
		}
		if best < 0 {
			break
		}
		var with, rest []*factor
		for _, f := range fs {
			if slices.Contains(f.vars, best) {
				with = append(with, f)
			} else {
				rest = append(rest, f)
			}
		}
		prod, err := net.product(with, limit)
		if err != nil {
			return Marginal{}, err
		}
		fs = append(rest, net.sumOut(prod, best))
		anc[best] = false
	}
	prod, err := net.product(fs, limit)
	if err != nil {
		return Marginal{}, err
	}
	out := net.reorder(prod, vars)
	const u = 0x1p-53
	d := float64(prod.depth + 1)
	return Marginal{Vars: slices.Clone(vars), P: out, RelErr: 1.01 * d * u}, nil
}

// unionVars lists the variables of the table created by eliminating u.
func unionVars(fs []*factor, u int) []int {
	var vs []int
	for _, f := range fs {
		if !slices.Contains(f.vars, u) {
			continue
		}
		for _, v := range f.vars {
			if !slices.Contains(vs, v) {
				vs = append(vs, v)
			}
		}
	}
	return vs
}

func (net *Network) size(vars []int) float64 {
	s := 1.0
	for range vars {
		s *= float64(net.K)
	}
	return s
}

// product multiplies factors into one table over the union of their vars.
func (net *Network) product(fs []*factor, limit int) (*factor, error) {
	var vars []int
	depth := 0
	for _, f := range fs {
		for _, v := range f.vars {
			if !slices.Contains(vars, v) {
				vars = append(vars, v)
			}
		}
		depth = max(depth, f.depth)
	}
	if s := net.size(vars); s > float64(limit) {
		return nil, fmt.Errorf("bn: exact inference needs a table over %d variables (%.3g entries), more than the limit %d", len(vars), s, limit)
	}
	k := net.K
	out := &factor{vars: vars, table: make([]float64, int(net.size(vars))), depth: depth + len(fs)}
	// strides[f][j]: stride in factor f of union variable j (0 if absent).
	strides := make([][]int, len(fs))
	for fi, f := range fs {
		strides[fi] = make([]int, len(vars))
		s := 1
		for j := len(f.vars) - 1; j >= 0; j-- {
			strides[fi][slices.Index(vars, f.vars[j])] = s
			s *= k
		}
	}
	idx := make([]int, len(fs))
	digit := make([]int, len(vars))
	for e := range out.table {
		p := 1.0
		for fi, f := range fs {
			p *= f.table[idx[fi]]
		}
		out.table[e] = p
		// odometer increment, last variable fastest
		for j := len(vars) - 1; j >= 0; j-- {
			digit[j]++
			for fi := range fs {
				idx[fi] += strides[fi][j]
			}
			if digit[j] < k {
				break
			}
			digit[j] = 0
			for fi := range fs {
				idx[fi] -= k * strides[fi][j]
			}
		}
	}
	return out, nil
}

// sumOut marginalises variable u out of f.
func (net *Network) sumOut(f *factor, u int) *factor {
	k := net.K
	pos := slices.Index(f.vars, u)
	inner := 1
	for range f.vars[pos+1:] {
		inner *= k
	}
	outer := len(f.table) / (inner * k)
	out := &factor{vars: slices.Delete(slices.Clone(f.vars), pos, pos+1), table: make([]float64, outer*inner), depth: f.depth + k}
	for o := range outer {
		for v := range k {
			base := (o*k + v) * inner
			for j := range inner {
				out.table[o*inner+j] += f.table[base+j]
			}
		}
	}
	return out
}

// reorder returns f's table with its variables permuted into vars.
func (net *Network) reorder(f *factor, vars []int) []float64 {
	k := net.K
	out := make([]float64, len(f.table))
	stride := make([]int, len(vars))
	for j := range vars {
		s := 1
		for _, v := range f.vars[slices.Index(f.vars, vars[j])+1:] {
			_ = v
			s *= k
		}
		stride[j] = s
	}
	digit := make([]int, len(vars))
	src := 0
	for e := range out {
		out[e] = f.table[src]
		for j := len(vars) - 1; j >= 0; j-- {
			digit[j]++
			src += stride[j]
			if digit[j] < k {
				break
			}
			digit[j] = 0
			src -= k * stride[j]
		}
	}
	return out
}
