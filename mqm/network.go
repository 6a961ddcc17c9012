package mqm

import (
	"fmt"
	"math"
	"slices"

	"github.com/pufferfish-privacy/pufferfish/bn"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
)

// NetworkOptions bounds the exact search on a Bayesian network.
type NetworkOptions struct {
	// TableLimit bounds any table of variable elimination (entries).
	TableLimit int
	// CandidateLimit bounds the number of candidate quilts of one node.
	CandidateLimit int
	// WorkLimit bounds the estimated work of the whole search: one variable
	// elimination per node and quilt layer, each costing about n² on a
	// network of n nodes (measured: a 100-node chain, 10⁸, takes ≈ 7 s).
	WorkLimit float64
}

// DefaultNetworkOptions are the limits used when a field is zero.
var DefaultNetworkOptions = NetworkOptions{TableLimit: 1 << 22, CandidateLimit: 1 << 22, WorkLimit: 2e8}

// work estimates the search's cost on one network: Σ over nodes of the
// number of quilt layers (moral distances from the node), times n².
func work(net *bn.Network, adj [][]int) float64 {
	n := net.N()
	layers := 0.0
	dist := make([]int, n)
	for i := range n {
		for j := range dist {
			dist[j] = -1
		}
		dist[i] = 0
		queue := []int{i}
		depth := 0
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			depth = max(depth, dist[u])
			for _, v := range adj[u] {
				if dist[v] < 0 {
					dist[v] = dist[u] + 1
					queue = append(queue, v)
				}
			}
		}
		layers += float64(depth)
	}
	return layers * float64(n) * float64(n)
}

// NetworkResult is the outcome of the quilt search on Bayesian networks.
type NetworkResult struct {
	Sigma      float64 // σ_max for a 1-Lipschitz query
	Theta      int     // index of the network attaining σ_max
	Node       int     // 0-based node attaining σ_max
	Quilt      []int   // that node's best quilt X_Q (nil: the trivial quilt)
	Nearby     int     // card(X_N) of that quilt
	Influence  float64 // its max-influence e(X_Q | X_i), with rounding allowance
	Candidates int     // quilts scored, over all networks and nodes
}

// NetworkScale runs the Markov Quilt Mechanism's search ([SWC16] Algorithm
// 2) on a class Θ of Bayesian networks over the same variables, per network
// (σ_max = max_θ σ_max(θ), valid because the privacy proof fixes one θ; MATH
// §4). Releasing F(D) + σ_max·L·Lap(1) for an L-Lipschitz F is ε-Pufferfish
// private for secrets X_i = a and pairs (X_i = a, X_i = b) (Theorem 4.3).
//
// Candidate quilts come from the moral graph, where separation implies
// d-separation. Removing X_i splits X_i's connected component into branches,
// which are conditionally independent given X_i. A candidate picks, in every
// branch independently, either nothing (the whole branch is nearby) or the
// layer of nodes at moral distance r from X_i (nearer nodes are nearby,
// farther ones remote); nodes outside X_i's component are always remote,
// being independent of X_i. Then X_Q separates X_i from X_R, and
// P(X_Q | X_i) is the product over branches, so
//
//	e(X_Q | X_i) = max_{a≠b} Σ_branches max_{x_Qβ} log P(x_Qβ | a) / P(x_Qβ | b)
//
// with each branch term computed once per layer from an exact marginal
// (variable elimination). On a chain the candidates are exactly Lemma B.2's
// and the result equals Scale's (tested). Any candidate set is allowed by
// Algorithm 2; this one is a subset of all quilts on general graphs.
//
// Cost per network: for every node and every layer, one variable elimination
// (linear in n on trees); then the product over branches of (depth + 1)
// candidates, searched with a lower-bound prune. NetworkScale fails, naming
// the node and the size that would be needed, when a layer's table or a
// node's candidate count exceeds the limits.
func NetworkScale(nets []*bn.Network, eps float64, opt NetworkOptions) (NetworkResult, error) {
	if err := checks.Epsilon(eps); err != nil {
		return NetworkResult{}, fmt.Errorf("mqm: %w", err)
	}
	if opt.TableLimit == 0 {
		opt.TableLimit = DefaultNetworkOptions.TableLimit
	}
	if opt.CandidateLimit == 0 {
		opt.CandidateLimit = DefaultNetworkOptions.CandidateLimit
	}
	if opt.WorkLimit == 0 {
		opt.WorkLimit = DefaultNetworkOptions.WorkLimit
	}
	total := 0.0
	for _, net := range nets {
		total += work(net, net.Moral())
	}
	if total > opt.WorkLimit {
		return NetworkResult{}, fmt.Errorf("mqm: the exact search needs about %.3g steps (one variable elimination per node and quilt layer; limit %.3g, ≈ 7 s per 10⁸): for long chains use the chain mechanism (puff scale), or raise the limit", total, opt.WorkLimit)
	}
	var best NetworkResult
	best.Sigma = -1
	for t, net := range nets {
		adj := net.Moral()
		for i := range net.N() {
			ns, err := nodeScale(net, adj, i, eps, opt)
			if err != nil {
				return NetworkResult{}, fmt.Errorf("mqm: network %d: %w", t+1, err)
			}
			best.Candidates += ns.candidates
			if ns.sigma > best.Sigma {
				cands := best.Candidates
				best = NetworkResult{Sigma: ns.sigma, Theta: t, Node: i, Quilt: ns.quilt, Nearby: ns.nearby, Influence: ns.influence, Candidates: cands}
			}
		}
	}
	return best, nil
}

