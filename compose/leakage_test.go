package compose

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/record"
	"github.com/pufferfish-privacy/pufferfish/tpl"
	"github.com/pufferfish-privacy/pufferfish/tpl/pairwise"
)

// The dp-leakage rule against enumeration: an MQM release of the whole
// series' histogram and a release of windowed histograms recorded as a
// generic Pufferfish release (no other rule composes them), at random
// noise multipliers: the exact joint loss (every sequence, grid supremum)
// is within the rule's bound, on stationary, fixed and "any" starts.
func TestLeakageRuleByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 6))
	for trial := range 12 {
		k := 2 + trial%2
		T := 6
		if k == 3 {
			T = 4
		}
		P := make([][]float64, k)
		for i := range P {
			P[i] = make([]float64, k)
			sum := 0.0
			for j := range P[i] {
				P[i][j] = 0.1 + rng.Float64()
				sum += P[i][j]
			}
			for j := range P[i] {
				P[i][j] /= sum
			}
		}
		var ch *markov.Chain
		var starts [][]float64
		switch trial % 3 {
		case 0:
			ch, _ = markov.New(nil, P, markov.InitStationary, nil)
			pi, _ := ch.Initial()
			starts = [][]float64{pi}
		case 1:
			q := make([]float64, k)
			q[k-1] = 1
			ch, _ = markov.New(nil, P, markov.InitGiven, q)
			starts = [][]float64{q}
		default:
			ch, _ = markov.New(nil, P, markov.InitAny, nil)
			a, b := make([]float64, k), make([]float64, k)
			a[0], b[k-1] = 1, 0.5
			b[0] = 0.5
			starts = [][]float64{a, b}
		}
		class, _ := markov.NewClass(ch.States, ch)
		s1, s2 := 1+4*rng.Float64(), 1+4*rng.Float64()
		seg := []record.Segment{{Series: "a", First: 1, Last: T, Readings: T}}
		recs := []*record.Release{
			{Mechanism: mechanism.Exact, Epsilon: 1, Class: class.Hash(), Query: "counts", Segments: seg, Sigma: s1},
			{Mechanism: mechanism.Pufferfish, Epsilon: 1, Class: class.Hash(), Query: "counts", Segments: seg, Sigma: s2},
		}
		v, err := Records(class, recs)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if v.Rule != LeakageRule {
			t.Fatalf("trial %d: rule %s, want %s", trial, v.Rule, LeakageRule)
		}
		all := []int{0, 1, 2, 3, 4, 5}[:T]
		rels := append([]brute.Release{brute.Counts(k, all, 2*s1)}, brute.Windows(k, T, []int{2, 2, 2}[:T/2], nil, []float64{2 * s2})...)
		for _, q := range starts {
			loss, _, _, _, err := brute.Loss(brute.Chain{Q: q, P: P, T: T}, rels)
			if err != nil {
				t.Fatal(err)
			}
			if loss > v.Float()+1e-9 {
				t.Errorf("trial %d (%s, start %v, σ %.3g and %.3g): joint loss %.6g > the rule's %.6g", trial, fmt.Sprint(ch.Init), q, s1, s2, loss, v.Float())
			}
		}
	}
	// without recorded σ the rule does not apply, and the answer is no rule
	class, _ := markov.NewClass([]string{"0", "1"}, mustChainT(t))
	seg := []record.Segment{{Series: "a", First: 1, Last: 4, Readings: 4}}
	_, err := Records(class, []*record.Release{
		{Mechanism: mechanism.Exact, Epsilon: 1, Class: class.Hash(), Segments: seg},
		{Mechanism: mechanism.Pufferfish, Epsilon: 1, Class: class.Hash(), Segments: seg, Sigma: 2},
	})
	if err == nil {
		t.Fatal("a record without σ was composed by the leakage rule")
	}
}

