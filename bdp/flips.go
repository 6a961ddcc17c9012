package bdp

import (
	"errors"
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// FlipKind names a way of choosing the flip probability for ε.
type FlipKind string

const (
	// DPFlipKind is plain local DP, 1/(e^ε+1).
	DPFlipKind FlipKind = "dp"
	// PublishedFlipKind is [CGSSY]'s ρ*(θ, ε).
	PublishedFlipKind FlipKind = "published"
	// CertifiedFlipKind is the least flip whose exact worst case over every
	// adversary and every length is ≤ ε.
	CertifiedFlipKind FlipKind = "certified"
)

// FlipKinds lists the kinds in the order reports show them.
var FlipKinds = []FlipKind{DPFlipKind, PublishedFlipKind, CertifiedFlipKind}

// Covers says which adversaries a flip kind protects against.
func (k FlipKind) Covers() string {
	switch k {
	case DPFlipKind:
		return "adversaries who know every other reading (plain local DP); correlated neighbours leak more"
	case PublishedFlipKind:
		return "adversaries who know no reading (K = ∅), any length; not those who know readings on both sides of the target"
	case CertifiedFlipKind:
		return "every adversary A(i, K): any target, any set of known readings, any length"
	}
	return ""
}

// ParseFlipKind reads dp, published or certified.
func ParseFlipKind(s string) (FlipKind, error) {
	for _, k := range FlipKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("bdp: flip %q: %w", s, ErrFlipKind)
}

// ErrFlipKind is wrapped by the error of a flip kind ParseFlipKind does
// not know; ErrNoTransitions is EstimateTheta's error for runs without a
// pair of consecutive readings.
var (
	ErrFlipKind      = errors.New("want dp, published or certified")
	ErrNoTransitions = errors.New("bdp: estimating θ needs at least one pair of consecutive readings")
)

// SanitizeFlip is the flip local sanitize applies: of the kind (dp,
// published or certified, as ParseFlipKind reads it) for ε on the
// symmetric chain with switch probability theta, or with fit on one
// estimated from runs (EstimateTheta; the estimate is not private). It
// returns the flip, the θ it is for and the adversaries it covers
// (FlipKind.Covers).
func SanitizeFlip(kind string, theta, eps float64, fit bool, runs [][]int) (rho, th float64, covers string, err error) {
	if fit {
		if theta, err = EstimateTheta(runs); err != nil {
			return 0, theta, "", err
		}
	}
	if err := CheckTheta(theta); err != nil {
		return 0, theta, "", err
	}
	k, err := ParseFlipKind(kind)
	if err != nil {
		return 0, theta, "", err
	}
	rho, err = SymmetricFlip(k, theta, eps)
	return rho, theta, k.Covers(), err
}

// SymmetricFlip is the flip of the kind for the symmetric chain with
// switch probability θ at ε. Every error is returned: a flip of 0 must
// never stand in for a failed computation (it would publish raw readings).
func SymmetricFlip(kind FlipKind, theta, eps float64) (float64, error) {
	if err := CheckTheta(theta); err != nil {
		return 0, err
	}
	if err := checkEps(eps); err != nil {
		return 0, err
	}
	switch kind {
	case DPFlipKind:
		return DPFlip(eps), nil
	case PublishedFlipKind:
		return PublishedFlip(theta, eps)
	case CertifiedFlipKind:
		c, err := CertifiedFlipSymmetric(theta, eps)
		return c.Flip, err
	}
	return 0, fmt.Errorf("bdp: flip %q: want dp, published or certified", kind)
}

// ChainFlip is the flip pair (ρ0, ρ1) of the kind for a fitted, possibly
// asymmetric two-state chain at ε (every length for certified).
func ChainFlip(kind FlipKind, ch *markov.Chain, eps float64) (Pair, error) {
	if err := checkEps(eps); err != nil {
		return Pair{}, err
	}
	switch kind {
	case DPFlipKind:
		r := DPFlip(eps)
		return Pair{Rho0: r, Rho1: r}, nil
	case PublishedFlipKind:
		return PublishedFlipPair(ch, eps)
	case CertifiedFlipKind:
		c, err := CertifiedFlip(ch, eps, 0)
		return Pair{Rho0: c.Flip, Rho1: c.Flip}, err
	}
	return Pair{}, fmt.Errorf("bdp: flip %q: want dp, published or certified", kind)
}

// EstimateTheta estimates the switch probability θ of a symmetric chain
// from runs of consecutive readings: switches / transitions. Only pairs of
// readings one step apart count (never across missing readings). The
// estimate is computed from raw readings and is itself not private.
func EstimateTheta(runs [][]int) (float64, error) {
	switches, steps := 0, 0
	for _, seq := range runs {
		for t := 1; t < len(seq); t++ {
			steps++
			if seq[t] != seq[t-1] {
				switches++
			}
		}
	}
	if steps == 0 {
		return 0, ErrNoTransitions
	}
	return float64(switches) / float64(steps), nil
}
