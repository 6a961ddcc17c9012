package bdp

import (
	"math"
	"testing"
)

// docs/math.md §6, "Missing values": puff local sanitize writes a fair coin
// for a reading whose value is missing. By enumeration of the definition
// (every target, every known set, every output, n = 5), with missingness
// that depends on the value, the BDP loss of that output is at most the
// loss of the plain flip of the true readings, for the dp, published and
// certified flips; writing NA instead (the output then shows which values
// were missing) loses more — infinitely when one value is never missing —
// so the check can tell the two apart.
func TestAuditNASanitizeCoin(t *testing.T) {
	const n = 5
	for _, theta := range []float64{0.1, 0.3} {
		P := [][]float64{{1 - theta, theta}, {theta, 1 - theta}}
		q := []float64{0.5, 0.5}
		for _, eps := range []float64{0.5, 2} {
			for _, kind := range FlipKinds {
				rho, err := SymmetricFlip(kind, theta, eps)
				if err != nil {
					t.Fatal(err)
				}
				flip := newJoint(P, q, [][]float64{{1 - rho, rho}, {rho, 1 - rho}}, n).worst(AnyKnown)
				for _, pm := range [][2]float64{{0, 0.7}, {0.3, 0.1}, {1, 0}, {0.5, 0.5}, {0.9, 0.95}} {
					coin := make([][]float64, 2)
					kept := make([][]float64, 2) // outputs 0, 1, NA
					for x := range 2 {
						keep := (1-pm[x])*(1-rho) + pm[x]/2
						coin[x] = []float64{keep, 1 - keep}
						kept[x] = []float64{(1 - pm[x]) * (1 - rho), (1 - pm[x]) * rho, pm[x]}
						if x == 1 {
							coin[x][0], coin[x][1] = coin[x][1], coin[x][0]
							kept[x][0], kept[x][1] = kept[x][1], kept[x][0]
						}
					}
					got := newJoint(P, q, coin, n).worst(AnyKnown)
					if math.IsNaN(got) || got > flip+1e-12 {
						t.Errorf("θ %g ε %g %s (flip %.6g), missing %v: a fair coin for NA loses %.9g, the flip of the true readings %.9g",
							theta, eps, kind, rho, pm, got, flip)
					}
					if pm[0] != pm[1] {
						na := newJoint(P, q, kept, n).worst(AnyKnown)
						if !(na > flip+1e-3) {
							t.Errorf("θ %g ε %g %s, missing %v: writing NA loses %.6g, not more than the flip's %.6g: the check cannot tell", theta, eps, kind, pm, na, flip)
						}
					}
				}
			}
		}
	}
}
