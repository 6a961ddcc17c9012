package synth

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/query"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Release is the released transition counts with the chain made of them.
// Its report's histogram holds one bin per transition, "from → to", row
// by row (the noisy counts); Chain and Stationary are post-processing.
type Release struct {
	*release.Report
	// Chain[i][j] is the released chain's probability of j after i.
	Chain [][]float64 `json:"chain"`
	// Stationary is the chain's stationary law, the synthetic series'
	// first state.
	Stationary []float64 `json:"stationary"`
}

// Prepare calibrates the release of data's transition counts for class
// (docs/math.md §4.13: L = 4, σ the smaller valid bound) and returns it
// pending: commit.Release checks the ledger, then draws the noise once
// (package noise, opts.Source) and makes the chain.
func Prepare(data *reading.Data, class *markov.Class, fitted bool, opts release.Options) (*release.Pending, *Release, error) {
	k := len(class.States)
	r, err := release.CalibrateJoint(data, class, fitted, opts, Query, Lipschitz, min(k*k, math.MaxInt32))
	if err != nil {
		return nil, nil, err
	}
	r.Warnings = append(r.Warnings, "transitions are counted between rows one time step apart with known values: a step without a row or a missing value breaks them; one reading is in two transitions (L = 4)")
	counts := Count(data)
	pairs := Pairs(data)
	flat := make([]float64, 0, k*k)
	for _, row := range counts {
		flat = append(flat, row...)
	}
	priced, err := query.Price(query.Transitions, query.Group{Counts: flat, N: pairs})
	if err != nil {
		return nil, nil, err
	}
	if priced.Sensitivity != Lipschitz {
		return nil, nil, fmt.Errorf("synth: the transitions query's sensitivity %v is not the calibration's %v", priced.Sensitivity, float64(Lipschitz))
	}
	out := &Release{Report: r}
	draw := func() error {
		noisy, err := priced.Draw(opts.Source, release.UsedSigma(r))
		if err != nil {
			return err
		}
		// the estimate of the counts: the noisy cells projected onto the
		// k² histograms of the pattern's pairs of rows one step apart
		// (every value known: Σ = pairs, else ≤), post-processing
		// (docs/math.md §4.14)
		est, err := release.ConsistentCounts(noisy, float64(pairs), !data.NullValues)
		if err != nil {
			return err
		}
		r.SetEstimateTotal(fmt.Sprintf("the %d pairs of rows one step apart", pairs), data.NullValues)
		c := make([][]float64, k)
		for i := range c {
			c[i] = noisy[i*k : (i+1)*k]
			for j, v := range c[i] {
				r.Histogram = append(r.Histogram, release.Bin{State: data.States[i] + " → " + data.States[j], Value: v, Estimate: &est[i*k+j]})
			}
		}
		out.Chain = Project(c)
		out.Stationary = Stationary(out.Chain)
		return nil
	}
	return release.NewPending(class, r.Record, out, draw), out, nil
}

// WriteText prints the report (the noisy transition counts, the
// calibration) and then the chain.
func (s *Release) WriteText(w io.Writer, extra ...[2]string) error {
	if err := s.Report.WriteText(w, extra...); err != nil {
		return err
	}
	states := s.Report.Class.States
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nchain (rows: from, projected onto the simplex)\t%s\n", strings.Join(states, "\t"))
	for i, row := range s.Chain {
		fmt.Fprintf(tw, "%s", states[i])
		for _, p := range row {
			fmt.Fprintf(tw, "\t%.4f", p)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "stationary")
	for _, p := range s.Stationary {
		fmt.Fprintf(tw, "\t%.4f", p)
	}
	fmt.Fprintln(tw)
	return tw.Flush()
}
