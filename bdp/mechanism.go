package bdp

import (
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
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

// PublishedFlip is [CGSSY]'s flip probability ρ*(θ, ε) for the symmetric
// chain with switch probability θ ([CGSSY]; docs/math.md §6):
//
//	ε_loc = 2·asinh( θ/(1−θ) · sinh(ε/2) ),   ρ* = 1/(1 + e^{ε_loc}).
//
// Adversary class covered: no side knowledge (K = ∅), any length; its leak
// to that adversary tends to ε as n → ∞ (PublishedLeak). It does NOT bound
// adversaries who know readings on both sides of the target ([CGSSY]; docs/math.md §6;
// TestPublishedFlipExceedsAgainstKnownNeighbours). A chain with θ > 1/2 is
// the θ' = 1−θ chain with every other reading relabelled, which randomized
// response cannot tell apart, so θ is folded to min(θ, 1−θ).
func PublishedFlip(theta, eps float64) (float64, error) {
	if err := CheckTheta(theta); err != nil {
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
// symmetric chain, target far from both ends ([CGSSY]; docs/math.md §6):
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
	if err := CheckTheta(theta); err != nil {
		return nil, err
	}
	return markov.New([]string{"0", "1"}, [][]float64{{1 - theta, theta}, {theta, 1 - theta}}, markov.InitGiven, []float64{0.5, 0.5})
}

// CheckTheta is the one check of a switch probability θ.
func CheckTheta(theta float64) error {
	if err := checks.Probability("theta", theta); err != nil {
		return fmt.Errorf("bdp: %w", err)
	}
	return nil
}

func checkEps(eps float64) error {
	if err := checks.Epsilon(eps); err != nil {
		return fmt.Errorf("bdp: %w", err)
	}
	return nil
}

// Pair is a flip probability per reading value.
type Pair struct {
	Rho0, Rho1 float64
	// Expected is the expected flip probability π_0·ρ0 + π_1·ρ1 under the
	// chain's stationary distribution, and Leak the exact K = ∅ loss over
	// every length (an upper bound within 2e-12, from Limit).
	Expected, Leak float64
}

// PublishedFlipPair is the asymmetric version of ρ* for a two-state chain
// with positive transitions: the pair (ρ0, ρ1) ∈ [0, 1/2]² of least
// expected flip probability whose leak to the adversary with no side
// knowledge (K = ∅) is at most ε for every length. Adversary class covered:
// K = ∅ only, like ρ*.
//
// [CGSSY]'s code states the same optimisation but replaces the two
// constraint curves (all-zero and all-one outputs) by straight lines
// between their end points; here the constraint is the exact K = ∅ loss
// over every output (Limit), so the returned pair always satisfies it.
// The minimisation itself is numerical: ρ0 on a 1/64 grid refined by
// golden-section search, ρ1 by bisection for each ρ0 (the least ρ1 found
// with leak ≤ ε). For a symmetric chain it returns ρ* in both coordinates
// to within the search tolerance.
func PublishedFlipPair(ch *markov.Chain, eps float64) (Pair, error) {
	if err := checkEps(eps); err != nil {
		return Pair{}, err
	}
	if ch == nil || ch.K() != 2 {
		return Pair{}, fmt.Errorf("bdp: the flip pair is defined for two-state chains")
	}
	pi, err := ch.Stationary()
	if err != nil {
		return Pair{}, err
	}
	leak := func(r0, r1 float64) (float64, error) {
		m, err := RandomizedResponse(r0, r1)
		if err != nil {
			return 0, err
		}
		l, err := Limit(ch, m, NoneKnown)
		return l.Loss, err
	}
	// least ρ1 with leak ≤ ε for this ρ0 (ok = false when even ρ1 = 1/2
	// leaks more).
	least := func(r0 float64) (Pair, bool, error) {
		hiLeak, err := leak(r0, 0.5)
		if err != nil {
			return Pair{}, false, err
		}
		if hiLeak > eps {
			return Pair{}, false, nil
		}
		lo, hi := 0.0, 0.5
		for range 45 {
			mid := (lo + hi) / 2
			l, err := leak(r0, mid)
			if err != nil {
				return Pair{}, false, err
			}
			if l <= eps {
				hi, hiLeak = mid, l
			} else {
				lo = mid
			}
		}
		return Pair{Rho0: r0, Rho1: hi, Expected: pi[0]*r0 + pi[1]*hi, Leak: hiLeak}, true, nil
	}
	best := Pair{Expected: math.Inf(1)}
	bestI := -1
	const steps = 64
	for i := 0; i <= steps; i++ {
		p, ok, err := least(0.5 * float64(i) / steps)
		if err != nil {
			return Pair{}, err
		}
		if ok && p.Expected < best.Expected {
			best, bestI = p, i
		}
	}
	if bestI < 0 {
		return Pair{}, fmt.Errorf("bdp: no flip pair keeps the K = ∅ leak within ε = %v", eps)
	}
	// Golden-section refinement of ρ0 around the best grid point; every
	// candidate is feasible, so keeping the best seen is safe.
	a, b := 0.5*float64(max(bestI-1, 0))/steps, 0.5*float64(min(bestI+1, steps))/steps
	g := (math.Sqrt(5) - 1) / 2
	eval := func(r0 float64) float64 {
		p, ok, err := least(r0)
		if err != nil || !ok {
			return math.Inf(1)
		}
		if p.Expected < best.Expected {
			best = p
		}
		return p.Expected
	}
	c, d := b-g*(b-a), a+g*(b-a)
	fc, fd := eval(c), eval(d)
	for range 40 {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			fc = eval(c)
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			fd = eval(d)
		}
	}
	return best, nil
}
