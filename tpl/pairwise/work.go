package pairwise

import "github.com/pufferfish-privacy/pufferfish/markov"

// sweeps is the number of certificate-map sweeps an unbounded calibration
// takes on slowly mixing chains (measured on the UCI house, 51 levels:
// about 600 per side, closed form), the basis of Work's estimate.
const sweeps = 1200

// DefaultMaxWork is the estimated work (Work) past which callers skip the
// bound by default: about 30 s of one core; the UCI house (51 dense
// levels) estimates 3.9·10⁹, a banded 201-level chain less.
const DefaultMaxWork = 3e10

// Work estimates the multiply-adds of the pairwise calibration of class,
// from its sparsity alone, before any work: per sweep, every ordered pair
// of rows costs |supp e|·|supp q| (docs/math.md (8.11)) plus the
// closure's k³, times the sweeps of a slowly mixing chain. A single Loss
// at a given scale costs less.
func Work(class *markov.Class) float64 {
	w := 0.0
	for _, ch := range class.Chains {
		k := ch.K()
		width := make([]float64, k)
		for a, row := range ch.P {
			lo, hi := k, 0
			for j, v := range row {
				if v > 0 {
					lo, hi = min(lo, j), j+1
				}
			}
			width[a] = float64(max(hi-lo, 0))
		}
		sum := 0.0
		for _, x := range width {
			sum += x
		}
		// Σ_{a≠b} width_a·width_b/2: e has about half a row's support.
		sweep := (sum*sum)/2 + float64(k*k*k)
		w += sweep * sweeps
	}
	return w
}

// CheapLP reports whether the linear programs of the pairwise bound
// (docs/math.md §8.10) are cheap enough to run in a release: at most
// lpMaxStates states and every row's support within lpMaxWidth columns.
// The fixed-point search applies them to all k² pairs in every one of
// hundreds of sweeps: a banded 51-level chain took 474 s (BENCHMARKS.md),
// dense rows (a fitted chain with additive smoothing) about 1 s per
// sweep; the closed-form plan is used alone there.
func CheapLP(class *markov.Class) bool {
	if len(class.States) > lpMaxStates {
		return false
	}
	for _, ch := range class.Chains {
		for _, row := range ch.P {
			lo, hi := len(row), 0
			for j, v := range row {
				if v > 0 {
					lo, hi = min(lo, j), j+1
				}
			}
			if hi-lo > lpMaxWidth {
				return false
			}
		}
	}
	return true
}

const (
	lpMaxStates = 16
	lpMaxWidth  = 12
)
