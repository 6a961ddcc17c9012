package hmm

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/epsilon"
)

// Epsilon is a privacy level with a certified enclosure of e^ε:
// Lo ≤ e^ε ≤ Hi, both rational (package epsilon). Lo == Hi exactly when ε
// was written ln(r) for a rational r.
type Epsilon = epsilon.Epsilon

// ParseEpsilon is epsilon.Parse: "ln(2)", "ln(3/2)", "ln(1.5)" (e^ε
// rational and exact) or a plain number "0.5", "1/3", 0 < ε ≤ 700.
func ParseEpsilon(s string) (Epsilon, error) { return epsilon.Parse(s) }

// RequireEpsilon is ParseEpsilon of puff verify check's --epsilon, which
// is required ("" is refused).
func RequireEpsilon(s string) (Epsilon, error) {
	if s == "" {
		return Epsilon{}, fmt.Errorf("--epsilon is required (e.g. 'ln(2)' or 0.7)")
	}
	eps, err := ParseEpsilon(s)
	if err != nil {
		return Epsilon{}, fmt.Errorf("--epsilon: %v", err)
	}
	return eps, nil
}

// Verdict is the outcome of Check.
type Verdict string

const (
	Holds     Verdict = "holds"
	Violated  Verdict = "violated"
	Undecided Verdict = "undecided" // the loss lies inside the enclosure of e^ε
)

// Check decides ε-Pufferfish privacy for every observation sequence of
// lengths 1..n and every secret pair: it computes the exact loss (Loss)
// and compares its ratio with e^ε — exactly when e^ε is rational, else
// with the enclosure (Undecided only if the ratio falls inside it).
func Check(m *Model, secrets []Secret, n int, eps Epsilon) (Verdict, Result, error) {
	return checkWith(unlimited, m, secrets, n, eps)
}

func checkWith(o Options, m *Model, secrets []Secret, n int, eps Epsilon) (Verdict, Result, error) {
	r, err := lossWith(o, m, secrets, n)
	if err != nil {
		return "", r, err
	}
	return verdictOf(r, eps), r, nil
}

// verdictOf compares an exact loss with e^ε.
func verdictOf(r Result, eps Epsilon) Verdict {
	switch {
	case r.Ratio == nil || r.Ratio.Cmp(eps.Hi) > 0:
		return Violated
	case r.Ratio.Cmp(eps.Lo) <= 0:
		return Holds
	}
	return Undecided
}
