package bdp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
)

// FlipReport compares the three flips for a symmetric chain (puff local
// flip; JSON field names are a contract).
type FlipReport struct {
	Theta   float64 `json:"theta"`
	Epsilon float64 `json:"epsilon"`

	DPFlip        float64 `json:"dp_flip"`
	PublishedFlip float64 `json:"published_flip"`
	CertifiedFlip float64 `json:"certified_flip"`

	// Worst-case loss of each flip over every adversary and every length
	// (an upper bound within 2e-12; null when the chain is deterministic).
	DPWorst        *float64 `json:"dp_worst_loss"`
	PublishedWorst *float64 `json:"published_worst_loss"`
	CertifiedWorst *float64 `json:"certified_worst_loss"`

	Length              int      `json:"length,omitempty"`
	CertifiedFlipLength *float64 `json:"certified_flip_length,omitempty"`

	Covers map[string]string `json:"covers"`
}

// Flips computes the report for switch probability θ at ε; with n > 0 it
// also certifies a flip for chains of exactly n readings.
func Flips(theta, eps float64, n int) (FlipReport, error) {
	if n < 0 {
		return FlipReport{}, fmt.Errorf("bdp: length %d: want ≥ 1 (or 0: every length only)", n)
	}
	ch, err := SymmetricChain(theta)
	if err != nil {
		return FlipReport{}, err
	}
	r := FlipReport{Theta: theta, Epsilon: eps, Covers: map[string]string{}}
	for _, k := range FlipKinds {
		r.Covers[string(k)] = k.Covers()
	}
	if r.DPFlip, err = SymmetricFlip(DPFlipKind, theta, eps); err != nil {
		return FlipReport{}, err
	}
	if r.PublishedFlip, err = SymmetricFlip(PublishedFlipKind, theta, eps); err != nil {
		return FlipReport{}, err
	}
	cert, err := CertifiedFlipSymmetric(theta, eps)
	if err != nil {
		return FlipReport{}, err
	}
	r.CertifiedFlip, r.CertifiedWorst = cert.Flip, &cert.Worst.Loss
	if theta > 0 && theta < 1 { // Limit needs positive transitions
		for _, p := range []struct {
			rho float64
			dst **float64
		}{{r.DPFlip, &r.DPWorst}, {r.PublishedFlip, &r.PublishedWorst}} {
			mech, err := RandomizedResponse(p.rho, p.rho)
			if err != nil {
				return FlipReport{}, err
			}
			l, err := Limit(ch, mech, AnyKnown)
			if err != nil {
				return FlipReport{}, err
			}
			*p.dst = &l.Loss
		}
	}
	if n > 0 {
		cn, err := CertifiedFlip(ch, eps, n)
		if err != nil {
			return FlipReport{}, err
		}
		r.Length, r.CertifiedFlipLength = n, &cn.Flip
	}
	return r, nil
}

// LossReport is the worst loss of a flip (puff local loss; JSON field
// names are a contract).
type LossReport struct {
	Theta     float64 `json:"theta"`
	Flip      float64 `json:"flip"`
	Length    any     `json:"length"` // a number, or "inf" for every length
	Knowledge string  `json:"knowledge"`
	// Loss is ln of the worst BDPL (exact for a length; an upper bound
	// within 2e-12 for every length); null when infinite.
	Loss      strictjson.Float `json:"loss"`
	Infinite  bool             `json:"infinite"` // some output is impossible under one hypothesis
	Exact     bool             `json:"exact"`
	LocalDP   strictjson.Float `json:"local_dp"` // null when infinite (flip 0 or 1)
	Adversary Adversary        `json:"adversary"`
	Output    []Run            `json:"output"`
	// WitnessLength is the chain length of the adversary and output.
	WitnessLength int              `json:"witness_length"`
	Attained      strictjson.Float `json:"attained"` // null when infinite
}

// LossOf is the worst loss of randomized response with flip rho on the
// symmetric chain θ over n readings (n = 0: every length) against the
// adversaries of know.
func LossOf(theta, rho float64, n int, know Knowledge) (LossReport, error) {
	ch, err := SymmetricChain(theta)
	if err != nil {
		return LossReport{}, err
	}
	mech, err := RandomizedResponse(rho, rho)
	if err != nil {
		return LossReport{}, err
	}
	var l Loss
	if n == 0 {
		l, err = Limit(ch, mech, know)
	} else {
		l, err = Worst(ch, mech, n, know)
	}
	if err != nil {
		return LossReport{}, err
	}
	r := LossReport{Theta: theta, Flip: rho, Length: n, Knowledge: know.String(), Loss: strictjson.Float(l.Loss), Infinite: math.IsInf(l.Loss, 1),
		Exact: n > 0, LocalDP: strictjson.Float(mech.LocalDP()), Adversary: l.Adversary, Output: l.Output, WitnessLength: l.Length, Attained: strictjson.Float(l.Attained)}
	if n == 0 {
		r.Length = "inf"
	}
	return r, nil
}

// AttackRow is one flip kind on one θ (puff local attack).
type AttackRow struct {
	Theta     float64 `json:"theta"`
	Mechanism string  `json:"mechanism"`
	Flip      float64 `json:"flip"`
	AttackResult
}

// AttackTable runs the single-reading and correlation-aware attacks on
// reading target of n for every θ and flip kind: exact when both sides of
// the target have at most 22 readings, else Monte Carlo with trials draws
// from a generator seeded with seed (reproducible; never used on data).
func AttackTable(thetas []float64, eps float64, n, target, trials int, seed uint64) ([]AttackRow, error) {
	exact := max(target-1, n-target) <= 22
	var rows []AttackRow
	for _, th := range thetas {
		ch, err := SymmetricChain(th)
		if err != nil {
			return nil, err
		}
		for _, kind := range FlipKinds {
			rho, err := SymmetricFlip(kind, th, eps)
			if err != nil {
				return nil, err
			}
			mech, err := RandomizedResponse(rho, rho)
			if err != nil {
				return nil, err
			}
			var res AttackResult
			if exact {
				res, err = Attack(ch, mech, n, target)
			} else {
				res, err = SimulateAttack(ch, mech, n, target, trials, rand.New(rand.NewPCG(seed, uint64(len(rows)))))
			}
			if err != nil {
				return nil, err
			}
			rows = append(rows, AttackRow{th, string(kind), rho, res})
		}
	}
	return rows, nil
}
