package epsilon

import (
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
)

// Check is the one check of an ε that reached a command (a Flag already
// refused anything outside (0, checks.MaxEpsilon]): NaN, a Flag not given,
// says --epsilon is required.
func Check(eps float64) error {
	if math.IsNaN(eps) {
		return fmt.Errorf("--epsilon E is required (a decimal, a fraction such as 1/2, or ln(r))")
	}
	if err := checks.Epsilon(eps); err != nil || eps > checks.MaxEpsilon {
		return fmt.Errorf("--epsilon %v: want 0 < ε ≤ %d", eps, checks.MaxEpsilon)
	}
	return nil
}
