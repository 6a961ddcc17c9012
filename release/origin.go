package release

import (
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// atOrigin places every series of data in the chain that starts at origin
// (seconds): a series whose first reading is at time t starts at chain
// time 1 + (t − origin)/step (docs/math.md §4.10, §4.7). It returns a
// copy; data is not modified.
func atOrigin(data *reading.Data, origin float64) (*reading.Data, error) {
	if data.Times == nil {
		return nil, errors.New("a chain origin needs a time column: without times a file's place in the chain is unknown")
	}
	step := data.Step
	if !(step > 0) {
		return nil, errors.New("a chain origin needs a time step")
	}
	cp := *data
	cp.Starts = make([]int, len(data.Seqs))
	for s, ts := range data.Times {
		if len(ts) == 0 {
			cp.Starts[s] = 1
			continue
		}
		g := (ts[0] - origin) / step
		r := math.Round(g)
		switch {
		case g < -1e-6:
			return nil, fmt.Errorf("series %q begins before the chain origin: its first reading is %.6g steps of %v earlier; a release cannot reach back before the origin", SeriesName(data.Series[s]), -g, step)
		case math.Abs(g-r) > 1e-6*math.Max(1, r):
			return nil, fmt.Errorf("series %q begins %.6g steps of %v after the chain origin, not a whole number: give the step (--step) or an origin on the grid", SeriesName(data.Series[s]), g, step)
		case r+float64(len(data.Seqs[s])) >= reading.MaxSpan:
			return nil, fmt.Errorf("series %q begins %.0f steps after the chain origin, more than %d: is the origin right?", SeriesName(data.Series[s]), r, reading.MaxSpan)
		}
		cp.Starts[s] = 1 + int(r)
	}
	return &cp, nil
}

// SeriesName is how errors name a series ("" is the only series of a file
// without a series column): compose.SeriesChain, the ledger's name of its
// chain.
func SeriesName(s string) string { return compose.SeriesChain(s) }
