package release

import (
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// A tree node is drawn at σ·2·levels per bin (docs/math.md §4.12): the
// noise ReleaseNode adds is, draw for draw, what the noise package adds at
// that Lipschitz constant from the same source, and the report says so.
func TestReleaseNodeScale(t *testing.T) {
	class, err := markov.ParseClass(strings.NewReader(`{"states": ["a", "b", "c"], "chains": [{"transition": [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]], "initial": "any"}]}`), "class")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ComputeScale(class, 64, 1, mechanism.Exact)
	if err != nil {
		t.Fatal(err)
	}
	base := StreamBase(class, Options{Epsilon: 1, Method: mechanism.Exact}, s, Leakage{Why: "not computed"})
	sum := reading.NewSummary(class.States, nil)
	sum.Counts = []float64{3, 0, 5}
	sum.Sequences, sum.Observations, sum.MinLength, sum.MaxLength = 1, 8, 8, 8
	for _, levels := range []int{1, 3, 7} {
		r, err := ReleaseNode(base, sum, class, Options{Epsilon: 1, Method: mechanism.Exact, Query: "counts", Source: noise.Seeded(uint64(levels))}, levels)
		if err != nil {
			t.Fatal(err)
		}
		want, err := noise.NewLaplace(noise.Seeded(uint64(levels))).Release(sum.Counts, *s.Sigma, float64(2*levels))
		if err != nil {
			t.Fatal(err)
		}
		if r.Lipschitz != float64(2*levels) || r.PerBinScale != noise.ScaleFor(*s.Sigma, float64(2*levels)) {
			t.Fatalf("levels %d: Lipschitz %g, scale %g", levels, r.Lipschitz, r.PerBinScale)
		}
		for i, b := range r.Histogram {
			if b.Value != want[i] {
				t.Fatalf("levels %d bin %d: %g, want %g (the noise of σ·%d)", levels, i, b.Value, want[i], 2*levels)
			}
		}
	}
	if _, err := ReleaseNode(base, sum, class, Options{Epsilon: 1, Method: mechanism.Exact, Query: "relative"}, 2); err == nil {
		t.Fatal("a relative node was released")
	}
}
