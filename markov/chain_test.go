package markov

import (
	"math"
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
