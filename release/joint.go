package release

import (
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// CalibrateJoint calibrates a release of data that moves by at most
// lipschitz in L1 when one reading changes (a query of another package:
// the transition counts of docs/math.md §4.13 have 4): σ the smaller of
// the Markov Quilt Mechanism's over every series' observation pattern and
// the leakage bound's for the longest series, as for joint windows (§4.8,
// §8.6), the per-cell scale σ·lipschitz, and the ledger record (with
// query) over every series' segment. cells is the number of released
// numbers, checked against opts.Limits (LimitError) before any work. The
// report's Query is query, its Histogram empty: nothing is drawn.
func CalibrateJoint(data *reading.Data, class *markov.Class, fitted bool, opts Options, query string, lipschitz float64, cells int) (*Report, error) {
	if data == nil {
		return nil, errors.New("no observations to release")
	}
	if !(lipschitz > 0) || math.IsInf(lipschitz, 0) {
		return nil, fmt.Errorf("release: Lipschitz constant %v, want a finite number > 0", lipschitz)
	}
	if err := opts.Limits.CheckStates(len(class.States)); err != nil {
		return nil, err
	}
	if err := checkLimits(data, cells, 0, nil, opts.Limits); err != nil {
		return nil, err
	}
	if opts.Origin != nil {
		var err error
		if data, err = atOrigin(data, *opts.Origin); err != nil {
			return nil, err
		}
	}
	cache := NewScaleCache()
	sum := data.Summary()
	r, quilts, err := jointBase(sum, class, fitted, opts, cache)
	if err != nil {
		return nil, err
	}
	if c := r.Calibration; c != nil && c.Method == calibratedMQM {
		c.Theorem = fmt.Sprintf("[SWC17] Thm 4.3 for a vector query that moves by at most %g in L1 per reading (docs/math.md §4, §4.13)", lipschitz)
	}
	r.Query, r.Lipschitz = query, lipschitz
	r.PerBinScale = noise.ScaleFor(r.usedSigma(), lipschitz)
	r.NoiseScale = noise.Sampled(r.PerBinScale, lipschitz, cells)
	if math.IsInf(r.NoiseScale, 0) || math.IsNaN(r.NoiseScale) || r.NoiseScale > maxScale {
		return nil, fmt.Errorf("ε = %g needs a per-cell noise scale of %.3g, beyond what can be sampled (at most %g): choose a larger ε", opts.Epsilon, r.PerBinScale, maxScale)
	}
	r.Protects = protects(opts.Method, r.Class)
	if fitted {
		r.Warnings = append(r.Warnings, "the class was fitted from the released data: the guarantee holds for that fitted chain only, and the fit is not protected; σ, the per-cell scale and the quilt printed here are functions of the fitted chain, so they depend on the data and are not protected either")
	}
	r.Record = newRecord(r, opts, class, segmentsOf(data, quilts))
	return r, nil
}

// NewPending is a release of another package computed up to its noise:
// draw adds the noise to out, which is then printed and recorded (rec,
// for class). commit.Release draws it once, after the ledger's check.
func NewPending(class *markov.Class, rec *record.Release, out Output, draw func() error) *Pending {
	return &Pending{Class: class, Record: rec, out: out, draw: draw}
}
