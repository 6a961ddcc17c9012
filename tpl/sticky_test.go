package tpl

import (
	"fmt"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/hiprec"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

// StickyCases are two-state chains [[1−a, a], [c, 1−c]] with stays
// 1 − 10⁻⁴ … 1 − 10⁻¹², symmetric and not, where the textbook fixed point
// of [CYXX18] Thm 10 and an LU solve for π cancel (issue: a calibrated
// scale 7·10⁻⁶ below a concrete output's).
var stickyCases = [][2]float64{
	{1e-9, 1e-9}, {1e-6, 3e-6}, {1e-4, 1e-4}, {1e-4, 2.5e-4}, {1e-6, 1e-6},
	{1e-8, 1e-8}, {1e-8, 5e-8}, {1e-10, 1e-10}, {3e-10, 1e-10}, {1e-12, 1e-12}, {1e-12, 4e-12},
}

// TestStickyNeverBelowConcreteOutput: at ε = 0.01 … 10 the calibrated
// scale of an unbounded stationary stream is never below the scale at
// which one concrete output (computed in 256-bit arithmetic, package
// hiprec) loses ε, and within 10⁻⁷ of it (the bound is exact for two
// states, docs/math.md §8.3), so the test bites.
func TestStickyNeverBelowConcreteOutput(t *testing.T) {
	for _, c := range stickyCases {
		for _, eps := range []float64{0.01, 0.1, 1, 10} {
			t.Run(fmt.Sprintf("a=%g,c=%g,eps=%g", c[0], c[1], eps), func(t *testing.T) {
				ch, err := markov.New(nil, [][]float64{{1 - c[0], c[0]}, {c[1], 1 - c[1]}}, markov.InitStationary, nil)
				if err != nil {
					t.Fatal(err)
				}
				cl, _ := markov.NewClass([]string{"0", "1"}, ch)
				b, _, err := Calibrate(cl, 0, eps, nil)
				if err != nil {
					t.Fatal(err)
				}
				if hiprec.Exceeds(c[0], c[1], b, eps) {
					t.Fatalf("calibrated b = %.12g: a concrete output loses more than ε", b)
				}
				if !hiprec.Exceeds(c[0], c[1], b*(1-1e-7), eps) {
					t.Errorf("calibrated b = %.12g: more than 10⁻⁷ above the concrete output's scale", b)
				}
			})
		}
	}
}
