package audit

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/hmm"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
)

// direct computes the audit's maximal likelihood ratio without the HMM:
// enumerate every sequence, its exact probability and histogram, and for
// every secret X_s = a vs b and every output cell vector compare
// P(cells | X_s = a) with P(cells | X_s = b).
func direct(q []*big.Rat, P [][]*big.Rat, T int, alpha *big.Rat) *big.Rat {
	k := len(q)
	cells := T + 3
	type seqP struct {
		x []int
		p *big.Rat
	}
	var seqs []seqP
	var rec func(x []int, p *big.Rat)
	rec = func(x []int, p *big.Rat) {
		if p.Sign() == 0 {
			return
		}
		if len(x) == T {
			seqs = append(seqs, seqP{append([]int(nil), x...), p})
			return
		}
		for y := range k {
			var np *big.Rat
			if len(x) == 0 {
				np = new(big.Rat).Set(q[y])
			} else {
				np = new(big.Rat).Mul(p, P[x[len(x)-1]][y])
			}
			rec(append(x, y), np)
		}
	}
	rec(nil, big.NewRat(1, 1))
	nObs := 1
	for range k {
		nObs *= cells
	}
	best := big.NewRat(1, 1)
	for s := range T {
		// P(cells, X_s = v) for every v
		joint := make([][]*big.Rat, k)
		marg := make([]*big.Rat, k)
		for v := range k {
			marg[v] = new(big.Rat)
			joint[v] = make([]*big.Rat, nObs)
			for o := range joint[v] {
				joint[v][o] = new(big.Rat)
			}
		}
		for _, sp := range seqs {
			v := sp.x[s]
			marg[v].Add(marg[v], sp.p)
			counts := make([]int, k)
			for _, x := range sp.x {
				counts[x]++
			}
			for o := range nObs {
				p := new(big.Rat).Set(sp.p)
				c := o
				for b := k - 1; b >= 0; b-- {
					p.Mul(p, cellProbs(counts[b], T, alpha)[c%cells])
					c /= cells
				}
				joint[v][o].Add(joint[v][o], p)
			}
		}
		for a := range k {
			for b := range k {
				if a == b || marg[a].Sign() == 0 || marg[b].Sign() == 0 {
					continue
				}
				for o := range nObs {
					pa := new(big.Rat).Quo(joint[a][o], marg[a])
					pb := new(big.Rat).Quo(joint[b][o], marg[b])
					if pb.Sign() == 0 {
						continue // geometric noise has full support
					}
					if r := pa.Quo(pa, pb); r.Cmp(best) > 0 {
						best = r
					}
				}
			}
		}
	}
	return best
}

func randRow(rng *rand.Rand, k int) []*big.Rat {
	w := make([]int64, k)
	var s int64
	for i := range w {
		w[i] = 1 + rng.Int64N(9)
		s += w[i]
	}
	out := make([]*big.Rat, k)
	for i := range out {
		out[i] = big.NewRat(w[i], s)
	}
	return out
}

// The audit model's exact loss equals direct enumeration (random chains,
// k = 2 with T ≤ 4 and k = 3 with T ≤ 3).
func TestModelAgainstDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for trial := range 12 {
		k, T := 2, 2+trial%3
		if trial%4 == 3 {
			k, T = 3, 2+trial%2
		}
		q := randRow(rng, k)
		P := make([][]*big.Rat, k)
		for i := range P {
			P[i] = randRow(rng, k)
		}
		alpha := big.NewRat(int64(1+rng.IntN(8)), 10)
		m, secs, _, err := Model(q, P, T, alpha)
		if err != nil {
			t.Fatal(err)
		}
		r, err := hmm.Loss(m, secs, T)
		if err != nil {
			t.Fatal(err)
		}
		if want := direct(q, P, T, alpha); want.Cmp(r.Ratio) != 0 {
			t.Fatalf("trial %d (k=%d T=%d): HMM %s, direct %s", trial, k, T, r.Ratio.RatString(), want.RatString())
		}
	}
}

// The product's releases verified: MQMExact, MQMApprox and group DP keep
// their claimed ε on short chains (including non-trivial quilts at large ε);
// plain DP does not; and halving MQM's noise is caught.
func TestProductGuarantees(t *testing.T) {
	chains := [][][]float64{{{0.8, 0.2}, {0.3, 0.7}}, {{0.6, 0.4}, {0.45, 0.55}}, {{0.5, 0.3, 0.2}, {0.2, 0.6, 0.2}, {0.3, 0.3, 0.4}}}
	for ci, P := range chains {
		ch, err := markov.New(nil, P, markov.InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		T := 4
		if len(P) == 3 {
			T = 3
		}
		for _, eps := range []float64{0.5, 2, 6} {
			for _, method := range []mechanism.Name{mechanism.Exact, mechanism.Approx, mechanism.GroupDP} {
				r, err := Histogram(ch, T, eps, method)
				if err != nil {
					continue // e.g. approx on a chain it does not cover
				}
				if r.Verdict != hmm.Holds {
					t.Fatalf("chain %d ε=%g %s: %s with loss %g (σ = %g)", ci, eps, method, r.Verdict, r.Loss, r.Sigma)
				}
			}
			r, err := Histogram(ch, T, eps, "dp")
			if err != nil {
				t.Fatal(err)
			}
			if ci == 0 && r.Verdict != hmm.Violated {
				t.Errorf("chain %d ε=%g: plain DP %s with loss %g", ci, eps, r.Verdict, r.Loss)
			}
		}
	}
	// Negative control: a release with half of MQM's σ.
	ch, _ := markov.New(nil, chains[0], markov.InitStationary, nil)
	r, err := Histogram(ch, 4, 6, "exact")
	if err != nil {
		t.Fatal(err)
	}
	q, _ := ch.Initial()
	alpha := new(big.Rat).SetFloat64(math.Exp(-1 / r.EffectiveScale * 2))
	m, secs, _, _ := Model(exactRows(q), exactMatrix(ch.P), 4, alpha)
	half, _ := hmm.Loss(m, secs, 4)
	if half.Loss <= 6 {
		t.Fatalf("half the noise still gives loss %g ≤ 6", half.Loss)
	}
}
