package wasserstein_test

import (
	"fmt"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/wasserstein"
)

// The flu example of [SWC17] §3: W = 2, half of group DP's 4.
func ExampleWInf() {
	r := func(a, b int64) *big.Rat { return big.NewRat(a, b) }
	ints := func(v ...int64) []*big.Rat {
		out := make([]*big.Rat, len(v))
		for i, x := range v {
			out[i] = r(x, 1)
		}
		return out
	}
	healthy := wasserstein.Dist{X: ints(0, 1, 2, 3), W: []*big.Rat{r(1, 2), r(1, 6), r(1, 6), r(1, 6)}}
	sick := wasserstein.Dist{X: ints(1, 2, 3, 4), W: []*big.Rat{r(1, 4), r(1, 4), r(1, 4), r(1, 4)}}
	w, _ := wasserstein.WInf(healthy, sick)
	fmt.Println("W =", w.RatString())
	// Output: W = 2
}
