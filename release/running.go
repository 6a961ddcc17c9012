package release

import (
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// ReleaseNode releases one node of a running stream's binary tree
// (docs/math.md §4.12): the count histogram of the windows sum pools, with
// Laplace noise σ·2·levels on every bin (σ base's, StreamBase), drawn
// once. A reading lies in at most levels nodes of its epoch, each moved by
// at most 2 in L1, so all nodes together change by at most e^{1/σ} per
// reading: the price of one window of the stream. The report's Lipschitz
// constant is the node's, 2·levels.
func ReleaseNode(base *Report, sum *reading.Summary, class *markov.Class, opts Options, levels int) (*Report, error) {
	if q, err := ParseQuery(opts.Query); err != nil {
		return nil, err
	} else if q != "counts" {
		return nil, fmt.Errorf("running totals release counts, not %s", q)
	}
	if levels < 1 {
		return nil, errors.New("release: a tree node needs at least one level")
	}
	r, draw, err := fixedSigma(base, sum, class, false, opts)
	if err != nil {
		return nil, err
	}
	// The draw adds noise.ScaleFor(σ, r.Lipschitz) per bin when it runs:
	// the node's constant is set before (TestReleaseNodeScale checks the
	// noise drawn against a direct draw at σ·2·levels).
	r.Lipschitz = 2 * float64(levels)
	r.PerBinScale = noise.ScaleFor(r.usedSigma(), r.Lipschitz)
	r.NoiseScale = noise.Sampled(r.PerBinScale, r.Lipschitz, len(class.States))
	if math.IsInf(r.NoiseScale, 0) || r.NoiseScale > maxScale {
		return nil, fmt.Errorf("ε = %g needs a per-bin noise scale of %.3g for a tree of %d levels, beyond what can be sampled (at most %g)", opts.Epsilon, r.PerBinScale, levels, maxScale)
	}
	if err := draw(); err != nil {
		return nil, err
	}
	return r, nil
}
