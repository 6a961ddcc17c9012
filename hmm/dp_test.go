package hmm

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sameResult fails unless the streaming answer equals the model search's
// in every field: ratio, witness, pair, side and the sequences counted.
func sameResult(t *testing.T, label string, got, want Result) {
	t.Helper()
	if (got.Ratio == nil) != (want.Ratio == nil) || got.Ratio != nil && got.Ratio.Cmp(want.Ratio) != 0 {
		t.Fatalf("%s: ratio %v, model search %v", label, got.Ratio, want.Ratio)
	}
	if got.Loss != want.Loss || !slices.Equal(got.Witness, want.Witness) || got.Secret != want.Secret || got.Larger != want.Larger || got.Explored != want.Explored {
		t.Fatalf("%s: streaming %v %v %q %s explored %d; model search %v %v %q %s explored %d", label,
			got.Loss, got.Witness, got.Secret, got.Larger, got.Explored, want.Loss, want.Witness, want.Secret, want.Larger, want.Explored)
	}
}

func checkAgainstModel(t *testing.T, label string, d *DPMechanism) {
	t.Helper()
	got, err := d.Loss()
	if err != nil {
		t.Fatal(label, err)
	}
	m, secs, err := d.Model()
	if err != nil {
		t.Fatal(label, err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(label, err)
	}
	want, err := Loss(m, secs, 1)
	if err != nil {
		t.Fatal(label, err)
	}
	sameResult(t, label, got, want)
}

// The streaming solver gives exactly the model search's Result on every
// built-in DP mechanism small enough to build, with blocks small enough
// that several workers share the inputs.
func TestDPMechanismEqualsModelSearch(t *testing.T) {
	defer func(b int) { dpBlock = b }(dpBlock)
	for _, block := range []int{1, 7, 1 << 12} {
		dpBlock = block
		for _, m := range []int{1, 2, 3} {
			for n := 1; n <= 6-m; n++ {
				for _, ret := range []NoisyMaxReturns{ReturnIndex, ReturnValue} {
					for _, nb := range []Neighbours{DifferByOne, DifferAnyhow} {
						d, err := NoisyMax(n, m, big.NewRat(1, 2), ret, nb)
						if err != nil {
							t.Fatal(err)
						}
						checkAgainstModel(t, fmt.Sprintf("block %d noisy max n=%d m=%d ret=%d nb=%d", block, n, m, ret, nb), d)
						counted := *d
						counted.Pairs = 0
						if got := counted.pairs(); got != d.Pairs {
							t.Fatalf("noisy max n=%d m=%d nb=%d: Pairs %d, Neighbours lists %d", n, m, nb, d.Pairs, got)
						}
					}
				}
			}
		}
		g, _ := GeometricMechanism(big.NewRat(2, 3), 9)
		checkAgainstModel(t, "geometric", g)
		rr, _ := RandomizedResponse(big.NewRat(3, 4))
		checkAgainstModel(t, "rr", rr)
		rr, _ = RandomizedResponse(big.NewRat(1, 1))
		checkAgainstModel(t, "rr keep 1 (infinite)", rr)
	}
}

// Random mechanisms with ties, zeros (0/0 skipped, p/0 infinite), shared
// and fresh value pointers, and random neighbour lists.
func TestDPMechanismRandom(t *testing.T) {
	defer func(b int) { dpBlock = b }(dpBlock)
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		dpBlock = 1 + rng.IntN(5)
		inputs, outs := 1+rng.IntN(12), 1+rng.IntN(4)
		zeros := trial%3 == 0
		rows := make([][]*big.Rat, inputs)
		for x := range rows {
			// random weights (few distinct values, so ties are common),
			// normalised
			w := make([]int64, outs)
			var sum int64
			for o := range w {
				w[o] = int64(1 + rng.IntN(3))
				if zeros && rng.IntN(3) == 0 {
					w[o] = 0
				}
				sum += w[o]
			}
			if sum == 0 {
				w[0], sum = 1, 1
			}
			rows[x] = make([]*big.Rat, outs)
			for o := range w {
				rows[x][o] = big.NewRat(w[o], sum)
			}
		}
		shared := trial%2 == 0
		adj := make([][]int, inputs)
		for x := range inputs {
			for y := range inputs {
				if x != y && rng.IntN(3) == 0 {
					adj[x] = append(adj[x], y)
				}
			}
		}
		if inputs > 1 && len(adj[0]) == 0 {
			adj[0] = []int{1}
		}
		if inputs == 1 {
			adj[0] = []int{0} // a pair of an input with itself: ratio 1
		}
		names := func(x int) string { return fmt.Sprintf("in%02d", x) }
		d := &DPMechanism{Inputs: inputs, Outputs: make([]string, outs), Name: names,
			Dist: func() func(int) []*big.Rat {
				return func(x int) []*big.Rat {
					if shared {
						return rows[x]
					}
					out := make([]*big.Rat, outs)
					for o := range out {
						out[o] = new(big.Rat).Set(rows[x][o])
					}
					return out
				}
			},
			Neighbours: func(x int, yield func(int)) {
				for _, y := range adj[x] {
					yield(y)
				}
			}}
		for o := range d.Outputs {
			d.Outputs[o] = fmt.Sprint("o", o)
		}
		checkAgainstModel(t, fmt.Sprintf("trial %d", trial), d)
	}
}

