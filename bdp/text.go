package bdp

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText prints the flip comparison as puff local flip does.
func (r FlipReport) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "θ = %g, ε = %g\nmechanism\tflip\tworst loss (every K, every length)\tprotects against\n", r.Theta, r.Epsilon)
	row := func(k FlipKind, rho float64, worst *float64) {
		ws := "∞"
		if worst != nil {
			ws = fmt.Sprintf("%.6f", *worst)
		}
		fmt.Fprintf(w, "%s\t%.9f\t%s\t%s\n", k, rho, ws, k.Covers())
	}
	row(DPFlipKind, r.DPFlip, r.DPWorst)
	row(PublishedFlipKind, r.PublishedFlip, r.PublishedWorst)
	row(CertifiedFlipKind, r.CertifiedFlip, r.CertifiedWorst)
	if r.CertifiedFlipLength != nil {
		fmt.Fprintf(w, "certified, n = %d\t%.9f\t≤ ε\texactly %d readings\n", r.Length, *r.CertifiedFlipLength, r.Length)
	}
	return w.Flush()
}

// WriteText prints the worst loss, its adversary and output as puff local
// loss does.
func (r LossReport) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	kind := "exact"
	if !r.Exact {
		kind = "upper bound over every length"
	}
	fmt.Fprintf(w, "loss\t%.12g (%s; local DP level %.6g)\n", float64(r.Loss), kind, float64(r.LocalDP))
	fmt.Fprintf(w, "target\treading %d: %d versus %d\n", r.Adversary.Target, r.Adversary.Secret, r.Adversary.Alternative)
	known := []string{}
	for _, kn := range r.Adversary.Known {
		known = append(known, fmt.Sprintf("x_%d = %d", kn.Index, kn.Value))
	}
	if len(known) == 0 {
		known = []string{"none"}
	}
	fmt.Fprintf(w, "knows\t%s\n", strings.Join(known, ", "))
	var outs []string
	for _, o := range r.Output {
		outs = append(outs, fmt.Sprintf("y_%d..%d = %d", o.From, o.To, o.Symbol))
	}
	fmt.Fprintf(w, "output\t%s (chain of %d readings)\n", strings.Join(outs, ", "), r.WitnessLength)
	return w.Flush()
}

// WriteAttackTable prints attack rows as puff local attack does.
func WriteAttackTable(out io.Writer, rows []AttackRow, eps float64, n, target int) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "ε = %g, %d readings, target %d\n", eps, n, target)
	fmt.Fprintf(w, "θ\tmechanism\tflip\tsingle-reading p\timplied ε\tcorrelation-aware p\timplied ε\n")
	for _, r := range rows {
		ca := fmt.Sprintf("%.6f", r.CorrelationAware.Success)
		if r.CorrelationAware.CI != nil {
			ca += fmt.Sprintf(" [%.4f, %.4f]", r.CorrelationAware.CI[0], r.CorrelationAware.CI[1])
		}
		fmt.Fprintf(w, "%g\t%s\t%.6f\t%.6f\t%.4f\t%s\t%.4f\n", r.Theta, r.Mechanism, r.Flip,
			r.SingleReading.Success, r.SingleReading.ImpliedEpsilon, ca, r.CorrelationAware.ImpliedEpsilon)
	}
	return w.Flush()
}
