package release

import (
	"context"
	"fmt"
	"strconv"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// PlanScale is the calibration a release draws its noise with for series
// of at most T consecutive readings from step 1 under class at ε with
// method, before any data: the method's σ for the longest series (its
// search as a release runs it, sharing cache's scales), then for MQM the
// smaller of that σ and the temporal leakage bound's for series spanning
// T steps (chooseCalibration, as a whole-series release and the windows
// of one calibrated jointly do). With stream the leakage bound is the
// one for every length (T = 0, StreamLeakage's), as a stream's windows
// are calibrated.
//
// The report has Method, Epsilon, Class, Sigma (the σ the noise is drawn
// with, UsedSigma), Guarantee, Scales (the method's search) and
// Calibration (which bound set σ, with MQM's and the leakage bound's);
// when the method does not apply, Sigma is 0, Calibration nil and the
// guarantee says why. ctx stops the computation (an error wrapping its
// cause); limits cap the leakage bound's work; cache may be nil.
func PlanScale(ctx context.Context, class *markov.Class, T int, eps float64, method mechanism.Name, limits Limits, cache *ScaleCache, stream bool) (*Report, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if T < 1 {
		return nil, fmt.Errorf("length %d: want ≥ 1", T)
	}
	if cache == nil {
		cache = NewScaleCache()
	}
	ob := mqm.Consecutive(1, T)
	// the key calibrate gives this pattern's σ
	ck := fmt.Sprint(class.Hash(), " ", strconv.FormatFloat(eps, 'g', -1, 64), " ", method, " ", reading.PatternKey(ob))
	var s *Scale
	if c, ok := cache.get(ck); ok {
		s = &c
	} else {
		var err error
		if s, err = computeScaleAt(ctx, cache.tables, class, ob, eps, method); err != nil {
			return nil, err
		}
		cache.put(ck, *s)
	}
	s.Class = nil
	r := &Report{Method: method, Epsilon: eps, Class: Summarize(class, false), Guarantee: s.Guarantee, Scales: []*Scale{s}, Noise: noiseText}
	if !s.Applicable || s.Sigma == nil {
		return r, nil
	}
	r.Sigma = *s.Sigma
	leakT := T
	if stream {
		leakT = 0
	}
	if err := chooseCalibration(ctx, r, class, leakT, eps, limits, cache); err != nil {
		return nil, err
	}
	if r.Calibration.Method == calibratedMQM && !stream {
		r.Calibration.Theorem = "[SWC17] Thm 4.3 for the histogram (docs/math.md §4)"
	}
	return r, nil
}