// Sizes beyond the limits are refused before any work.
func TestDPMechanismLimits(t *testing.T) {
	if _, err := NoisyMax(25, 2, big.NewRat(1, 2), ReturnIndex, DifferAnyhow); err == nil {
		t.Fatal("3^25 answer vectors accepted")
	}
	if _, err := NoisyMax(3, 1000, big.NewRat(1, 2), ReturnIndex, DifferAnyhow); err == nil {
		t.Fatal("range 1000 accepted")
	}
	d, err := NoisyMax(12, 2, big.NewRat(1, 2), ReturnIndex, DifferAnyhow)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Model(); err == nil {
		t.Fatal("a model with 12·3^12 secret pairs built")
	}
	// Without interned values, 14 queries (9.4·10⁸ ratios) exceed
	// MaxStreamed; with them, 24 binary queries (4.8·10⁹) exceed
	// MaxInterned. Both are refused at once, naming the limit.
	d, err = NoisyMax(14, 2, big.NewRat(1, 2), ReturnIndex, DifferAnyhow)
	if err != nil {
		t.Fatal(err)
	}
	d.Interned = nil
	if _, err := d.Loss(); err == nil || !strings.Contains(err.Error(), "hmm.MaxStreamed") {
		t.Fatalf("14 queries without interning: %v", err)
	}
	d, err = NoisyMax(24, 1, big.NewRat(1, 2), ReturnIndex, DifferAnyhow)
	if err != nil {
		t.Fatal(err)
	}
	if d.Interned == nil {
		t.Fatal("24 binary queries not interned")
	}
	if _, err := d.Loss(); err == nil || !strings.Contains(err.Error(), "hmm.MaxInterned") {
		t.Fatalf("24 binary queries: %v", err)
	}
}

// A long verification reports its blocks on Progress and ends at 100 %.
func TestDPMechanismProgress(t *testing.T) {
	defer func(b int) { dpBlock = b }(dpBlock)
	dpBlock = 10
	d, err := NoisyMax(5, 2, big.NewRat(1, 2), ReturnIndex, DifferAnyhow)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	d.Progress = &out
	if _, err := d.Loss(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "100%\n") {
		t.Fatalf("progress %q", out.String())
	}
}

// Against the definition itself: the streamed loss equals the largest
// likelihood ratio over neighbour pairs and outputs, each probability
// computed by enumerating every noise vector (directLoss, no HMM, no
// memo) — for both outputs and both neighbour notions, n ≤ 4.
func TestDPMechanismEqualsNoiseEnumeration(t *testing.T) {
	geo, _ := geometricMatrix(big.NewRat(1, 2), 2)
	for _, ret := range []NoisyMaxReturns{ReturnIndex, ReturnValue} {
		for _, nb := range []Neighbours{DifferByOne, DifferAnyhow} {
			for n := 1; n <= 4; n++ {
				d, err := NoisyMax(n, 2, big.NewRat(1, 2), ret, nb)
				if err != nil {
					t.Fatal(err)
				}
				r, err := d.Loss()
				if err != nil {
					t.Fatal(err)
				}
				if want := directLoss(geo, n, ret, nb); r.Ratio.Cmp(want) != 0 {
					t.Fatalf("ret=%d nb=%d n=%d: streamed %s, enumeration %s", ret, nb, n, r.Ratio.RatString(), want.RatString())
				}
			}
		}
	}
}

// withoutInterned is d on the Dist path.
func withoutInterned(d *DPMechanism) *DPMechanism {
	e := *d
	e.Interned = nil
	return &e
}

