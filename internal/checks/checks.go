// Package checks is the one place where the toolkit validates its privacy
// parameters and probabilities (as Google's differential-privacy library
// keeps its checks in one package), so every entry point accepts and
// refuses exactly the same values with the same words.
package checks

import (
	"fmt"
	"math"
	"math/big"
)

// MaxEpsilon is the largest ε any command accepts: e^ε stays finite in
// float64 (e^709.78 overflows), so likelihood-ratio bounds stay numbers.
const MaxEpsilon = 700

// Epsilon checks a privacy level: finite and > 0.
func Epsilon(eps float64) error {
	if !(eps > 0) || math.IsInf(eps, 1) {
		return fmt.Errorf("epsilon %v: want a finite number > 0", eps)
	}
	return nil
}

// EpsilonSpent checks a loss that may be zero: a recorded ε or a bound.
func EpsilonSpent(eps float64) error {
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return fmt.Errorf("epsilon %v: want a finite number ≥ 0", eps)
	}
	return nil
}

// Probability checks that p is a probability in [0, 1]; what names it.
func Probability(what string, p float64) error {
	if !(p >= 0 && p <= 1) {
		return fmt.Errorf("%s = %v is not a probability in [0, 1]", what, p)
	}
	return nil
}

// Delta checks the δ of an (ε, δ) guarantee: a rational in [0, 1).
func Delta(delta *big.Rat) error {
	if delta == nil || delta.Sign() < 0 || delta.Cmp(big.NewRat(1, 1)) >= 0 {
		return fmt.Errorf("δ = %v: want a number in [0, 1)", delta)
	}
	return nil
}
