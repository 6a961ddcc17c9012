package hmm

import (
	"math"
	"math/big"
	"testing"
)

var half = big.NewRat(1, 2)

// [LWZ]'s ½-geometric mechanism on {0,1,2}.
func TestGeometricHalf(t *testing.T) {
	geo, err := geometricMatrix(half, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"2/3", "1/6", "1/6"}, {"1/3", "1/3", "1/3"}, {"1/6", "1/6", "2/3"}}
	for v := range want {
		for z := range want[v] {
			if geo[v][z].RatString() != want[v][z] {
				t.Errorf("geo[%d][%d] = %s, want %s", v, z, geo[v][z].RatString(), want[v][z])
			}
		}
	}
	// ln(1/α)-DP for neighbours, exactly: the loss is ln 2 for every range.
	for _, m := range []int{1, 2, 5, 9} {
		model, pairs, _ := geometricModel(half, m)
		r, err := Loss(model, pairs, 2)
		if err != nil {
			t.Fatal(err)
		}
		if r.Ratio.RatString() != "2" {
			t.Errorf("m=%d: ratio %s", m, r.Ratio.RatString())
		}
	}
}

// directNoisyMax enumerates every noise vector (no HMM, no formula).
func directNoisyMax(geo [][]*big.Rat, v []int, ret NoisyMaxReturns) []*big.Rat {
	m := len(geo) - 1
	n := len(v)
	size := n
	if ret == ReturnValue {
		size = m + 1
	}
	out := make([]*big.Rat, size)
	for i := range out {
		out[i] = new(big.Rat)
	}
	noisy := make([]int, n)
	var rec func(j int, p *big.Rat)
	rec = func(j int, p *big.Rat) {
		if j == n {
			best := 0
			for t := 1; t < n; t++ {
				if noisy[t] > noisy[best] {
					best = t
				}
			}
			o := best
			if ret == ReturnValue {
				o = noisy[best]
			}
			out[o].Add(out[o], p)
			return
		}
		for z := range m + 1 {
			noisy[j] = z
			rec(j+1, new(big.Rat).Mul(p, geo[v[j]][z]))
		}
	}
	rec(0, big.NewRat(1, 1))
	return out
}

// directLoss is the DP loss by enumeration of distributions over pairs.
func directLoss(geo [][]*big.Rat, n int, ret NoisyMaxReturns, nb Neighbours) *big.Rat {
	vs, _ := noisyMaxInputs(n, len(geo)-1)
	dist := make([][]*big.Rat, len(vs))
	for i, v := range vs {
		dist[i] = directNoisyMax(geo, v, ret)
	}
	best := big.NewRat(1, 1)
	for i := range vs {
		for j := range vs {
			diff, ok := 0, true
			cnt := 0
			for t := range n {
				if vs[i][t] != vs[j][t] {
					cnt++
					diff = abs(vs[i][t] - vs[j][t])
				}
			}
			ok = cnt == 1 && (nb == DifferAnyhow || diff == 1)
			if !ok {
				continue
			}
			a, b := dist[i], dist[j]
			for o := range a {
				if b[o].Sign() == 0 {
					continue
				}
				if r := new(big.Rat).Quo(a[o], b[o]); r.Cmp(best) > 0 {
					best = r
				}
			}
		}
	}
	return best
}

// [LWZ] Example 7.2 and its correct counterpart: exact losses for
// n = 1..6 queries under both neighbour notions, cross-checked against
// direct enumeration of the noise for n ≤ 4.
func TestNoisyMaxLosses(t *testing.T) {
	geo, _ := geometricMatrix(half, 2)
	for _, ret := range []NoisyMaxReturns{ReturnIndex, ReturnValue} {
		for _, nb := range []Neighbours{DifferByOne, DifferAnyhow} {
			for n := 1; n <= 6; n++ {
				model, pairs, err := noisyMaxModel(n, 2, half, ret, nb)
				if err != nil {
					t.Fatal(err)
				}
				r, err := Loss(model, pairs, 2)
				if err != nil {
					t.Fatal(err)
				}
				if n <= 4 {
					vs, _ := noisyMaxInputs(n, 2)
					for _, v := range vs {
						want := directNoisyMax(geo, v, ret)
						for o, p := range noisyMaxDist(geo, v, ret) {
							if p.Cmp(want[o]) != 0 {
								t.Fatalf("n=%d input %v output %d: formula %s, enumeration %s", n, v, o, p.RatString(), want[o].RatString())
							}
						}
					}
					if d := directLoss(geo, n, ret, nb); d.Cmp(r.Ratio) != 0 {
						t.Fatalf("ret=%d nb=%d n=%d: HMM ratio %s, direct %s", ret, nb, n, r.Ratio.RatString(), d.RatString())
					}
				}
				t.Logf("returns=%v neighbours=%v n=%d: ratio %s (loss %.6f, ln 2 = %.6f) witness %v %s",
					[]string{"index", "value"}[ret], []string{"one", "any"}[nb], n, r.Ratio.RatString(), r.Loss, math.Ln2, r.Witness, r.Secret)
				if ret == ReturnValue && nb == DifferByOne && n == 5 && r.Ratio.Cmp(big.NewRat(2, 1)) > 0 {
					t.Errorf("[LWZ] Example 7.2: the wrong Noisy Max with n = 5 satisfies ln(2)-DP, got ratio %s", r.Ratio.RatString())
				}
			}
		}
	}
}

