package release

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/tpl"
)

// Calibration says which valid bound set a windowed release's noise and
// why: the Markov Quilt Mechanism's σ, or the temporal leakage bound that
// prices every event-level DP release of a chain (docs/math.md §8.6).
type Calibration struct {
	Method  string  `json:"method"` // "mqm" or "tpl"
	Theorem string  `json:"theorem"`
	Why     string  `json:"why"`
	MQM     float64 `json:"mqm_sigma"`           // σ of the Markov Quilt Mechanism
	TPL     float64 `json:"tpl_sigma,omitempty"` // the leakage bound's per-bin scale over L = 2 (0: not computed)
}

// Method names of a Calibration.
const (
	calibratedMQM = "mqm"
	calibratedTPL = "tpl"
)

// Cost limits of the leakage bound (its recursion is O(k²)–O(k³) per step
// and pair and is bisected): the unbounded bound is computed for at most
// maxTPLStates states, the finite-length one (smaller for short series)
// only while T·k³ ≤ maxTPLWork.
const (
	maxTPLStates = 16
	maxTPLWork   = 20000
)

var errFixedStart = errors.New("fixed start")

// tplSigma is the σ-equivalent (per-bin scale over L = 2) of the temporal
// leakage bound for event-level DP releases of series whose last reading
// is at chain time at most T (T = 0: any length) under class, at ε: every
// windowed histogram with per-window scale σ·L_j is event-level 1/σ-DP,
// and docs/math.md §8.6 bounds its loss by the per-step recursion at
// b = 2σ. Readings missing or before a series' start only lower the bound
// (it grows with every step's budget), so T = the longest span covers
// every series. It returns 0 and why when the bound is not computed.
func tplSigma(class *markov.Class, T int, eps float64, maxStates int, cache *ScaleCache) (float64, string) {
	k := len(class.States)
	if k > maxStates {
		return 0, fmt.Sprintf("the temporal leakage bound is not computed for %d states (at most %d here: its cost grows as k³)", k, maxStates)
	}
	key := fmt.Sprint("tpl ", class.Hash(), " ", strconv.FormatFloat(eps, 'g', -1, 64), " ", T, " ", maxStates)
	if cache != nil {
		if s, ok := cache.get(key); ok {
			return *s.Sigma, s.Guarantee
		}
	}
	// The unbounded bound is a fixed point for stationary and "any"
	// starts; for a fixed start it runs the recursion up to a long
	// horizon (docs/math.md §8.5), far too slow to bisect inside a
	// release, so a fixed start gets only the finite bound, within the
	// work limit.
	b, err := 0.0, error(errFixedStart)
	if !class.FixedStart() {
		b, _, err = tpl.Calibrate(class, 0, eps, nil)
	}
	if T > 0 && float64(T)*float64(k*k*k) <= maxTPLWork {
		if bt, _, errT := tpl.Calibrate(class, T, eps, nil); errT == nil && (err != nil || bt < b) {
			b, err = bt, nil
		}
	}
	sigma, why := 0.0, ""
	switch {
	case err == errFixedStart:
		why = fmt.Sprintf("the temporal leakage bound is not computed for a fixed initial distribution over %d steps of %d states (its cost grows as steps × k³)", T, k)
	case err != nil:
		why = "the temporal leakage bound is infinite for this class: " + err.Error()
	default:
		sigma = b / 2
	}
	if cache != nil {
		cache.put(key, Scale{Sigma: &sigma, Guarantee: why})
	}
	return sigma, why
}

// chooseCalibration compares the Markov Quilt Mechanism's σ (base.Sigma)
// with the leakage bound's and keeps the smaller on base (docs/math.md
// §4.8 and §8.6): both hold for every window of every series together.
func chooseCalibration(base *Report, class *markov.Class, T int, eps float64, maxStates int, cache *ScaleCache) {
	t, why := tplSigma(class, T, eps, maxStates, cache)
	choose(base, t, why)
}

// TPLSigma is the leakage bound's σ for streams (any length: T = 0) and
// why it is 0 when it is not computed.
func TPLSigma(class *markov.Class, eps float64, maxStates int) (float64, string) {
	return tplSigma(class, 0, eps, maxStates, nil)
}

// choose keeps the smaller of base.Sigma and t (the leakage bound's σ, 0:
// not computed, for the reason why) on base.
func choose(base *Report, t float64, why string) {
	c := &Calibration{Method: calibratedMQM, Theorem: "[SWC17] Thm 4.3 for the vector of every window's histogram (docs/math.md §4.8)", MQM: base.Sigma}
	base.Calibration = c
	if !base.Method.MQM() {
		c.Method, c.Theorem, c.Why = string(base.Method), jointTheorem(base.Method), "the method asked for"
		return
	}
	c.TPL = t
	switch {
	case t == 0:
		c.Why = why
	case t < base.Sigma:
		c.Method = calibratedTPL
		c.Theorem = "every event-level DP release of a chain loses at most the per-step temporal leakage ([CYXX18] Thm 4, Thm 10; docs/math.md §8.6, §8.7)"
		c.Why = fmt.Sprintf("the temporal leakage bound needs σ = %.6g, less than the Markov Quilt Mechanism's %.6g", t, base.Sigma)
		base.tpl = t
		base.Guarantee = fmt.Sprintf("%g-Pufferfish privacy for the class (the temporal leakage bound for event-level DP releases of a chain, docs/math.md §8.6)", base.Epsilon)
	default:
		c.Why = fmt.Sprintf("the Markov Quilt Mechanism needs σ = %.6g, no more than the temporal leakage bound's %.6g", base.Sigma, t)
	}
}

// usedSigma is the σ a report's noise is drawn with.
func (r *Report) usedSigma() float64 {
	if r.tpl > 0 && r.tpl < r.Sigma {
		return r.tpl
	}
	return r.Sigma
}

// recordedMechanism is how the ledger knows a release: MQM's own name, or
// a generic ε-Pufferfish release when the leakage bound set its noise
// (the composition rules of MQM do not cover it).
func (r *Report) recordedMechanism() mechanism.Name {
	if r.tpl > 0 && r.tpl < r.Sigma {
		return mechanism.Pufferfish
	}
	return r.Method
}
