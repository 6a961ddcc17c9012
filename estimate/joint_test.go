package estimate

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// Joint's estimate is the weighted projection onto the consistent set C:
// checked from the definition by the variational inequality
// ⟨y − x*, c − x*⟩_W ≤ 0 for many points c of C (the truth among them,
// and product tables N_w·t/N for random totals t), the constraints, and
// that it is never farther from the truth than the noisy counts.
func TestJointIsTheProjection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 35))
	for trial := range 300 {
		k, nw, np := 2+rng.IntN(3), 1+rng.IntN(4), 1+rng.IntN(4)
		// a true table of readings: window × cell × bin
		tab := make([][][]float64, nw)
		for w := range tab {
			tab[w] = make([][]float64, np)
			for p := range tab[w] {
				tab[w][p] = make([]float64, k)
				for l := range k {
					tab[w][p][l] = float64(rng.IntN(6))
				}
			}
		}
		wTrue := make([][]float64, nw)
		pTrue := make([][]float64, np)
		for p := range pTrue {
			pTrue[p] = make([]float64, k)
		}
		for w := range tab {
			wTrue[w] = make([]float64, k)
			for p := range tab[w] {
				for l, v := range tab[w][p] {
					wTrue[w][l] += v
					pTrue[p][l] += v
				}
			}
		}
		exact := trial%2 == 0
		va, vb := 0.5+4*rng.Float64(), 0.5+4*rng.Float64()
		noisy := func(tr [][]float64, v float64) []Histogram {
			var hs []Histogram
			for _, row := range tr {
				h := Histogram{Variance: v, Exact: exact}
				for _, c := range row {
					h.N += c
					h.Noisy = append(h.Noisy, c+rng.NormFloat64()*math.Sqrt(v)*2)
				}
				if !exact {
					h.N += float64(rng.IntN(3)) // readings whose value is missing
				}
				hs = append(hs, h)
			}
			return hs
		}
		a, b := noisy(wTrue, va), noisy(pTrue, vb)
		if !exact {
			// both sides hold the same readings
			na, nb := 0.0, 0.0
			for _, h := range a {
				na += h.N
			}
			for _, h := range b {
				nb += h.N
			}
			b[0].N += na - nb
			if b[0].N < 0 {
				a[0].N -= b[0].N
				b[0].N = 0
			}
		}
		ea, eb, err := Joint(context.Background(), a, b)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		// constraints
		for i, hs := range [][]Histogram{a, b} {
			est := [][][]float64{ea, eb}[i]
			for j, h := range hs {
				s := 0.0
				for _, c := range est[j] {
					if c < 0 {
						t.Fatalf("trial %d: negative count", trial)
					}
					s += c
				}
				if exact && math.Abs(s-h.N) > 1e-7*(1+h.N) || !exact && s > h.N*(1+1e-9)+1e-9 {
					t.Fatalf("trial %d: histogram sums to %v, N = %v (exact %v)", trial, s, h.N, exact)
				}
			}
		}
		for l := range k {
			sa, sb := 0.0, 0.0
			for _, e := range ea {
				sa += e[l]
			}
			for _, e := range eb {
				sb += e[l]
			}
			if math.Abs(sa-sb) > 1e-6 {
				t.Fatalf("trial %d: bin %d totals %v and %v disagree", trial, l, sa, sb)
			}
		}
		// weighted inner product ⟨y − x*, c − x*⟩ and distance
		inner := func(ca, cb [][]float64) float64 {
			v := 0.0
			for j, h := range a {
				for l := range k {
					v += (h.Noisy[l] - ea[j][l]) * (ca[j][l] - ea[j][l]) / va
				}
			}
			for j, h := range b {
				for l := range k {
					v += (h.Noisy[l] - eb[j][l]) * (cb[j][l] - eb[j][l]) / vb
				}
			}
			return v
		}
		dist := func(xa, xb [][]float64, ya, yb func(j, l int) float64) float64 {
			v := 0.0
			for j := range xa {
				for l := range k {
					d := xa[j][l] - ya(j, l)
					v += d * d / va
				}
			}
			for j := range xb {
				for l := range k {
					d := xb[j][l] - yb(j, l)
					v += d * d / vb
				}
			}
			return v
		}
		scale := 1.0
		for _, h := range append(append([]Histogram{}, a...), b...) {
			for _, v := range h.Noisy {
				scale += v * v
			}
		}
		if exact {
			if v := inner(wTrue, pTrue); v > 1e-6*scale {
				t.Fatalf("trial %d: the truth violates the projection's inequality by %v", trial, v)
			}
			noisyA := func(j, l int) float64 { return a[j].Noisy[l] }
			noisyB := func(j, l int) float64 { return b[j].Noisy[l] }
			trA := func(j, l int) float64 { return wTrue[j][l] }
			trB := func(j, l int) float64 { return pTrue[j][l] }
			if dist(ea, eb, trA, trB) > dist(wTrue, pTrue, noisyA, noisyB)*(1+1e-9)+1e-9 {
				t.Fatalf("trial %d: the estimate is farther from the truth than the noisy counts", trial)
			}
			n := 0.0
			for _, h := range a {
				n += h.N
			}
			for range 50 {
				tot := make([]float64, k)
				s := 0.0
				for l := range tot {
					tot[l] = rng.ExpFloat64()
					s += tot[l]
				}
				ca := make([][]float64, len(a))
				for j, h := range a {
					ca[j] = make([]float64, k)
					for l := range k {
						ca[j][l] = h.N * tot[l] / s
					}
				}
				cb := make([][]float64, len(b))
				for j, h := range b {
					cb[j] = make([]float64, k)
					for l := range k {
						cb[j][l] = h.N * tot[l] / s
					}
				}
				if v := inner(ca, cb); v > 1e-6*scale {
					t.Fatalf("trial %d: a consistent point violates the projection's inequality by %v", trial, v)
				}
			}
		}
	}
}

func TestJointBadInput(t *testing.T) {
	ctx := context.Background()
	h := func(n float64, c ...float64) Histogram { return Histogram{Noisy: c, Variance: 1, N: n, Exact: true} }
	for name, sides := range map[string][2][]Histogram{
		"empty":      {nil, {h(1, 1)}},
		"bins":       {{h(1, 1, 0)}, {h(1, 1)}},
		"readings":   {{h(2, 1, 1)}, {h(1, 1, 0)}},
		"variance":   {{{Noisy: []float64{1}, Variance: 0, N: 1}}, {h(1, 1)}},
		"negative N": {{h(-1, 1)}, {h(-1, 1)}},
	} {
		if _, _, err := Joint(ctx, sides[0], sides[1]); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
