// Package bn provides discrete Bayesian networks: a DAG over n variables that
// share one finite domain of K values, with one conditional probability table
// per node. It is the data model of the general Markov Quilt Mechanism
// ([SWC17] §4, Algorithm 2; docs/math.md §4) and one of the two ways a
// Pufferfish framework describes a distribution θ (package framework).
//
// What is exact and what is numerical: probabilities are held as exact
// rationals (math/big) and Enumerate and Prob are exact. Marginal computes
// marginals by variable elimination in float64 and states a bound on its
// relative error (Marginal.RelErr) so callers can round in the safe
// direction.
package bn

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	gtopo "gonum.org/v1/gonum/graph/topo"

	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// Node is one variable: its parents (indices into the network's nodes) and
// its conditional probability table. CPT has one row per assignment of the
// parents, in mixed radix with the first parent most significant (so with
// parents (A, B) over {0,1} the rows are A=0,B=0; A=0,B=1; A=1,B=0; A=1,B=1),
// and each row holds K probabilities that sum to 1.
type Node struct {
	Name    string
	Parents []int
	CPT     [][]*big.Rat
}

// Network is a validated Bayesian network.
type Network struct {
	K     int
	Nodes []Node
	order []int // a topological order
	cpt   [][][]float64
}

// New validates and returns a network over a domain of k values: parent
// indices in range and distinct, no directed cycle (the error names one),
// every CPT of the right shape with non-negative rows summing exactly to 1.
// The nodes are copied.
func New(k int, nodes []Node) (*Network, error) {
	if k < 1 {
		return nil, fmt.Errorf("bn: domain must have at least one value")
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("bn: network has no nodes")
	}
	n := len(nodes)
	net := &Network{K: k, Nodes: make([]Node, n)}
	one := big.NewRat(1, 1)
	for i, nd := range nodes {
		name := nd.Name
		if name == "" {
			name = fmt.Sprintf("X%d", i+1)
		}
		seen := map[int]bool{}
		for _, p := range nd.Parents {
			if p < 0 || p >= n {
				return nil, fmt.Errorf("bn: node %q: parent index %d out of range", name, p)
			}
			if p == i {
				return nil, fmt.Errorf("bn: node %q is its own parent", name)
			}
			if seen[p] {
				return nil, fmt.Errorf("bn: node %q lists parent %d twice", name, p)
			}
			seen[p] = true
		}
		rows := 1
		for range nd.Parents {
			rows *= k
			if rows > 1<<24 {
				return nil, fmt.Errorf("bn: node %q has too many parents for a table", name)
			}
		}
		if len(nd.CPT) != rows {
			return nil, fmt.Errorf("bn: node %q: CPT has %d rows, want %d (= %d^%d parent assignments)", name, len(nd.CPT), rows, k, len(nd.Parents))
		}
		cp := make([][]*big.Rat, rows)
		for r, row := range nd.CPT {
			if len(row) != k {
				return nil, fmt.Errorf("bn: node %q: CPT row %d has %d entries, want %d", name, r, len(row), k)
			}
			sum := new(big.Rat)
			cp[r] = make([]*big.Rat, k)
			for v, p := range row {
				if p == nil || p.Sign() < 0 || p.Cmp(one) > 0 {
					return nil, fmt.Errorf("bn: node %q: CPT row %d entry %d is not a probability", name, r, v)
				}
				cp[r][v] = new(big.Rat).Set(p)
				sum.Add(sum, p)
			}
			if sum.Cmp(one) != 0 {
				return nil, fmt.Errorf("bn: node %q: CPT row %d sums to %s, not 1", name, r, sum.RatString())
			}
		}
		net.Nodes[i] = Node{Name: name, Parents: slices.Clone(nd.Parents), CPT: cp}
	}
	names := map[string]int{}
	for i, nd := range net.Nodes {
		if j, dup := names[nd.Name]; dup {
			return nil, fmt.Errorf("bn: nodes %d and %d are both named %q", j+1, i+1, nd.Name)
		}
		names[nd.Name] = i
	}
	order, err := topo(net.Nodes)
	if err != nil {
		return nil, err
	}
	net.order = order
	net.cpt = make([][][]float64, n)
	for i, nd := range net.Nodes {
		net.cpt[i] = make([][]float64, len(nd.CPT))
		for r, row := range nd.CPT {
			net.cpt[i][r] = make([]float64, k)
			for v, p := range row {
				net.cpt[i][r][v], _ = p.Float64()
			}
		}
	}
	return net, nil
}

// topo returns a topological order (parents first; ties by node index) or
// an error naming the nodes of a directed cycle (gonum's graph/topo).
func topo(nodes []Node) ([]int, error) {
	g := simple.NewDirectedGraph()
	for i := range nodes {
		g.AddNode(simple.Node(i))
	}
	for u, nd := range nodes {
		for _, p := range nd.Parents {
			if p == u {
				return nil, fmt.Errorf("bn: the graph has a directed cycle: %s ← %s", nd.Name, nd.Name)
			}
			g.SetEdge(g.NewEdge(simple.Node(p), simple.Node(u)))
		}
	}
	byID := func(ns []graph.Node) { slices.SortFunc(ns, func(a, b graph.Node) int { return int(a.ID() - b.ID()) }) }
	sorted, err := gtopo.SortStabilized(g, byID)
	if err != nil {
		var un gtopo.Unorderable
		if errors.As(err, &un) && len(un) > 0 {
			var names []string
			for _, n := range un[0] {
				names = append(names, nodes[n.ID()].Name)
			}
			slices.Sort(names)
			return nil, fmt.Errorf("bn: the graph has a directed cycle through %s", strings.Join(names, ", "))
		}
		return nil, fmt.Errorf("bn: %w", err)
	}
	order := make([]int, len(sorted))
	for i, n := range sorted {
		order[i] = int(n.ID())
	}
	return order, nil
}

