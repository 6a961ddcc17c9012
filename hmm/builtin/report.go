package builtin

import (
	"fmt"
	"io"

	"github.com/pufferfish-privacy/pufferfish/hmm"
)

// Report evaluates the model over observation sequences of lengths 1..n
// (against eps when not nil) and describes the answer as puff verify
// prints it. A one-shot DP check of more than 2^16 inputs draws a progress
// bar on progress (seconds to minutes of streaming; nil: none). It runs
// under o (hmm.Problem.EvaluateWith: refused over its limits, stopped
// when its context ends).
func (b Model) Report(o hmm.Options, n int, a hmm.Arithmetic, eps *hmm.Epsilon, progress io.Writer) (hmm.Verdict, hmm.LossReport, error) {
	if b.DP != nil && b.DP.Inputs > 1<<16 {
		b.DP.Progress = progress
	}
	ev, err := b.EvaluateWith(o, n, a, eps)
	if err != nil {
		return "", hmm.LossReport{}, err
	}
	return ev.Verdict, hmm.NewLossReport(b.Obs(), b.Description, n, ev), nil
}

// ReportArith is Report in the arithmetic as puff verify's --arithmetic
// names it (hmm.ParseArithmetic).
func (b Model) ReportArith(o hmm.Options, n int, arith string, eps *hmm.Epsilon, progress io.Writer) (hmm.Verdict, hmm.LossReport, error) {
	a, err := hmm.ParseArithmetic(arith)
	if err != nil {
		return "", hmm.LossReport{}, fmt.Errorf("--%w", err)
	}
	return b.Report(o, n, a, eps, progress)
}
