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

// SanitizeSeqs randomises every reading of every sequence: a known one is
// flipped with probability rho (Sanitize), and one marked missing (the
// value missing) becomes a fair coin (a fixed 0 flipped with probability
// 1/2), so the output does not show which values were missing
// (docs/math.md §6, "Missing values": the output is the flip of the true
// readings passed through per-step channels, no more revealing). In each
// sequence the known readings draw from src first, then the missing ones.
// src nil: crypto/rand.
func SanitizeSeqs(seqs [][]int, missing int, rho float64, src noise.Source) ([][]int, error) {
	out := make([][]int, len(seqs))
	for i, seq := range seqs {
		known := make([]int, 0, len(seq))
		for _, v := range seq {
			if v != missing {
				known = append(known, v)
			}
		}
		y, err := Sanitize(known, rho, rho, src)
		if err != nil {
			return nil, err
		}
		coins, err := Sanitize(make([]int, len(seq)-len(known)), 0.5, 0.5, src)
		if err != nil {
			return nil, err
		}
		out[i] = make([]int, len(seq))
		for j, v := range seq {
			if v == missing {
				out[i][j], coins = coins[0], coins[1:]
			} else {
				out[i][j], y = y[0], y[1:]
			}
		}
	}
	return out, nil
}
