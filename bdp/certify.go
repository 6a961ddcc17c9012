package bdp

import (
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// certifySlack is subtracted from ε before comparing with a finite-length
// worst case, so that rounding in the loss never certifies a flip whose
// exact loss exceeds ε.
const certifySlack = 1e-12

// Certified is the result of CertifiedFlip.
type Certified struct {
	Flip float64 // least flip probability found with worst case ≤ ε
	// Below is a flip probability a little smaller than Flip whose worst
	// case exceeds ε (0 when even a flip of 0 satisfies ε): the search
	// brackets the exact threshold in (Below, Flip].
	Below float64
	Worst Loss // the worst case at Flip
}

// CertifiedFlip returns the least symmetric flip probability ρ ∈ [0, 1/2]
// for which randomized response on ch has worst-case BDPL ≤ ε over every
// adversary A(i, K): for length n, or for every length when n = 0 (Limit).
//
// The search is a bisection, correct because the worst case is
// non-increasing in ρ on [0, 1/2]: for ρ ≤ ρ' ≤ 1/2, RR(ρ') is RR(ρ)
// followed by an independent flip with probability s = (ρ'−ρ)/(1−2ρ) of
// every output, and post-processing each output through a fixed channel
// turns every likelihood P(y'|·) into a mixture Σ_y P(y|·)Q(y'|y), whose
// ratio under two hypotheses is a mediant of ratios and cannot exceed their
// maximum (TestWorstMonotoneInFlip checks it). At ρ = 1/2 the output is
// independent of the readings and the loss is 0.
func CertifiedFlip(ch *markov.Chain, eps float64, n int) (Certified, error) {
	if err := checkEps(eps); err != nil {
		return Certified{}, err
	}
	if n < 0 {
		return Certified{}, fmt.Errorf("bdp: length %d must be positive (or 0 for every length)", n)
	}
	worst := func(rho float64) (Loss, error) {
		mech, err := RandomizedResponse(rho, rho)
		if err != nil {
			return Loss{}, err
		}
		if n == 0 {
			return Limit(ch, mech, AnyKnown)
		}
		l, err := Worst(ch, mech, n, AnyKnown)
		l.Loss += certifySlack
		return l, err
	}
	hiL, err := worst(0.5)
	if err != nil {
		return Certified{}, err
	}
	if loL, err := worst(0); err != nil {
		return Certified{}, err
	} else if loL.Loss <= eps {
		return Certified{Flip: 0, Worst: loL}, nil
	}
	lo, hi := 0.0, 0.5
	for hi-lo > 1e-15 {
		mid := (lo + hi) / 2
		if mid <= lo || mid >= hi {
			break
		}
		l, err := worst(mid)
		if err != nil {
			return Certified{}, err
		}
		if l.Loss <= eps {
			hi, hiL = mid, l
		} else {
			lo = mid
		}
	}
	if math.IsNaN(hiL.Loss) || hiL.Loss > eps {
		return Certified{}, fmt.Errorf("bdp: no flip probability certifies ε = %v", eps)
	}
	return Certified{Flip: hi, Below: lo, Worst: hiL}, nil
}

// CertifiedFlipSymmetric is CertifiedFlip for every length on the
// symmetric chain with switch probability θ started from (1/2, 1/2),
// including the deterministic chains θ = 0 and θ = 1 that Limit refuses:
// there every reading determines every other, so an adversary who knows no
// reading sees n independent outputs of the same bit and its loss is
// n·ln((1−ρ)/ρ), unbounded in n unless ρ = 1/2 (loss 0).
func CertifiedFlipSymmetric(theta, eps float64) (Certified, error) {
	if err := CheckTheta(theta); err != nil {
		return Certified{}, err
	}
	if err := checkEps(eps); err != nil {
		return Certified{}, err
	}
	if theta == 0 || theta == 1 {
		return Certified{Flip: 0.5, Below: 0.5, Worst: Loss{Length: 1}}, nil
	}
	ch, err := SymmetricChain(theta)
	if err != nil {
		return Certified{}, err
	}
	return CertifiedFlip(ch, eps, 0)
}
