package framework_test

import (
	"fmt"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/framework"
	"github.com/pufferfish-privacy/pufferfish/wasserstein"
)

// A custom query through the library API: the maximum of two correlated
// records, under a joint table; W is computed exactly.
func ExampleQuery() {
	r := big.NewRat
	dom := []*big.Rat{r(0, 1), r(1, 1), r(2, 1)}
	maxQuery := framework.Query{Name: "max", Dim: 1, Lipschitz: r(2, 1), Eval: func(x []int) []*big.Rat {
		return []*big.Rat{dom[max(x[0], x[1])]}
	}}
	// The two records agree with probability 1/2, otherwise independent.
	var atoms []framework.Atom
	for a := range 3 {
		for b := range 3 {
			p := r(1, 18) // (1/2)·(1/9)
			if a == b {
				p = new(big.Rat).Add(p, r(1, 6))
			}
			atoms = append(atoms, framework.Atom{X: []int{a, b}, P: p})
		}
	}
	f, err := framework.New([]string{"Ann", "Bob"}, dom, []framework.Theta{{Name: "agree", Atoms: atoms}}, nil, maxQuery)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := wasserstein.Parameter(f, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("W =", res.W.RatString(), "for", f.PairString(res.Pair))
	// Output: W = 2 for Ann: 0 vs 2
}