// N is the number of nodes.
func (net *Network) N() int { return len(net.Nodes) }

// Order returns a topological order of the nodes (parents first).
func (net *Network) Order() []int { return slices.Clone(net.order) }

// row is the CPT row of node i under assignment x of (at least) its parents.
func (net *Network) row(i int, x []int) int {
	r := 0
	for _, p := range net.Nodes[i].Parents {
		r = r*net.K + x[p]
	}
	return r
}

// Prob returns the exact probability of a full assignment.
func (net *Network) Prob(x []int) *big.Rat {
	p := big.NewRat(1, 1)
	for i := range net.Nodes {
		p.Mul(p, net.Nodes[i].CPT[net.row(i, x)][x[i]])
		if p.Sign() == 0 {
			break
		}
	}
	return p
}

// Enumerate calls fn with every full assignment of positive probability and
// its exact probability, in topological-order depth-first order. It refuses
// networks with more than limit assignments (K^n) before starting, so callers
// get a clear error instead of an endless loop. fn must not keep x.
func (net *Network) Enumerate(limit int, fn func(x []int, p *big.Rat)) error {
	n := net.N()
	total := 1.0
	for range n {
		total *= float64(net.K)
	}
	if total > float64(limit) {
		return fmt.Errorf("bn: %d nodes over %d values have %.3g joint assignments; exact enumeration is limited to %d", n, net.K, total, limit)
	}
	x := make([]int, n)
	probs := make([]*big.Rat, n+1)
	probs[0] = big.NewRat(1, 1)
	for i := 1; i <= n; i++ {
		probs[i] = new(big.Rat)
	}
	var rec func(d int)
	rec = func(d int) {
		if d == n {
			fn(x, probs[n])
			return
		}
		u := net.order[d]
		row := net.Nodes[u].CPT[net.row(u, x)]
		for v := range net.K {
			if row[v].Sign() == 0 {
				continue
			}
			x[u] = v
			probs[d+1].Mul(probs[d], row[v])
			rec(d + 1)
		}
		x[u] = 0
	}
	rec(0)
	return nil
}

// Moral returns the adjacency lists of the moral graph: the DAG's edges made
// undirected plus an edge between every two parents of a common child. If a
// set Q separates node i from a set R in the moral graph then X_R ⟂ X_i | X_Q
// (the moral graph of any ancestral set is a subgraph of this one, and
// separation there is d-separation; Lauritzen et al. 1990).
func (net *Network) Moral() [][]int {
	n := net.N()
	adj := make([]map[int]bool, n)
	for i := range adj {
		adj[i] = map[int]bool{}
	}
	link := func(a, b int) {
		if a != b {
			adj[a][b] = true
			adj[b][a] = true
		}
	}
	for c, nd := range net.Nodes {
		for x, p := range nd.Parents {
			link(p, c)
			for _, q := range nd.Parents[x+1:] {
				link(p, q)
			}
		}
	}
	out := make([][]int, n)
	for i, m := range adj {
		for j := range m {
			out[i] = append(out[i], j)
		}
		slices.Sort(out[i])
	}
	return out
}

// FileNode is the JSON form of a node: parents by name, CPT rows in the
// mixed-radix order of Node, probabilities as exact fractions, decimals or
// expressions (package ratexpr).
type FileNode struct {
	Name    string              `json:"name"`
	Parents []string            `json:"parents"`
	CPT     [][]json.RawMessage `json:"cpt"`
}

// FromFile builds a network from its JSON nodes; where names the input in
// error messages (a file name and a field path).
func FromFile(k int, nodes []FileNode, where string) (*Network, error) {
	idx := map[string]int{}
	for i, nd := range nodes {
		name := nd.Name
		if name == "" {
			name = fmt.Sprintf("X%d", i+1)
		}
		if _, dup := idx[name]; dup {
			return nil, fmt.Errorf("%s: two nodes are named %q", where, name)
		}
		idx[name] = i
	}
	out := make([]Node, len(nodes))
	for i, nd := range nodes {
		name := nd.Name
		if name == "" {
			name = fmt.Sprintf("X%d", i+1)
		}
		out[i].Name = name
		for _, p := range nd.Parents {
			j, ok := idx[p]
			if !ok {
				return nil, fmt.Errorf("%s: node %q: unknown parent %q", where, name, p)
			}
			out[i].Parents = append(out[i].Parents, j)
		}
		out[i].CPT = make([][]*big.Rat, len(nd.CPT))
		for r, row := range nd.CPT {
			out[i].CPT[r] = make([]*big.Rat, len(row))
			for v, raw := range row {
				p, err := ratexpr.JSON(raw, nil)
				if err != nil {
					return nil, fmt.Errorf("%s: node %q: cpt[%d][%d]: %v", where, name, r, v, err)
				}
				out[i].CPT[r][v] = p
			}
		}
	}
	net, err := New(k, out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return net, nil
}
