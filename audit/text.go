package audit

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the audit as puff verify audit does: the verdict, σ,
// the exact loss, the witness and the model's size.
func (r Report) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "verdict\t%s: %s release at ε = %g, chain length %d\nσ\t%.6g (per bin %.6g, sampled at %.6g)\nloss\t%.10g (ratio %s, exact)\nwitness\t%s, noisy histogram %v\nmodel\t%d hidden states, %d sequences explored\n",
		r.Verdict, r.Method, r.Epsilon, r.Length, r.Sigma, r.PerBinScale, r.EffectiveScale, r.Loss, r.Ratio, r.Secret, r.Output, r.States, r.Explored)
	return w.Flush()
}
