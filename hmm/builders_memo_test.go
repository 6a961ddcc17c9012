package hmm

import (
	"math/big"
	"slices"
	"testing"
)

// The memoised index distribution equals noisyMaxDist on every input.
func TestIndexMemoEqualsNoisyMaxDist(t *testing.T) {
	for _, m := range []int{1, 2, 3} {
		geo, err := geometricMatrix(big.NewRat(1, 2), m)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 4} {
			vs, _ := noisyMaxInputs(n, m)
			memo := newIndexMemo(geo, n)
			for _, v := range vs {
				got, want := memo.dist(v), noisyMaxDist(geo, v, ReturnIndex)
				for r := range want {
					if got[r].Cmp(want[r]) != 0 {
						t.Fatalf("m=%d v=%v r=%d: memo %s, direct %s", m, v, r, got[r].RatString(), want[r].RatString())
					}
				}
			}
		}
	}
}

// Noisy Max's interned tables give, for every input and neighbour, the
// rationals and floats of noisyMaxDist (computed directly, no memo).
func TestNoisyMaxInternedEqualsNoisyMaxDist(t *testing.T) {
	for _, c := range []struct{ n, m int }{{1, 1}, {6, 1}, {1, 2}, {5, 2}, {4, 3}, {3, 4}} {
		for _, nb := range []Neighbours{DifferByOne, DifferAnyhow} {
			geo, err := geometricMatrix(big.NewRat(1, 3), c.m)
			if err != nil {
				t.Fatal(err)
			}
			d, err := NoisyMax(c.n, c.m, big.NewRat(1, 3), ReturnIndex, nb)
			if err != nil {
				t.Fatal(err)
			}
			vs, _ := noisyMaxInputs(c.n, c.m)
			in := d.Interned()
			neighbours := 0
			for x := range d.Inputs {
				dx := noisyMaxDist(geo, vs[x], ReturnIndex)
				var want []int
				d.Neighbours(x, func(y int) { want = append(want, y) })
				var got []int
				in.Visit(x, func(f []float64) {
					for o := range dx {
						if f[o] != internFloat(dx[o]) {
							t.Fatalf("n=%d m=%d x=%d o=%d: float %v, want %s", c.n, c.m, x, o, f[o], dx[o].RatString())
						}
					}
				}, func(y int, f []float64) {
					got = append(got, y)
					dy := noisyMaxDist(geo, vs[y], ReturnIndex)
					for o := range dy {
						p, q := in.IDs(o)
						if f[o] != internFloat(dy[o]) || in.Value(p).Cmp(dx[o]) != 0 || in.Value(q).Cmp(dy[o]) != 0 {
							t.Fatalf("n=%d m=%d x=%d y=%d o=%d: float %v, values %s %s, want %s %s", c.n, c.m, x, y, o, f[o],
								in.Value(p).RatString(), in.Value(q).RatString(), dx[o].RatString(), dy[o].RatString())
						}
					}
				})
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d m=%d x=%d: neighbours %v, Neighbours %v", c.n, c.m, x, got, want)
				}
				neighbours += len(got)
			}
			if neighbours == 0 && c.n > 0 {
				t.Fatalf("n=%d m=%d: no neighbour visited", c.n, c.m)
			}
		}
	}
}
