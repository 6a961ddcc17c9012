package bdp

import (
	"fmt"
	"math"
	"strconv"

	"github.com/pufferfish-privacy/pufferfish/epsilon"
)

// RequireTheta is CheckTheta of a --theta flag, NaN when not given.
func RequireTheta(theta float64) error {
	if math.IsNaN(theta) {
		return fmt.Errorf("--theta is required (a probability in [0, 1])")
	}
	return CheckTheta(theta)
}

// ParseLength reads --length of puff local loss: a positive number of
// readings, or inf (0: every length).
func ParseLength(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("--length is required (a number of readings, or inf)")
	}
	if s == "inf" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--length %q: want a positive integer or inf", s)
	}
	return n, nil
}

// ParseLoss checks the flags of puff local loss (θ, the flip ρ, NaN when
// not given, the adversaries' knowledge and the length) and reads the last
// two (Knowledge, ParseLength).
func ParseLoss(theta, rho float64, knowledge, length string) (Knowledge, int, error) {
	if err := RequireTheta(theta); err != nil {
		return 0, 0, err
	}
	if math.IsNaN(rho) || rho < 0 || rho > 1 {
		return 0, 0, fmt.Errorf("--flip %v: must be a probability in [0, 1]", rho)
	}
	k, err := ParseKnowledge(knowledge)
	if err != nil {
		return 0, 0, fmt.Errorf("--knowledge: %w", err)
	}
	n, err := ParseLength(length)
	return k, n, err
}

// CheckAttack checks the flags of puff local attack's model adversary
// (AttackTable): every θ, ε, the length n and the target reading, 0 for
// the middle one, which it returns.
func CheckAttack(thetas []float64, eps float64, n, target int) (int, error) {
	if len(thetas) == 0 {
		return 0, fmt.Errorf("--theta is required")
	}
	for _, th := range thetas {
		if err := RequireTheta(th); err != nil {
			return 0, err
		}
	}
	if err := epsilon.Check(eps); err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("--length %d: must be ≥ 1", n)
	}
	if target == 0 {
		target = (n + 1) / 2
	}
	if target < 1 || target > n {
		return 0, fmt.Errorf("--target %d: must be in 1..%d", target, n)
	}
	return target, nil
}

// CheckSanitize checks the flags of puff local sanitize: the data file, and
// one of the flip ρ and ε (NaN when not given), ε checked (epsilon.Check).
func CheckSanitize(path string, rho, eps float64) error {
	if path == "" {
		return fmt.Errorf("--data FILE is required (the built-in example has four states)")
	}
	if math.IsNaN(rho) == math.IsNaN(eps) {
		return fmt.Errorf("give --flip R or --epsilon E, not both or neither")
	}
	if math.IsNaN(rho) {
		return epsilon.Check(eps)
	}
	return nil
}
