package audit

import (
	"io"

	"github.com/pufferfish-privacy/pufferfish/internal/tabular"
)

// WriteText prints the audit as puff verify audit does: the verdict, σ,
// the exact loss, the witness and the model's size.
func (r Report) WriteText(out io.Writer) error {
	return tabular.Printf(out, "verdict\t%s: %s release at ε = %g, chain length %d\nσ\t%.6g (per bin %.6g, sampled at %.6g)\nloss\t%.10g (ratio %s, exact)\nwitness\t%s, noisy histogram %v\nmodel\t%d hidden states, %d sequences explored\n",
		r.Verdict, r.Method, r.Epsilon, r.Length, r.Sigma, r.PerBinScale, r.EffectiveScale, r.Loss, r.Ratio, r.Secret, r.Output, r.States, r.Explored)
}
