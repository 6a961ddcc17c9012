package mqm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/bn"
	"github.com/pufferfish-privacy/pufferfish/framework"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/noise"
)

// ratRow draws a random probability row with denominator d, some zeros.
func ratRow(rng *rand.Rand, k int, zeros bool) []*big.Rat {
	w := make([]int64, k)
	var s int64
	for v := range w {
		if !zeros || rng.IntN(4) > 0 {
			w[v] = 1 + rng.Int64N(9)
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
	return row
}

func floatsOf(row []*big.Rat) []float64 {
	out := make([]float64, len(row))
	for i, r := range row {
		out[i], _ = r.Float64()
	}
	return out
}

// TestNetworkAgreesWithChain: a chain written as a Bayesian network gives
// the chain implementation's σ_max (Lemma B.2's candidates are exactly the
// per-branch layers of a chain).
func TestNetworkAgreesWithChain(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 120 {
		k, T := 2+rng.IntN(2), 2+rng.IntN(9)
		q := ratRow(rng, k, false)
		P := make([][]*big.Rat, k)
		Pf := make([][]float64, k)
		for x := range P {
			P[x] = ratRow(rng, k, trial%3 == 0)
			Pf[x] = floatsOf(P[x])
		}
		nodes := []bn.Node{{CPT: [][]*big.Rat{q}}}
		for t := 1; t < T; t++ {
			nodes = append(nodes, bn.Node{Parents: []int{t - 1}, CPT: P})
		}
		net, err := bn.New(k, nodes)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := markov.New(nil, Pf, markov.InitGiven, floatsOf(q))
		if err != nil {
			t.Fatal(err)
		}
		cl, err := markov.NewClass(ch.States, ch)
		if err != nil {
			t.Fatal(err)
		}
		eps := []float64{0.3, 1, 4}[trial%3]
		want, err := Scale(cl, T, eps, Exact)
		if err != nil {
			t.Fatal(err)
		}
		got, err := NetworkScale([]*bn.Network{net}, eps, NetworkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Sigma-want.Sigma) > 1e-9*want.Sigma {
			t.Fatalf("trial %d (k=%d T=%d ε=%g): network σ %.15g, chain σ %.15g (node %d vs %d)", trial, k, T, eps, got.Sigma, want.Sigma, got.Node+1, want.Node)
		}
	}
}

// TestNetworkMQMIsPufferfish checks Definition 2.1 by brute force on random
// small DAGs: the exact privacy loss of sum + σ_max·L·Lap(1) over every secret
// pair is at most ε; and halving the noise is caught on some instance.
func TestNetworkMQMIsPufferfish(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	caught := 0
	for trial := range 150 {
		n, k := 2+rng.IntN(5), 2
		nodes := make([]bn.Node, n)
		for i := range nodes {
			for j := range i {
				if len(nodes[i].Parents) < 2 && rng.IntN(3) == 0 {
					nodes[i].Parents = append(nodes[i].Parents, j)
				}
			}
			rows := 1 << len(nodes[i].Parents)
			for range rows {
				nodes[i].CPT = append(nodes[i].CPT, ratRow(rng, k, trial%4 == 0))
			}
		}
		net, err := bn.New(k, nodes)
		if err != nil {
			t.Fatal(err)
		}
		eps := 0.5 + 4*rng.Float64()
		res, err := NetworkScale([]*bn.Network{net}, eps, NetworkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Sigma == 0 {
			continue
		}
		dom := []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)}
		names := make([]string, n)
		for i := range names {
			names[i] = net.Nodes[i].Name
		}
		f, err := framework.New(names, dom, []framework.Theta{{Net: net}}, nil, framework.Sum(dom))
		if err != nil {
			t.Fatal(err)
		}
		loss, _, _, err := f.MechanismLoss(res.Sigma) // sum is 1-Lipschitz here
		if err != nil {
			t.Fatal(err)
		}
		if loss > eps*(1+1e-9) {
			t.Fatalf("trial %d: loss %.12g > ε = %g (σ = %g, node %d, quilt %v)", trial, loss, eps, res.Sigma, res.Node, res.Quilt)
		}
		if l2, _, _, _ := f.MechanismLoss(res.Sigma / 2); l2 > eps {
			caught++
		}
	}
	if caught == 0 {
		t.Fatal("halving the noise never violated ε")
	}
}

// A tree: the root's branches are searched independently, and a star with
// many leaves exceeds a small candidate limit with a clear message.
func TestNetworkLimits(t *testing.T) {
	half := []*big.Rat{big.NewRat(1, 2), big.NewRat(1, 2)}
	stay := [][]*big.Rat{{big.NewRat(9, 10), big.NewRat(1, 10)}, {big.NewRat(1, 10), big.NewRat(9, 10)}}
	nodes := []bn.Node{{Name: "hub", CPT: [][]*big.Rat{half}}}
	for range 12 {
		nodes = append(nodes, bn.Node{Parents: []int{0}, CPT: stay})
	}
	net, err := bn.New(2, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NetworkScale([]*bn.Network{net}, 1, NetworkOptions{CandidateLimit: 1000}); err == nil || !strings.Contains(err.Error(), "4.1e+03 candidate quilts") {
		t.Fatalf("want a candidate-limit error, got %v", err)
	}
	if _, err := NetworkScale([]*bn.Network{net}, 1, NetworkOptions{}); err != nil {
		t.Fatal(err)
	}
}

// NetworkRelease adds σ_max·L noise per coordinate through the one noise
// path; with a deterministic source its output is on the sampler's grid
// and within a plausible distance of the exact answer.
func TestNetworkRelease(t *testing.T) {
	fh, err := os.Open("../framework/testdata/tree30.json")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, data, err := framework.ParseNetworks(fh, "tree30.json")
	if err != nil || data == nil {
		t.Fatalf("%v (data %v)", err, data)
	}
	var nets []*bn.Network
	for _, th := range f.Thetas {
		nets = append(nets, th.Net)
	}
	res, err := NetworkScale(nets, 5, NetworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, scale, err := NetworkRelease(f, data, res, noise.NewLaplace(rand.NewChaCha8([32]byte{3})))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || scale < res.Sigma || scale != noise.ScaleFor(res.Sigma, 1) {
		t.Fatalf("released %v with scale %v (σ %v)", out, scale, res.Sigma)
	}
}
