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
