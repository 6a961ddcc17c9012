package wasserstein

import (
	"fmt"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
)

// VDist is a finitely supported distribution on R^d with exact weights.
type VDist struct {
	X [][]*big.Rat
	W []*big.Rat
}

// WInfL1 returns the (δ-trimmed, as in Trimmed) ∞-Wasserstein distance
// between two distributions on R^d with the L1 ground metric: the least w such
// that a transport of mass 1 − δ moves no mass farther than w in L1. It is
// exact: the candidates are the n·m pairwise distances (at most
// CandidateLimit), bisected with an exact max-flow feasibility test (Dinic's
// algorithm on integer capacities), O(log(nm) · flow(n + m, nm)).
// On the line it agrees with WInf and Trimmed (tested).
func WInfL1(mu, nu VDist, delta *big.Rat) (*big.Rat, error) {
	if delta == nil {
		delta = new(big.Rat)
	}
	if err := checks.Delta(delta); err != nil {
		return nil, fmt.Errorf("wasserstein: %w", err)
	}
	if len(mu.X) == 0 || len(nu.X) == 0 || len(mu.X) != len(mu.W) || len(nu.X) != len(nu.W) {
		return nil, fmt.Errorf("wasserstein: each distribution needs as many weights as atoms (at least one)")
	}
	dim := len(mu.X[0])
	for _, d := range [][][]*big.Rat{mu.X, nu.X} {
		for _, x := range d {
			if len(x) != dim {
				return nil, fmt.Errorf("wasserstein: atoms of different dimensions (%d and %d)", len(x), dim)
			}
		}
	}
	n, m := len(mu.X), len(nu.X)
	if n*m > CandidateLimit {
		return nil, fmt.Errorf("wasserstein: %d candidate distances exceed the exact search limit %d", n*m, CandidateLimit)
	}
	// Integer weights over a common denominator, cross-scaled to equal totals.
	ia := idist{w: ints(mu.W)}
	ib := idist{w: ints(nu.W)}
	if ia.w == nil || ib.w == nil {
		return nil, fmt.Errorf("wasserstein: weights must be non-negative with positive total")
	}
	wa, wb, tot := scaled(ia, ib)
	need := new(big.Rat).SetInt(tot)
	need.Mul(need, new(big.Rat).Sub(big.NewRat(1, 1), delta))
	dist := make([][]*big.Rat, n)
	var cands []*big.Rat
	for i := range n {
		dist[i] = make([]*big.Rat, m)
		for j := range m {
			d := new(big.Rat)
			t := new(big.Rat)
			for c := range dim {
				t.Sub(mu.X[i][c], nu.X[j][c])
				d.Add(d, t.Abs(t))
			}
			dist[i][j] = d
			cands = append(cands, d)
		}
	}
	cands = sortUnique(cands)
	ok := func(w *big.Rat) bool {
		g := newFlow(n + m + 2)
		s, t := n+m, n+m+1
		for i := range n {
			g.add(s, i, wa[i])
			for j := range m {
				if dist[i][j].Cmp(w) <= 0 {
					g.add(i, n+j, tot)
				}
			}
		}
		for j := range m {
			g.add(n+j, t, wb[j])
		}
		return new(big.Rat).SetInt(g.maxflow(s, t)).Cmp(need) >= 0
	}
	return bisect(cands, ok), nil
}

// ints rescales non-negative rationals to integers over their common
// denominator; nil if any is negative or all are zero.
func ints(w []*big.Rat) []*big.Int {
	den := big.NewInt(1)
	for _, v := range w {
		if v == nil || v.Sign() < 0 {
			return nil
		}
		g := new(big.Int).GCD(nil, nil, den, v.Denom())
		den.Mul(den, new(big.Int).Quo(v.Denom(), g))
	}
	out := make([]*big.Int, len(w))
	sum := new(big.Int)
	for i, v := range w {
		out[i] = new(big.Int).Mul(v.Num(), new(big.Int).Quo(den, v.Denom()))
		sum.Add(sum, out[i])
	}
	if sum.Sign() == 0 {
		return nil
	}
	return out
}

// flow is a Dinic max-flow network with exact integer capacities.
type flow struct {
	head  [][]int
	to    []int
	cap   []*big.Int
	level []int
	it    []int
}

func newFlow(n int) *flow { return &flow{head: make([][]int, n)} }

func (g *flow) add(u, v int, c *big.Int) {
	g.head[u] = append(g.head[u], len(g.to))
	g.to = append(g.to, v)
	g.cap = append(g.cap, new(big.Int).Set(c))
	g.head[v] = append(g.head[v], len(g.to))
	g.to = append(g.to, u)
	g.cap = append(g.cap, new(big.Int))
}

func (g *flow) bfs(s, t int) bool {
	g.level = make([]int, len(g.head))
	for i := range g.level {
		g.level[i] = -1
	}
	g.level[s] = 0
	q := []int{s}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, e := range g.head[u] {
			if v := g.to[e]; g.cap[e].Sign() > 0 && g.level[v] < 0 {
				g.level[v] = g.level[u] + 1
				q = append(q, v)
			}
		}
	}
	return g.level[t] >= 0
}

func (g *flow) dfs(u, t int, f *big.Int) *big.Int {
	if u == t {
		return new(big.Int).Set(f)
	}
	for ; g.it[u] < len(g.head[u]); g.it[u]++ {
		e := g.head[u][g.it[u]]
		v := g.to[e]
		if g.cap[e].Sign() <= 0 || g.level[v] != g.level[u]+1 {
			continue
		}
		lim := f
		if g.cap[e].Cmp(f) < 0 {
			lim = g.cap[e]
		}
		if d := g.dfs(v, t, lim); d.Sign() > 0 {
			g.cap[e].Sub(g.cap[e], d)
			g.cap[e^1].Add(g.cap[e^1], d)
			return d
		}
	}
	return new(big.Int)
}

func (g *flow) maxflow(s, t int) *big.Int {
	total := new(big.Int)
	inf := new(big.Int)
	for _, c := range g.cap {
		inf.Add(inf, c)
	}
	for g.bfs(s, t) {
		g.it = make([]int, len(g.head))
		for {
			f := g.dfs(s, t, inf)
			if f.Sign() == 0 {
				break
			}
			total.Add(total, f)
		}
	}
	return total
}