type netNodeResult struct {
	sigma      float64
	quilt      []int
	nearby     int
	influence  float64
	candidates int
}

// branch is one component of X_i's component minus X_i, by moral distance.
type branch struct {
	layers [][]int // layers[r-1] = nodes at distance r
	size   int
	// f[r-1][p]: max log-ratio of layer r for ordered pair p
	f [][]float64
}

func nodeScale(net *bn.Network, adj [][]int, i int, eps float64, opt NetworkOptions) (netNodeResult, error) {
	// Marginal of X_i: which secrets have positive probability.
	mi, err := net.Marginal([]int{i}, opt.TableLimit)
	if err != nil {
		return netNodeResult{}, err
	}
	var pairs []secretPair
	for a := range net.K {
		for b := range net.K {
			if a != b && mi.P[a] > 0 && mi.P[b] > 0 {
				pairs = append(pairs, secretPair{a, b})
			}
		}
	}
	if len(pairs) == 0 {
		return netNodeResult{sigma: 0}, nil // no secret pair of X_i to protect
	}
	branches := branchesAround(adj, i, net.N())
	total := 1.0
	for _, b := range branches {
		total *= float64(len(b.layers) + 1)
		if err := b.terms(net, i, pairs, mi, opt); err != nil {
			return netNodeResult{}, err
		}
	}
	if total > float64(opt.CandidateLimit) {
		return netNodeResult{}, fmt.Errorf("node %q has %d branches whose layer choices give %.3g candidate quilts (limit %d); exact search is too large", net.Nodes[i].Name, len(branches), total, opt.CandidateLimit)
	}
	return searchQuilts(branches, len(pairs), eps), nil
}

// secretPair is an ordered pair (a, b) of values of the secret node, both
// of positive probability.
type secretPair struct{ a, b int }

// branchesAround is the components of the graph without node i that touch
// it, each with its nodes in layers by BFS distance from i.
func branchesAround(adj [][]int, i, n int) []*branch {
	dist := make([]int, n)
	for j := range dist {
		dist[j] = -1
	}
	dist[i] = 0
	queue := []int{i}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range adj[u] {
			if dist[v] < 0 {
				dist[v] = dist[u] + 1
				queue = append(queue, v)
			}
		}
	}
	// flood fill that never enters i
	comp := make([]int, n)
	for j := range comp {
		comp[j] = -1
	}
	var branches []*branch
	for _, start := range adj[i] {
		if comp[start] >= 0 {
			continue
		}
		b := &branch{}
		id := len(branches)
		stack := []int{start}
		comp[start] = id
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			b.size++
			d := dist[u]
			for len(b.layers) < d {
				b.layers = append(b.layers, nil)
			}
			b.layers[d-1] = append(b.layers[d-1], u)
			for _, v := range adj[u] {
				if v != i && comp[v] < 0 {
					comp[v] = id
					stack = append(stack, v)
				}
			}
		}
		branches = append(branches, b)
	}
	return branches
}