// The interned path (ids, float filter) gives exactly the Dist path's
// Result on random mechanisms: ties, zeros (0/0 skipped, p/0 infinite),
// values too small for a float (1/2^1100, the exact fallback), ids shared
// between inputs or fresh, random neighbour lists, small blocks; and both
// equal the model search.
func TestDPInternedRandom(t *testing.T) {
	defer func(b int) { dpBlock = b }(dpBlock)
	rng := rand.New(rand.NewPCG(3, 5))
	tiny := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 1100))
	for trial := range 400 {
		dpBlock = 1 + rng.IntN(5)
		inputs, outs := 1+rng.IntN(12), 1+rng.IntN(4)
		zeros, tinies := trial%3 == 0, trial%4 == 1
		rows := make([][]*big.Rat, inputs)
		for x := range rows {
			w := make([]int64, outs)
			var sum int64
			for o := range w {
				w[o] = int64(1 + rng.IntN(3))
				if zeros && rng.IntN(3) == 0 {
					w[o] = 0
				}
				sum += w[o]
			}
			if sum == 0 {
				w[0], sum = 1, 1
			}
			rows[x] = make([]*big.Rat, outs)
			rest := big.NewRat(1, 1)
			for o := range w {
				rows[x][o] = big.NewRat(w[o], sum)
				if tinies && o < outs-1 && rng.IntN(3) == 0 {
					rows[x][o].Mul(rows[x][o], tiny)
				}
				if o < outs-1 {
					rest.Sub(rest, rows[x][o])
				} else {
					rows[x][o] = rest // the mass the tiny values gave up
				}
			}
		}
		// ids: one per (input, output), or one per distinct value
		shared := trial%2 == 0
		var vals []*big.Rat
		ids := make([][]int32, inputs)
		byValue := map[string]int32{}
		for x := range rows {
			for _, r := range rows[x] {
				id, ok := byValue[r.RatString()]
				if !ok || !shared {
					id = int32(len(vals))
					vals = append(vals, r)
					byValue[r.RatString()] = id
				}
				ids[x] = append(ids[x], id)
			}
		}
		adj := make([][]int, inputs)
		for x := range inputs {
			for y := range inputs {
				if x != y && rng.IntN(3) == 0 {
					adj[x] = append(adj[x], y)
				}
			}
		}
		if len(adj[0]) == 0 {
			adj[0] = []int{(1) % inputs}
		}
		d := &DPMechanism{Inputs: inputs, Outputs: make([]string, outs),
			Name: func(x int) string { return fmt.Sprintf("in%02d", x) },
			Dist: func() func(int) []*big.Rat {
				return func(x int) []*big.Rat {
					out := make([]*big.Rat, outs)
					for o, id := range ids[x] {
						out[o] = vals[id]
					}
					return out
				}
			},
			Neighbours: func(x int, yield func(int)) {
				for _, y := range adj[x] {
					yield(y)
				}
			},
			Interned: func() DPInterned {
				var cx, cy int
				floats := func(x int) []float64 {
					f := make([]float64, outs)
					for o, id := range ids[x] {
						f[o] = internFloat(vals[id])
					}
					return f
				}
				return DPInterned{
					Value: func(id int32) *big.Rat { return vals[id] },
					IDs:   func(o int) (int32, int32) { return ids[cx][o], ids[cy][o] },
					Visit: func(x int, self func([]float64), yield func(int, []float64)) {
						cx = x
						self(floats(x))
						for _, y := range adj[x] {
							cy = y
							yield(y, floats(y))
						}
					},
				}
			}}
		for o := range d.Outputs {
			d.Outputs[o] = fmt.Sprint("o", o)
		}
		label := fmt.Sprintf("trial %d", trial)
		got, err := d.Loss()
		if err != nil {
			t.Fatal(label, err)
		}
		want, err := withoutInterned(d).Loss()
		if err != nil {
			t.Fatal(label, err)
		}
		sameResult(t, label, got, want)
		checkAgainstModel(t, label, d)
	}
}

// Noisy Max's interned ids (dense keys shifted per neighbour) give exactly
// the Dist path's Result, beyond the sizes the model search reaches.
func TestNoisyMaxInternedEqualsDist(t *testing.T) {
	defer func(b int) { dpBlock = b }(dpBlock)
	for _, block := range []int{3, 1 << 12} {
		dpBlock = block
		for _, c := range []struct{ n, m int }{{1, 1}, {9, 1}, {1, 2}, {7, 2}, {5, 3}, {4, 4}} {
			for _, nb := range []Neighbours{DifferByOne, DifferAnyhow} {
				for _, alpha := range []*big.Rat{big.NewRat(1, 2), big.NewRat(9, 10)} {
					d, err := NoisyMax(c.n, c.m, alpha, ReturnIndex, nb)
					if err != nil {
						t.Fatal(err)
					}
					if d.Interned == nil {
						t.Fatalf("n=%d m=%d: not interned", c.n, c.m)
					}
					label := fmt.Sprintf("block %d n=%d m=%d nb=%d α=%s", block, c.n, c.m, nb, alpha.RatString())
					got, err := d.Loss()
					if err != nil {
						t.Fatal(label, err)
					}
					want, err := withoutInterned(d).Loss()
					if err != nil {
						t.Fatal(label, err)
					}
					sameResult(t, label, got, want)
				}
			}
		}
	}
}