// [LWZ] Example 7.1 with p1 = 0.2, p2 = 0.4: exact loss, cross-checked
// by direct enumeration of the prior and the noise.
func TestExample71(t *testing.T) {
	p1, p2 := big.NewRat(1, 5), big.NewRat(2, 5)
	model, sec, err := Example71(p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Loss(model, []Secret{sec}, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Direct: P(index | secret) = Σ_{i,j,k} prior(i,j,k) · P(index | i,j,k).
	geo, _ := geometricMatrix(half, 2)
	vs, _ := noisyMaxInputs(3, 2)
	var pPi, pTau [3]*big.Rat
	for o := range 3 {
		pPi[o], pTau[o] = new(big.Rat), new(big.Rat)
	}
	for s, v := range vs {
		d := directNoisyMax(geo, v, ReturnIndex)
		for o := range 3 {
			pPi[o].Add(pPi[o], new(big.Rat).Mul(sec.Pi[s], d[o]))
			pTau[o].Add(pTau[o], new(big.Rat).Mul(sec.Tau[s], d[o]))
		}
	}
	best := big.NewRat(1, 1)
	for o := range 3 {
		for _, q := range []*big.Rat{new(big.Rat).Quo(pPi[o], pTau[o]), new(big.Rat).Quo(pTau[o], pPi[o])} {
			if q.Cmp(best) > 0 {
				best = q
			}
		}
		t.Logf("index %d: P_π = %s, P_τ = %s", o+1, pPi[o].RatString(), pTau[o].RatString())
	}
	if best.Cmp(r.Ratio) != 0 {
		t.Fatalf("HMM ratio %s, direct %s", r.Ratio.RatString(), best.RatString())
	}
	t.Logf("Example 7.1: ratio %s = %.6f (loss %.6f), witness %v (%s larger); ln(2)-Pufferfish holds: %v",
		r.Ratio.RatString(), logRat(r.Ratio), r.Loss, r.Witness, r.Larger, r.Ratio.Cmp(big.NewRat(2, 1)) <= 0)
}

// directAboveThreshold enumerates the noisy threshold and every noisy
// answer vector: the probability of each output sequence of length n
// (bot^j top halt…, or bot^n), keyed by the sequence as a string.
func directAboveThreshold(t, m int, geoT, geoQ [][]*big.Rat, q []int) map[string]*big.Rat {
	out := map[string]*big.Rat{}
	n := len(q)
	noisy := make([]int, n)
	var rec func(i int, tau int, p *big.Rat)
	rec = func(i, tau int, p *big.Rat) {
		if i == n {
			seq := ""
			for j := range n {
				if noisy[j] >= tau {
					seq += "T"
					for len(seq) < n {
						seq += "H"
					}
					break
				}
				seq += "B"
			}
			if out[seq] == nil {
				out[seq] = new(big.Rat)
			}
			out[seq].Add(out[seq], p)
			return
		}
		for z := range m + 1 {
			noisy[i] = z
			rec(i+1, tau, new(big.Rat).Mul(p, geoQ[q[i]][z]))
		}
	}
	for tau := range m + 1 {
		rec(0, tau, new(big.Rat).Set(geoT[t][tau]))
	}
	return out
}

// Above Threshold as an HMM against direct enumeration of its noise: the
// exact DP loss over output sequences of length n (every run has ended by
// then) equals the maximum ratio over neighbouring inputs.
func TestAboveThreshold(t *testing.T) {
	for _, c := range []struct{ n, th, m int }{{2, 1, 2}, {3, 1, 2}, {2, 0, 3}} {
		aT, aQ := big.NewRat(1, 2), big.NewRat(2, 3)
		model, secs, err := aboveThresholdDP(c.n, c.th, c.m, aT, aQ)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Loss(model, secs, c.n)
		if err != nil {
			t.Fatal(err)
		}
		geoT, _ := geometricMatrix(aT, c.m)
		geoQ, _ := geometricMatrix(aQ, c.m)
		best := directDPRatio(t, c.n, c.m, func(q []int) map[string]*big.Rat { return directAboveThreshold(c.th, c.m, geoT, geoQ, q) })
		if best.Cmp(r.Ratio) != 0 {
			t.Fatalf("%+v: HMM ratio %s, direct %s", c, r.Ratio.RatString(), best.RatString())
		}
		t.Logf("Above Threshold n=%d T=%d m=%d αT=1/2 αQ=2/3: ratio %s (loss %.4f; the textbook ε = ln 2 + 2 ln(3/2) = %.4f), witness %v, %s",
			c.n, c.th, c.m, r.Ratio.RatString(), r.Loss, math.Log(2)+2*math.Log(1.5), r.Witness, r.Secret)
	}
}

// directSparseVector enumerates Sparse Vector's noise directly: a noisy
// threshold, noisy answers, a fresh threshold after each ⊤, halting after c
// ⊤; the probability of each output sequence of length n.
func directSparseVector(t, m, c int, geoT, geoQ [][]*big.Rat, q []int) map[string]*big.Rat {
	out := map[string]*big.Rat{}
	n := len(q)
	var rec func(i, tau, tops int, seq string, p *big.Rat)
	rec = func(i, tau, tops int, seq string, p *big.Rat) {
		if tops == c || i == n {
			for len(seq) < n {
				seq += "H"
			}
			if out[seq] == nil {
				out[seq] = new(big.Rat)
			}
			out[seq].Add(out[seq], p)
			return
		}
		for z := range m + 1 {
			pz := new(big.Rat).Mul(p, geoQ[q[i]][z])
			if z < tau {
				rec(i+1, tau, tops, seq+"B", pz)
				continue
			}
			for nt := range m + 1 {
				rec(i+1, nt, tops+1, seq+"T", new(big.Rat).Mul(pz, geoT[t][nt]))
			}
		}
	}
	for tau := range m + 1 {
		rec(0, tau, 0, "", new(big.Rat).Set(geoT[t][tau]))
	}
	return out
}

// Sparse Vector with cutoff 2 as an HMM against direct enumeration.
func TestSparseVector(t *testing.T) {
	for _, c := range []struct{ n, th, m, c int }{{3, 1, 2, 2}, {3, 0, 2, 2}, {2, 1, 2, 2}} {
		aT, aQ := big.NewRat(1, 2), big.NewRat(2, 3)
		model, secs, err := SparseVectorDP(c.n, c.th, c.m, c.c, aT, aQ)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Loss(model, secs, c.n)
		if err != nil {
			t.Fatal(err)
		}
		geoT, _ := geometricMatrix(aT, c.m)
		geoQ, _ := geometricMatrix(aQ, c.m)
		best := directDPRatio(t, c.n, c.m, func(q []int) map[string]*big.Rat { return directSparseVector(c.th, c.m, c.c, geoT, geoQ, q) })
		if best.Cmp(r.Ratio) != 0 {
			t.Fatalf("%+v: HMM ratio %s, direct %s", c, r.Ratio.RatString(), best.RatString())
		}
		t.Logf("Sparse Vector n=%d T=%d m=%d c=%d: ratio %s (loss %.4f), witness %v", c.n, c.th, c.m, c.c, r.Ratio.RatString(), r.Loss, r.Witness)
	}
}

// directDPRatio is the largest likelihood ratio of an output sequence
// between DP-neighbouring answer vectors in {0..m}^n (every answer changes
// by at most one), from a direct computation of the output distribution of
// each vector; every distribution must sum to 1.
func directDPRatio(t *testing.T, n, m int, dist func(q []int) map[string]*big.Rat) *big.Rat {
	t.Helper()
	vs, _ := noisyMaxInputs(n, m)
	ds := make([]map[string]*big.Rat, len(vs))
	for x := range vs {
		ds[x] = dist(vs[x])
		total := new(big.Rat)
		for _, p := range ds[x] {
			total.Add(total, p)
		}
		if total.Cmp(big.NewRat(1, 1)) != 0 {
			t.Fatalf("direct distribution of %v sums to %s", vs[x], total.RatString())
		}
	}
	best := big.NewRat(1, 1)
	for x := range vs {
		for y := range vs {
			ok := x != y
			for i := range n {
				ok = ok && abs(vs[x][i]-vs[y][i]) <= 1
			}
			if !ok {
				continue
			}
			for seq, a := range ds[x] {
				b := ds[y][seq]
				if b == nil || b.Sign() == 0 {
					t.Fatalf("output %s possible under %v only", seq, vs[x])
				}
				if q := new(big.Rat).Quo(a, b); q.Cmp(best) > 0 {
					best = q
				}
			}
		}
	}
	return best
}
