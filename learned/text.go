package learned

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the comparison as puff local attack --adversary lstm
// does: the flip, the guarantee, each attacker's accuracy with the ε it
// implies, and the LSTM's configuration; name is the data's.
func (r Report) WriteText(w io.Writer, name string) error {
	fmt.Fprintf(w, "%s: %s flip at ε = %g (ρ0 = %.6g, ρ1 = %.6g), %d readings train the LSTM, %d are scored\n", name, r.Flip, r.Epsilon, r.Rho0, r.Rho1, r.TrainReadings, r.TestReadings)
	fmt.Fprintf(w, "guarantee: %s; no adversary with the majority prior (%.4f) exceeds accuracy %.4f if every reading is ε-private to it\n", r.Covers, r.Prior, r.AccuracyBound)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "attacker\taccuracy\timplied ε\timplied ε beyond the prior")
	for _, a := range []struct {
		name, key string
		acc       float64
	}{{"output as is", "single", r.Single}, {"posterior (chain)", "posterior", r.Posterior}, {"Viterbi (chain)", "viterbi", r.Viterbi}, {"LSTM (learned)", "lstm", r.LSTM}} {
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\n", a.name, a.acc, r.Implied[a.key], r.ImpliedPrior[a.key])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	c := r.Config
	_, err := fmt.Fprintf(w, "LSTM: half-window %d, %d units, %d epochs × %d examples, trained in %.1f s (seed %d)\n", c.Half, c.Hidden, c.Epochs, c.Examples, r.TrainSeconds, c.Seed)
	return err
}
