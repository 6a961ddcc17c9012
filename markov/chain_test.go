package markov

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// A reducible chain with one closed class has a unique stationary
// distribution; two closed classes do not.
func TestStationaryOfReducibleChains(t *testing.T) {
	ch, err := New(nil, [][]float64{{0.5, 0.5}, {0, 1}}, InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	pi, err := ch.Stationary()
	if err != nil || pi[0] != 0 || pi[1] != 1 {
		t.Fatalf("π = %v, %v; want (0, 1)", pi, err)
	}
	ch3, _ := New(nil, [][]float64{{0.2, 0.3, 0.5}, {0, 0.4, 0.6}, {0, 0.9, 0.1}}, InitStationary, nil)
	pi, err = ch3.Stationary()
	// closed class {1, 2}: π ∝ (0.9, 0.6)
	if err != nil || pi[0] != 0 || math.Abs(pi[1]-0.6) > 1e-12 || math.Abs(pi[2]-0.4) > 1e-12 {
		t.Fatalf("π = %v, %v; want (0, 0.6, 0.4)", pi, err)
	}
	two, _ := New(nil, [][]float64{{1, 0}, {0, 1}}, InitStationary, nil)
	if _, err := two.Stationary(); err == nil || !strings.Contains(err.Error(), "2 closed classes") {
		t.Fatalf("two closed classes: %v", err)
	}
}

// A class survives MarshalJSON → ParseClass, and its hash depends on its
// content only.
func TestClassRoundTripAndHash(t *testing.T) {
	for _, in := range []string{
		`{"states": ["a", "b"], "chains": [{"transition": [[0.9, 0.1], [0.2, 0.8]], "initial": [0.25, 0.75]}, {"transition": [[0.5, 0.5], [0.5, 0.5]], "initial": "any"}]}`,
		`{"binary_interval": {"lo": 0.1, "hi": 0.9, "step": 0.2, "initial": "stationary"}}`,
	} {
		c, err := ParseClass(strings.NewReader(in), "in")
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		c2, err := ParseClass(strings.NewReader(string(b)), "out")
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if c.Hash() != c2.Hash() || len(c2.Chains) != len(c.Chains) || !strings.HasPrefix(c.Hash(), "sha256:") {
			t.Fatalf("round trip changed the class: %s vs %s", c.Hash(), c2.Hash())
		}
	}
	a, _ := ParseClass(strings.NewReader(`{"chains": [{"transition": [[0.9, 0.1], [0.2, 0.8]]}]}`), "a")
	b, _ := ParseClass(strings.NewReader(`{"chains": [{"transition": [[0.9, 0.1], [0.3, 0.7]]}]}`), "b")
	if a.Hash() == b.Hash() {
		t.Fatal("different classes, same hash")
	}
}

// Irreducible (two searches from state 0) agrees with the reachability
// closure (every state reaches every state) on random sparse chains, many
// of them reducible, and Ergodic's gaps are the chain's.
func TestIrreducibleAgreesWithReachable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 27))
	counts := [2]int{}
	for trial := range 3000 {
		k := 1 + rng.IntN(8)
		P := make([][]float64, k)
		for x := range P {
			P[x] = make([]float64, k)
			P[x][rng.IntN(k)] = 1
			for y := range P[x] {
				if rng.IntN(4) == 0 {
					P[x][y] += rng.Float64()
				}
			}
			s := 0.0
			for _, v := range P[x] {
				s += v
			}
			for y := range P[x] {
				P[x][y] /= s
			}
		}
		ch, err := New(nil, P, InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := true
		for _, row := range ch.Reachable() {
			for _, r := range row {
				want = want && r
			}
		}
		if got := ch.Irreducible(); got != want {
			t.Fatalf("trial %d: Irreducible %v, reachability %v for %v", trial, got, want, P)
		}
		if want {
			counts[1]++
		} else {
			counts[0]++
		}
		e, err := ch.Ergodic()
		if (err == nil) != (ch.CheckErgodic() == nil) {
			t.Fatalf("trial %d: Ergodic %v, CheckErgodic %v", trial, err, ch.CheckErgodic())
		}
		if err != nil {
			continue
		}
		g1, err1 := e.PPStarGap()
		g2, err2 := ch.PPStarGap()
		rev, _ := ch.Reversible()
		if g1 != g2 || (err1 == nil) != (err2 == nil) || rev != e.Reversible {
			t.Fatalf("trial %d: PPStarGap %v %v, chain's %v %v", trial, g1, err1, g2, err2)
		}
		g1, err1 = e.Eigengap()
		g2, err2 = ch.Eigengap()
		if g1 != g2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("trial %d: Eigengap %v %v, chain's %v %v", trial, g1, err1, g2, err2)
		}
	}
	if counts[0] < 100 || counts[1] < 100 {
		t.Fatalf("too few of one kind: %v reducible / irreducible", counts)
	}
}
