package bn

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomNet draws a random DAG over n nodes (each node picks up to maxPar
// earlier nodes as parents) with random rational CPTs, some entries zero.
func randomNet(t *testing.T, rng *rand.Rand, n, k, maxPar int) *Network {
	t.Helper()
	nodes := make([]Node, n)
	for i := range nodes {
		for j := range i {
			if len(nodes[i].Parents) < maxPar && rng.IntN(2) == 0 {
				nodes[i].Parents = append(nodes[i].Parents, j)
			}
		}
		rows := 1
		for range nodes[i].Parents {
			rows *= k
		}
		for range rows {
			w := make([]int64, k)
			var s int64
			for v := range w {
				if rng.IntN(5) > 0 {
					w[v] = rng.Int64N(9) + 1
				}
				s += w[v]
			}
			if s == 0 {
				w[0], s = 1, 1
			}
			row := make([]*big.Rat, k)
			for v := range w {
				row[v] = big.NewRat(w[v], s)
			}
			nodes[i].CPT = append(nodes[i].CPT, row)
		}
	}
	net, err := New(k, nodes)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// TestMarginalAgainstEnumeration checks variable elimination against exact
// summation of the joint over every assignment.
func TestMarginalAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n, k := 2+rng.IntN(5), 2+rng.IntN(2)
		net := randomNet(t, rng, n, k, 3)
		m := 1 + rng.IntN(min(n, 3))
		vars := rng.Perm(n)[:m]
		got, err := net.Marginal(vars, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]*big.Rat, len(got.P))
		for i := range want {
			want[i] = new(big.Rat)
		}
		total := new(big.Rat)
		if err := net.Enumerate(1<<20, func(x []int, p *big.Rat) {
			idx := 0
			for _, v := range vars {
				idx = idx*k + x[v]
			}
			want[idx].Add(want[idx], p)
			total.Add(total, p)
		}); err != nil {
			t.Fatal(err)
		}
		if total.Cmp(big.NewRat(1, 1)) != 0 {
			t.Fatalf("trial %d: joint sums to %s", trial, total.RatString())
		}
		for i, w := range want {
			wf, _ := w.Float64()
			if math.Abs(got.P[i]-wf) > got.RelErr*wf+1e-300 {
				t.Fatalf("trial %d vars %v entry %d: VE %.17g, exact %.17g (relerr bound %g)", trial, vars, i, got.P[i], wf, got.RelErr)
			}
		}
	}
}

func TestValidation(t *testing.T) {
	r := func(a, b int64) *big.Rat { return big.NewRat(a, b) }
	ok := [][]*big.Rat{{r(1, 2), r(1, 2)}}
	cases := []struct {
		nodes []Node
		msg   string
	}{
		{[]Node{{Name: "A", Parents: []int{1}, CPT: [][]*big.Rat{ok[0], ok[0]}}, {Name: "B", Parents: []int{0}, CPT: [][]*big.Rat{ok[0], ok[0]}}}, "directed cycle"},
		{[]Node{{Name: "A", CPT: [][]*big.Rat{{r(1, 2), r(1, 3)}}}}, "sums to 5/6"},
		{[]Node{{Name: "A", CPT: [][]*big.Rat{ok[0], ok[0]}}}, "CPT has 2 rows, want 1"},
		{[]Node{{Name: "A", Parents: []int{3}, CPT: ok}}, "out of range"},
		{[]Node{{Name: "A", CPT: [][]*big.Rat{{r(-1, 2), r(3, 2)}}}}, "not a probability"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := New(2, c.nodes)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("want error containing %q, got %v", c.msg, err)
			}
		})
	}
}

func TestFromFile(t *testing.T) {
	var nodes []FileNode
	src := `[{"name":"A","cpt":[["1/3", "2/3"]]},
	         {"name":"B","parents":["A"],"cpt":[[0.9, 0.1],["1-1/5", "1/5"]]}]`
	if err := json.Unmarshal([]byte(src), &nodes); err != nil {
		t.Fatal(err)
	}
	net, err := FromFile(2, nodes, "f.json")
	if err != nil {
		t.Fatal(err)
	}
	// P(A=1, B=1) = 2/3 · 1/5 exactly.
	if got := net.Prob([]int{1, 1}); got.Cmp(big.NewRat(2, 15)) != 0 {
		t.Fatalf("P(1,1) = %s", got.RatString())
	}
	nodes[1].Parents = []string{"C"}
	if _, err := FromFile(2, nodes, "f.json"); err == nil || !strings.Contains(err.Error(), `unknown parent "C"`) {
		t.Fatalf("unknown parent: %v", err)
	}
}

func TestMoralMarriesParents(t *testing.T) {
	half := []*big.Rat{big.NewRat(1, 2), big.NewRat(1, 2)}
	// A → C ← B: the moral graph links A and B.
	net, err := New(2, []Node{{Name: "A", CPT: [][]*big.Rat{half}}, {Name: "B", CPT: [][]*big.Rat{half}},
		{Name: "C", Parents: []int{0, 1}, CPT: [][]*big.Rat{half, half, half, half}}})
	if err != nil {
		t.Fatal(err)
	}
	adj := net.Moral()
	if len(adj[0]) != 2 || len(adj[1]) != 2 || len(adj[2]) != 2 {
		t.Fatalf("moral graph %v", adj)
	}
}
