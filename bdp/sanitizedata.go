package bdp

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/reading"
)

// Sanitized is data randomised by SanitizeData, with the flip used, the θ
// it was chosen for (NaN when the flip was given) and whom it protects
// against.
type Sanitized struct {
	Data       reading.Data
	Rho, Theta float64
	Label      string
}

// SanitizeData is puff local sanitize on data (named name): randomised
// response on its two states with the flip rho when it is given (not
// NaN), else with the flip of mechanism mech for ε at θ (or θ fitted to
// the data with fit: exactly one of them). Errors name the flags.
func SanitizeData(data *reading.Data, name string, rho, eps, theta float64, mech string, fit bool) (*Sanitized, error) {
	if len(data.States) != 2 {
		return nil, fmt.Errorf("%s: randomized response needs exactly two states, found %d (%s); name them with --states", name, len(data.States), strings.Join(data.States, ", "))
	}
	s := &Sanitized{Data: *data, Rho: rho, Theta: theta, Label: "flip given"}
	if math.IsNaN(rho) {
		if fit == !math.IsNaN(theta) {
			return nil, fmt.Errorf("with --epsilon give --theta T or --fit, not both or neither")
		}
		var err error
		if s.Rho, s.Theta, s.Label, err = SanitizeFlip(mech, theta, eps, fit, data.Runs()); errors.Is(err, ErrNoTransitions) {
			return nil, fmt.Errorf("%s: --fit: %w", name, err)
		} else if errors.Is(err, ErrFlipKind) {
			return nil, fmt.Errorf("--mechanism: %w", err)
		} else if err != nil {
			return nil, err
		}
	}
	if s.Rho < 0 || s.Rho > 0.5 {
		return nil, fmt.Errorf("--flip %v: must be in [0, 1/2] (a flip above 1/2 is a flip below it, relabelled)", s.Rho)
	}
	var err error
	s.Data.Seqs, err = SanitizeSeqs(data.Seqs, reading.Unknown, s.Rho, nil)
	return s, err
}
