package hmm

import (
	"io"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/internal/tabular"
)

// WriteText prints the loss report as puff verify loss does: the model,
// the lengths, the loss, the arithmetic, the witness and the count of
// sequences explored.
func (l LossReport) WriteText(out io.Writer) error {
	return tabular.Printf(out, "model\t%s\nlengths\t1..%d\nloss\t%s\narithmetic\t%s\nwitness\t%s under %s (larger under %s)\nexplored\t%d sequences\n",
		l.Model, l.Length, l.LossLine(), l.Arithmetic, strings.Join(l.Witness.Observations, " "), l.Witness.Secret, l.Witness.Larger, l.Explored)
}

// CheckReport is a verdict for an ε with the loss report behind it, as puff
// verify check prints it (JSON field names are a contract).
type CheckReport struct {
	Verdict       Verdict `json:"verdict"`
	Epsilon       string  `json:"epsilon"`
	EpsilonExact  bool    `json:"epsilon_exact"`
	EpsilonFloat  float64 `json:"epsilon_value"`
	ExpEpsilonLow string  `json:"exp_epsilon_low"`
	ExpEpsilonHi  string  `json:"exp_epsilon_high"`
	LossReport
}

// NewCheckReport describes verdict v for eps, with e^ε's exact bounds to
// 20 decimals.
func NewCheckReport(v Verdict, eps Epsilon, l LossReport) CheckReport {
	return CheckReport{v, eps.Text, eps.Exact(), eps.Value, eps.Lo.FloatString(20), eps.Hi.FloatString(20), l}
}

// WriteText prints the verdict, the model, the loss, the arithmetic and
// the witness.
func (c CheckReport) WriteText(out io.Writer) error {
	return tabular.Printf(out, "verdict\t%s: %s-Pufferfish privacy for sequences of lengths 1..%d\nmodel\t%s\nloss\t%s\narithmetic\t%s\nwitness\t%s under %s\n",
		c.Verdict, c.Epsilon, c.Length, c.Model, c.LossLine(), c.Arithmetic, strings.Join(c.Witness.Observations, " "), c.Witness.Secret)
}

// Axes names the sweep's parameters, in the order of the grid.
func (s SweepResult) Axes() []string { return s.axes }
