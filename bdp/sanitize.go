package bdp

import (
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/noise"
)

// Sanitize applies randomized response to binary readings x (values 0 and
// 1): a 0 is flipped with probability rho0 and a 1 with probability rho1,
// independently, with randomness from src (nil: crypto/rand via
// noise.Secure). This is the local step a device runs before upload.
//
// Each flip compares a uniform 53-bit integer u with ⌈ρ·2⁵³⌉, so a reading
// is flipped with probability ⌈ρ·2⁵³⌉/2⁵³: never less than ρ (at most
// 2⁻⁵³ more), and exactly 1/2 for ρ = 1/2. Flipping more often never
// weakens the guarantee for ρ ≤ 1/2 (see CertifiedFlip), and no floating-
// point arithmetic touches the random bits.
func Sanitize(x []int, rho0, rho1 float64, src noise.Source) ([]int, error) {
	for _, r := range []float64{rho0, rho1} {
		if math.IsNaN(r) || r < 0 || r > 0.5 {
			return nil, fmt.Errorf("bdp: flip probability %v is not in [0, 1/2]", r)
		}
	}
	if src == nil {
		src = noise.Secure()
	}
	th := [2]uint64{uint64(math.Ceil(rho0 * 0x1p53)), uint64(math.Ceil(rho1 * 0x1p53))}
	y := make([]int, len(x))
	for t, v := range x {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("bdp: reading %d at position %d is not 0 or 1", v, t+1)
		}
		y[t] = v
		if src.Uint64()>>11 < th[v] {
			y[t] = 1 - v
		}
	}
	return y, nil
}
