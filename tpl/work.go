package tpl

import (
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Work estimates, up front and from the class's shape alone, the
// operations (about a nanosecond each on one core, measured on dense
// chains of 100–300 states) CalibrateContext(class, T, …) spends, so a
// caller can refuse a calibration over its budget before any of it runs:
//
//   - a kernel (P, its time reversal, a given start's column orders) is
//     built once per chain: k² ordered pairs, each a sort of k columns,
//     ≈ 16·k³·log₂k, and held (≈ 20·k³ bytes);
//   - each of the bisection's ≈ 45 evaluations solves the fixed points of
//     every pair's prefixes (T = 0: ≈ 8·k³ per kernel) or runs the
//     recursion over T steps (≈ T·k³ at worst; a given start builds a
//     kernel at every step, and its unbounded bound runs to the horizon of
//     LeakageSup, max(100, 2·10⁸/k³) steps);
//   - a given start's unbounded bound first looks for a positive power of
//     P: up to k − 1 products of k³ with a positive diagonal, Wielandt's
//     (k − 1)² + 1 without.
func Work(class *markov.Class, T int) float64 {
	if class == nil {
		return 0
	}
	const evals = 45
	total := 0.0
	for _, ch := range class.Chains {
		if ch == nil {
			continue
		}
		k := float64(ch.K())
		k3 := k * k * k
		build := 16 * k3 * math.Log2(k+1)
		sup := 8 * k3
		steps := func(perStep float64) float64 { return evals * float64(T) * perStep }
		switch ch.Init {
		case markov.InitStationary:
			total += 2*build + k3 // P, P* and π (GTH)
			if T == 0 {
				total += evals * 2 * sup
			} else {
				total += steps(k3)
			}
		case markov.InitAny:
			total += build + 40*k3 // P and Birkhoff's coefficient
			if T == 0 {
				total += evals * sup
			} else {
				total += steps(k3)
			}
		default: // a given start
			total += 2 * build // P and the column orders
			if T > 0 {
				total += steps(8 * k3)
				continue
			}
			total += build + k3 // P* and π
			m := (k-1)*(k-1) + 1
			if positiveDiagonal(ch.P) {
				m = max(1, k-1)
			}
			total += m * k3
			horizon := max(100, math.Floor(maxHorizonWork/k3))
			total += evals * (2*sup + horizon*8*k3)
		}
	}
	return total
}

func positiveDiagonal(P [][]float64) bool {
	for i := range P {
		if !(P[i][i] > 0) {
			return false
		}
	}
	return true
}
