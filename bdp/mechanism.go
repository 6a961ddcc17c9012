package bdp

import (
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Mechanism is a per-reading channel applied independently to every
// reading: Emit[x][y] = P(output y | reading x), k rows (the chain's
// states) by m columns (output symbols).
type Mechanism struct {
	Emit [][]float64
}

// NewMechanism validates an emission matrix: finite, non-negative entries,
// rows summing to 1 within markov.RowTol. Errors name the row and column.
func NewMechanism(emit [][]float64) (Mechanism, error) {
	if len(emit) == 0 {
		return Mechanism{}, fmt.Errorf("bdp: emission matrix has no rows")
	}
	m := len(emit[0])
	if m == 0 {
		return Mechanism{}, fmt.Errorf("bdp: emission matrix has no columns")
	}
	out := make([][]float64, len(emit))
	for x, row := range emit {
		if len(row) != m {
			return Mechanism{}, fmt.Errorf("bdp: emission row %d has %d entries, row 0 has %d", x, len(row), m)
		}
		sum := 0.0
		for y, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1 {
				return Mechanism{}, fmt.Errorf("bdp: emission[%d][%d] = %v is not a probability", x, y, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > markov.RowTol {
			return Mechanism{}, fmt.Errorf("bdp: emission row %d sums to %v, not 1", x, sum)
		}
		out[x] = append([]float64(nil), row...)
	}
	return Mechanism{Emit: out}, nil
}

// RandomizedResponse flips a 0 with probability rho0 and a 1 with
// probability rho1.
func RandomizedResponse(rho0, rho1 float64) (Mechanism, error) {
	for _, r := range []float64{rho0, rho1} {
		if math.IsNaN(r) || r < 0 || r > 1 {
			return Mechanism{}, fmt.Errorf("bdp: flip probability %v is not in [0, 1]", r)
		}
	}
	return Mechanism{Emit: [][]float64{{1 - rho0, rho0}, {rho1, 1 - rho1}}}, nil
}

// LocalDP returns the mechanism's local DP level
// max over y, x, x' of ln E(x,y)/E(x',y) (outputs no reading can produce are
// skipped; +Inf when one reading can produce y and another cannot). It is
// the BDPL against K = all other readings when the chain gives every
// neighbourhood positive probability (TestDPFlipAgainstAllOthers).
func (m Mechanism) LocalDP() float64 {
	best := 0.0
	for y := range m.Emit[0] {
		hi, lo := 0.0, math.Inf(1)
		for x := range m.Emit {
			hi = max(hi, m.Emit[x][y])
			lo = min(lo, m.Emit[x][y])
		}
		if hi == 0 {
			continue
		}
		best = max(best, math.Log(hi)-math.Log(lo))
	}
	return best
}

// DPFlip is the randomized-response flip probability 1/(e^ε+1) that gives
// ε-local DP, i.e. BDPL ≤ ε against K = all other readings.
func DPFlip(eps float64) float64 { return 1 / (math.Exp(eps) + 1) }

// flipLevel is the local DP level ln((1−ρ)/ρ) of a symmetric flip ρ ≤ 1/2.
func flipLevel(rho float64) float64 { return math.Log1p(-rho) - math.Log(rho) }

// PublishedFlip is seed 002's flip probability ρ*(θ, ε) for the symmetric
// chain with switch probability θ (LOCAL_BDP.md):
//
//	ε_loc = 2·asinh( θ/(1−θ) · sinh(ε/2) ),   ρ* = 1/(1 + e^{ε_loc}).
//
// Adversary class covered: no side knowledge (K = ∅), any length; its leak
// to that adversary tends to ε as n → ∞ (PublishedLeak). It does NOT bound
// adversaries who know readings on both sides of the target (LOCAL_BDP.md;
// TestPublishedFlipExceedsAgainstKnownNeighbours). A chain with θ > 1/2 is
// the θ' = 1−θ chain with every other reading relabelled, which randomized
// response cannot tell apart, so θ is folded to min(θ, 1−θ).
func PublishedFlip(theta, eps float64) (float64, error) {
	if err := checkTheta(theta); err != nil {
		return 0, err
	}
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	t := min(theta, 1-theta)
	if t == 0 {
		return 0.5, nil // a deterministic chain: any other reading reveals x_i
	}
	loc := 2 * math.Asinh(t/(1-t)*math.Sinh(eps/2))
	return 1 / (1 + math.Exp(loc)), nil
}

// PublishedLeak is the BDPL of symmetric randomized response with flip
// rho ≤ 1/2 against the adversary with K = ∅ on an infinitely long
// symmetric chain, target far from both ends (LOCAL_BDP.md):
// 2·asinh( (1−θ)/θ · sinh(ε_loc/2) ) with ε_loc = ln((1−ρ)/ρ).
func PublishedLeak(theta, rho float64) float64 {
	t := min(theta, 1-theta)
	loc := flipLevel(rho)
	if loc == 0 {
		return 0
	}
	if t == 0 {
		return math.Inf(1)
	}
	return 2 * math.Asinh((1-t)/t*math.Sinh(loc/2))
}

// SymmetricChain is the binary chain with switch probability θ in both
// directions, started from (1/2, 1/2) (its stationary distribution).
func SymmetricChain(theta float64) (*markov.Chain, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	return markov.New([]string{"0", "1"}, [][]float64{{1 - theta, theta}, {theta, 1 - theta}}, markov.InitGiven, []float64{0.5, 0.5})
}

func checkTheta(theta float64) error {
	if math.IsNaN(theta) || theta < 0 || theta > 1 {
		return fmt.Errorf("bdp: theta = %v is not a probability in [0, 1]", theta)
	}
	return nil
}

func checkEps(eps float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= 0 {
		return fmt.Errorf("bdp: epsilon = %v must be positive and finite", eps)
	}
	return nil
}
