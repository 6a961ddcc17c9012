package pairwise

import (
	"context"
	"fmt"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/hiprec"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

// TestStickyNeverBelowConcreteOutput: the scale every release path takes
// (pairwise.Calibrate: the smaller of the certificates) on two-state chains
// of stay 1 − 10⁻⁴ … 1 − 10⁻¹² is never below the scale at which one
// concrete output, computed in 256-bit arithmetic, loses ε (docs/math.md
// §8.9); the audit found 7·10⁻⁶ below it.
func TestStickyNeverBelowConcreteOutput(t *testing.T) {
	for _, c := range [][2]float64{{1e-9, 1e-9}, {1e-6, 3e-6}, {1e-4, 2.5e-4}, {1e-12, 4e-12}} {
		for _, eps := range []float64{0.01, 1, 10} {
			t.Run(fmt.Sprintf("a=%g,c=%g,eps=%g", c[0], c[1], eps), func(t *testing.T) {
				ch, err := markov.New(nil, [][]float64{{1 - c[0], c[0]}, {c[1], 1 - c[1]}}, markov.InitStationary, nil)
				if err != nil {
					t.Fatal(err)
				}
				cl, _ := markov.NewClass([]string{"0", "1"}, ch)
				b, _, err := Calibrate(context.Background(), cl, 0, eps, nil)
				if err != nil {
					t.Fatal(err)
				}
				if hiprec.Exceeds(c[0], c[1], b, eps) {
					t.Fatalf("calibrated b = %.12g: a concrete output loses more than ε", b)
				}
			})
		}
	}
}
