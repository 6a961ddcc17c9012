package framework

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
)

func parseSrc(t *testing.T, src string) (*Framework, []int, error) {
	t.Helper()
	return Parse(strings.NewReader(src), "f.json")
}

// The minimal form: numbers and fraction strings, unlisted
// assignments zero.
func TestParseMinimalForm(t *testing.T) {
	f, data, err := parseSrc(t, `{"records": 2, "domain": [0, 1], "query": "sum",
	  "thetas": [{"joint": [[[0,0], "1/10"], [[1,0], 0.4], [[1,1], "1/2"]]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if data != nil || f.N() != 2 || len(f.Pairs) != 2 || f.Names[1] != "X2" {
		t.Fatalf("parsed %+v", f)
	}
	// P(X1 = 1) = 9/10 exactly (0.4 read as 2/5).
	if p := f.SecretProb(0, 0, 1); p.Cmp(big.NewRat(9, 10)) != 0 {
		t.Fatalf("P(X1=1) = %s", p.RatString())
	}
	cond := f.Conditionals(0)
	// Given X2 = 0: F ∈ {0, 1} with 1/5, 4/5.
	c := cond[1][0]
	if len(c) != 2 || c[0].P.Cmp(big.NewRat(1, 5)) != 0 || c[1].Value[0].Cmp(big.NewRat(1, 1)) != 0 {
		t.Fatalf("conditional %v", c)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, msg string }{
		{`{"records": 2, "domain": [0, 1], "thetas": [{"joint": [[[0,0], 0.5], [[1,1], 0.4]]}]}`, "sum to 9/10, not 1"},
		{`{"records": 2, "domain": [0, 1], "thetas": [{"joint": [[[0,2], 1]]}]}`, "record 2: 2 is not in the domain"},
		{`{"records": 2, "domain": [0, 1], "thetas": [{"joint": [[[0,0], 0.5], [[0,0], 0.5]]}]}`, "listed twice"},
		{`{"records": 2, "domain": [0, 1], "thetas": [{"network": [
		   {"name": "A", "parents": ["B"], "cpt": [[0.5, 0.5], [0.5, 0.5]]},
		   {"name": "B", "parents": ["A"], "cpt": [[0.5, 0.5], [0.5, 0.5]]}]}]}`, "directed cycle"},
		{`{"records": 2, "domain": [0, 1], "thetas": [{"network": [
		   {"name": "A", "cpt": [[0.5, 0.5]]},
		   {"name": "B", "parents": ["C"], "cpt": [[0.5, 0.5], [0.5, 0.5]]}]}]}`, `unknown parent "C"`},
		{`{"records": 2, "domain": [0, 1], "thetas": [{"joint": [[[0,0], 0.5], [[0,1], 0.5]]}],
		   "pairs": [{"record": 1, "values": [0, 1]}]}`, "probability zero under every θ"},
		{`{"records": 2, "domain": [0, 1], "query": "median", "thetas": [{"joint": [[[0,0], 1]]}]}`, "unknown query"},
		{`{"records": 2, "domain": [0, 1], "thetas": []}`, "Θ is empty"},
		{`{"records": 2, "domain": [0, 1], "thetas": [{"joint": [[[0,0], 1]]}], "extra": 1}`, "unknown field"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, _, err := parseSrc(t, c.src)
			if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "f.json") {
				t.Errorf("want error naming f.json containing %q, got %v", c.msg, err)
			}
		})
	}
}

// A network θ is expanded exactly; groups come from dependence.
func TestNetworkThetaAndGroups(t *testing.T) {
	f, data, err := parseSrc(t, `{"names": ["a", "b", "c"], "domain": [0, 1], "query": {"count": 1},
	  "thetas": [{"network": [
	    {"name": "a", "cpt": [["1/3", "2/3"]]},
	    {"name": "b", "parents": ["a"], "cpt": [[0.9, 0.1], [0.2, 0.8]]},
	    {"name": "c", "cpt": [[0.5, 0.5]]}]}],
	  "data": [1, 0, 1]}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 3 || data[0] != 1 {
		t.Fatalf("data %v", data)
	}
	gs, groups := f.GroupSensitivity()
	if len(groups) != 2 || gs.Cmp(big.NewRat(2, 1)) != 0 {
		t.Fatalf("groups %v sensitivity %s", groups, gs.RatString())
	}
}

// A parity distribution is pairwise independent but not a product: the
// grouping must not split it.
func TestGroupsParity(t *testing.T) {
	q := big.NewRat(1, 4)
	var atoms []Atom
	for _, x := range [][]int{{0, 0, 0}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}} {
		atoms = append(atoms, Atom{X: x, P: q})
	}
	dom := []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)}
	f, err := New([]string{"a", "b", "c"}, dom, []Theta{{Atoms: atoms}}, nil, Sum(dom))
	if err != nil {
		t.Fatal(err)
	}
	if g := f.Groups(); len(g) != 1 {
		t.Fatalf("parity split into %v", g)
	}
}