// terms sets b.f[r][p]: the max-influence of the branch's layer r+1 on the
// secret pair p of node i, from the exact marginal of (X_i, layer), plus
// the slack that covers the inference's rounding (m.RelErr, mi.RelErr).
func (b *branch) terms(net *bn.Network, i int, pairs []secretPair, mi bn.Marginal, opt NetworkOptions) error {
	k := net.K
	b.f = make([][]float64, len(b.layers))
	for r, layer := range b.layers {
		slices.Sort(layer)
		vars := append([]int{i}, layer...)
		size := 1.0
		for range vars {
			size *= float64(k)
		}
		if size > float64(opt.TableLimit) {
			return fmt.Errorf("node %q: its quilt layer at distance %d has %d nodes; exact max-influence needs a table of %.3g entries (limit %d)", net.Nodes[i].Name, r+1, len(layer), size, opt.TableLimit)
		}
		m, err := net.Marginal(vars, opt.TableLimit)
		if err != nil {
			return fmt.Errorf("node %q: %w", net.Nodes[i].Name, err)
		}
		rest := len(m.P) / k
		slack := 4.1*m.RelErr + mi.RelErr*2.1 + 1e-15
		b.f[r] = make([]float64, len(pairs))
		for pi, p := range pairs {
			worst := 0.0
			for x := range rest {
				pa := m.P[p.a*rest+x] / mi.P[p.a]
				pb := m.P[p.b*rest+x] / mi.P[p.b]
				switch {
				case pa == 0:
				case pb == 0:
					worst = math.Inf(1)
				default:
					worst = max(worst, math.Log(pa/pb))
				}
			}
			b.f[r][pi] = worst + slack
		}
	}
	return nil
}

// searchQuilts is the best quilt over every choice, per branch, of no
// layer (the whole branch nearby) or one layer r ≥ 1 (the layers before
// it nearby): the smallest card/(ε − e), e the largest summed influence
// over the secret pairs, pruned where it cannot improve.
func searchQuilts(branches []*branch, npairs int, eps float64) netNodeResult {
	res := netNodeResult{sigma: math.Inf(1)}
	choice := make([]int, len(branches))
	var rec func(bi, card int, sums []float64)
	rec = func(bi, card int, sums []float64) {
		e := 0.0
		for _, s := range sums {
			e = max(e, s)
		}
		if e >= eps {
			return // terms are non-negative: no completion scores finitely
		}
		if float64(card)/(eps-e) >= res.sigma {
			return // card and e only grow below this point
		}
		if bi == len(branches) {
			res.candidates++
			res.sigma = float64(card) / (eps - e)
			res.nearby, res.influence = card, e
			res.quilt = nil
			for b, r := range choice {
				if r > 0 {
					res.quilt = append(res.quilt, branches[b].layers[r-1]...)
				}
			}
			slices.Sort(res.quilt)
			return
		}
		b := branches[bi]
		// nothing from this branch: all of it nearby, no influence
		choice[bi] = 0
		rec(bi+1, card+b.size, sums)
		next := make([]float64, len(sums))
		nearby := 0
		for r := 1; r <= len(b.layers); r++ {
			if r > 1 {
				nearby += len(b.layers[r-2])
			}
			for p := range sums {
				next[p] = sums[p] + b.f[r-1][p]
			}
			choice[bi] = r
			rec(bi+1, card+nearby, next)
		}
		choice[bi] = 0
	}
	rec(0, 1, make([]float64, npairs))
	// The trivial quilt always scores |component|/ε, so res is finite.
	return res
}
