package hmm

import (
	"math/big"
	"testing"
)

// The memoised index distribution equals NoisyMaxDist on every input.
func TestIndexMemoEqualsNoisyMaxDist(t *testing.T) {
	for _, m := range []int{1, 2, 3} {
		geo, err := Geometric(big.NewRat(1, 2), m)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 4} {
			vs, _ := NoisyMaxInputs(n, m)
			memo := newIndexMemo(geo, n)
			for _, v := range vs {
				got, want := memo.dist(v), NoisyMaxDist(geo, v, ReturnIndex)
				for r := range want {
					if got[r].Cmp(want[r]) != 0 {
						t.Fatalf("m=%d v=%v r=%d: memo %s, direct %s", m, v, r, got[r].RatString(), want[r].RatString())
					}
				}
			}
		}
	}
}
