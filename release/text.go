package release

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the scale as the aligned table of puff scale.
func (s *Scale) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "method\t%s\nepsilon\t%g\nlength\t%d\n", s.Method, s.Epsilon, s.Length)
	if s.Start > 1 {
		fmt.Fprintf(w, "start\t%d (segment %d..%d of the chain)\n", s.Start, s.Start, s.Start+s.Length-1)
	}
	if s.Sigma != nil {
		fmt.Fprintf(w, "sigma\t%.10g\n", *s.Sigma)
	} else {
		fmt.Fprintf(w, "sigma\tnot applicable\n")
	}
	if s.Quilt != nil {
		fmt.Fprintf(w, "node\t%d\nquilt\ta=%d b=%d (card %d, two-sided %v)\n", s.Node, s.Quilt.A, s.Quilt.B, s.Quilt.Card(), *s.TwoSided)
	}
	if s.SpectralNorm != nil {
		fmt.Fprintf(w, "spectral norm\t%.6g\n", *s.SpectralNorm)
	}
	fmt.Fprintf(w, "guarantee\t%s\n", s.Guarantee)
	if s.Class != nil {
		fmt.Fprintf(w, "class\t%s\n", s.Class.Coverage)
	}
	return w.Flush()
}

// estimateText is the bin's estimate as printed ("—" for a stream window
// stored before estimates were released).
func (b Bin) estimateText() string {
	if b.Estimate == nil {
		return "—"
	}
	return fmt.Sprintf("%.6g", *b.Estimate)
}

// estimateText says in words why noisy values can be negative and what the
// estimate column is (docs/math.md §4.14).
func estimateText(r *Report) string {
	total := fmt.Sprintf("the %d readings", r.Observations)
	switch {
	case r.estTotal != "":
		total = r.estTotal
	case r.Query == "relative":
		total = "1"
	}
	sum := "summing to " + total
	if r.EstimateSumsAtMost() {
		sum = "summing to at most " + total + " (a reading's value may be missing)"
	}
	return "the private values carry Laplace noise, so a bin can be negative or the bins miss the total; the estimate is the closest histogram with no negative bin " + sum + " (a projection of the private values only, at no privacy cost)"
}

// WriteText prints the private histogram and its audit report as puff
// release does; extra rows (label, text) go before the warnings.
func (r *Report) WriteText(out io.Writer, extra ...[2]string) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	switch {
	case r.Mean != nil:
		fmt.Fprintf(w, "private mean\t%.6g\n", *r.Mean)
		if r.MeanEstimate != nil {
			fmt.Fprintf(w, "estimate\t%.6g (the private mean moved into the levels' range)\n", *r.MeanEstimate)
		}
	case len(r.Histogram) > 0 && r.Histogram[0].Range != "":
		fmt.Fprintf(w, "level\trange\tprivate %s\testimate\n", r.Query)
		for _, b := range r.Histogram {
			fmt.Fprintf(w, "%s\t%s\t%.6g\t%s\n", b.State, b.Range, b.Value, b.estimateText())
		}
	default:
		fmt.Fprintf(w, "state\tprivate %s\testimate\n", r.Query)
		for _, b := range r.Histogram {
			fmt.Fprintf(w, "%s\t%.6g\t%s\n", b.State, b.Value, b.estimateText())
		}
	}
	if len(r.Histogram) > 0 && r.Histogram[0].Estimate != nil {
		fmt.Fprintf(w, "\nestimate\t%s\n", estimateText(r))
	}
	fmt.Fprintf(w, "\nguarantee\t%s\nprotects\t%s\nmethod\t%s, ε = %g\nsigma\t%.6g (1-Lipschitz), L = %.6g, per-bin Laplace scale %.6g\n",
		r.Guarantee, r.Protects, r.Method, r.Epsilon, r.Sigma, r.Lipschitz, r.PerBinScale)
	if c := r.Calibration; c != nil {
		fmt.Fprintf(w, "calibration\t%s: %s (%s)\n", c.Method, c.Why, c.Theorem)
	}
	for _, s := range r.Scales {
		if s.Quilt == nil {
			continue
		}
		gaps := ""
		if s.Missing > 0 {
			gaps = fmt.Sprintf(", over %d steps with %d missing", s.Span, s.Missing)
		}
		fmt.Fprintf(w, "length %d\tσ = %.6g, reading %d, quilt a=%d b=%d%s\n", s.Length, *s.Sigma, s.Node, s.Quilt.A, s.Quilt.B, gaps)
	}
	fmt.Fprintf(w, "data\t%d series, %d readings, lengths %d–%d, %d missing readings inside the series\n", r.Sequences, r.Observations, r.MinLength, r.MaxLength, r.Missing)
	if r.TimeStep != nil {
		fmt.Fprintf(w, "time step\t%g (%s)\n", r.TimeStep.Step, r.TimeStep.Source)
	}
	fmt.Fprintf(w, "class\t%s\n", r.Class.Coverage)
	for _, e := range extra {
		fmt.Fprintf(w, "%s\t%s\n", e[0], e[1])
	}
	for _, m := range r.Warnings {
		fmt.Fprintf(w, "warning\t%s\n", m)
	}
	return w.Flush()
}