func mustChainT(t *testing.T) *markov.Chain {
	ch, err := markov.New([]string{"0", "1"}, [][]float64{{0.8, 0.2}, {0.1, 0.9}}, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// The dp-leakage rule takes the pairwise certificate (docs/math.md §8.11)
// where it is the smaller bound: on the sticky 3-state chain two releases
// compose to less than the scalar recursion gives, and the exact joint
// loss (every sequence) stays within it; on 20 banded levels (full support), past the
// scalar recursion's 16 states, the rule now applies (it refused before)
// and an explicit output sequence (pairwise.LowerBound) shows the bound
// is not below the true loss at that scale.
func TestLeakageRulePairwise(t *testing.T) {
	sticky := [][]float64{{0.8, 0.15, 0.05}, {0.1, 0.8, 0.1}, {0.05, 0.15, 0.8}}
	ch, _ := markov.New(nil, sticky, markov.InitAny, nil)
	class, _ := markov.NewClass(ch.States, ch)
	T := 4
	seg := []record.Segment{{Series: "a", First: 1, Last: T, Readings: T}}
	s1, s2 := 20.0, 30.0
	recs := []*record.Release{
		{Mechanism: mechanism.Pufferfish, Epsilon: 1, Class: class.Hash(), Query: "counts", Segments: seg, Sigma: s1},
		{Mechanism: mechanism.Pufferfish, Epsilon: 1, Class: class.Hash(), Query: "counts", Segments: seg, Sigma: s2},
	}
	v, err := Records(class, recs)
	if err != nil || v.Rule != LeakageRule || !strings.Contains(v.Theorem, "pairwise") {
		t.Fatalf("%v %+v", err, v)
	}
	b := 2 / (1/s1 + 1/s2)
	scalar, err := tpl.Loss(class.AnyStart(), 0, b, nil)
	if err != nil || !(v.Float() < scalar.Loss) {
		t.Fatalf("the rule's %v is not below the scalar recursion's %v (%v)", v.Float(), scalar.Loss, err)
	}
	rels := []brute.Release{brute.Counts(3, []int{0, 1, 2, 3}, 2*s1)}
	rels = append(rels, brute.Windows(3, T, []int{2, 2}, nil, []float64{2 * s2})...)
	for _, q := range [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1.0 / 3, 1.0 / 3, 1.0 / 3}} {
		loss, _, _, _, err := brute.Loss(brute.Chain{Q: q, P: sticky, T: T}, rels)
		if err != nil {
			t.Fatal(err)
		}
		if loss > v.Float()+1e-9 {
			t.Errorf("start %v: joint loss %.6g > the rule's %.6g", q, loss, v.Float())
		}
	}

	const k = 20
	P := make([][]float64, k)
	for i := range P {
		P[i] = make([]float64, k)
		for j := range P[i] {
			P[i][j] = 0.01 // full support: a zero makes the leakage infinite
		}
		for j := max(0, i-1); j <= min(k-1, i+1); j++ {
			P[i][j] = 1
		}
		P[i][i] = 6
		sum := 0.0
		for _, x := range P[i] {
			sum += x
		}
		for j := range P[i] {
			P[i][j] /= sum
		}
	}
	ch, _ = markov.New(nil, P, markov.InitStationary, nil)
	class, _ = markov.NewClass(ch.States, ch)
	recs = []*record.Release{
		{Mechanism: mechanism.Pufferfish, Epsilon: 1, Class: class.Hash(), Query: "counts", Segments: seg, Sigma: 400},
		{Mechanism: mechanism.Pufferfish, Epsilon: 1, Class: class.Hash(), Query: "counts", Segments: seg, Sigma: 400},
	}
	v, err = Records(class, recs)
	if err != nil || v.Rule != LeakageRule {
		t.Fatalf("20 levels: %v %+v", err, v)
	}
	lo, err := pairwise.LowerBound(context.Background(), P, v.Float(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if b := 2.0 / (2.0 / 400); lo > b*(1+1e-9) {
		t.Fatalf("20 levels: an explicit output loses %v at scale %v > %v: the rule's bound is below the true loss", v.Float(), lo, b)
	}
}

// The leakage rule stops with the context (a ledger spend whose client
// left or whose server stops), answers with the context's error, and
// remembers nothing from the cancelled computation: the same question
// afterwards gets the full answer.
func TestLeakageRuleStopsWithTheContext(t *testing.T) {
	const k = 20
	P := make([][]float64, k)
	for i := range P {
		P[i] = make([]float64, k)
		for j := range P[i] {
			P[i][j] = 0.01
		}
		P[i][i] = 6
		sum := 0.0
		for _, x := range P[i] {
			sum += x
		}
		for j := range P[i] {
			P[i][j] /= sum
		}
	}
	ch, _ := markov.New(nil, P, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	seg := []record.Segment{{Series: "a", First: 1, Last: 4, Readings: 4}}
	recs := []*record.Release{
		{Mechanism: mechanism.Pufferfish, Epsilon: 1, Class: class.Hash(), Query: "counts", Segments: seg, Sigma: 401},
		{Mechanism: mechanism.Pufferfish, Epsilon: 1, Class: class.Hash(), Query: "counts", Segments: seg, Sigma: 401},
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RecordsContext(ctx, class, recs); err != context.Canceled {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
	v, err := RecordsContext(context.Background(), class, recs)
	if err != nil || v.Rule != LeakageRule {
		t.Fatalf("afterwards: %v %+v", err, v)
	}
}
