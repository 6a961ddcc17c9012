package hmm

import (
	"fmt"
	"math"
	"strconv"
)

// Witness is a maximising observation sequence, the secret pair and which
// side of it gives the sequence the larger probability.
type Witness struct {
	Observations []string `json:"observations"`
	Secret       string   `json:"secret"`
	Larger       string   `json:"larger"`
}

// LossReport is an evaluation as puff verify prints it (JSON field names
// are a contract): the exact loss with its reduced ratio, or the float
// path's enclosure.
type LossReport struct {
	Model  string   `json:"model"`
	Length int      `json:"length"`
	Loss   *float64 `json:"loss"`  // null when infinite
	Ratio  string   `json:"ratio"` // reduced fraction p/q, or "inf"; empty on the float path
	// Witness: a maximising observation sequence.
	Witness    Witness `json:"witness"`
	Explored   int64   `json:"explored"`
	Arithmetic string  `json:"arithmetic"`
	// Float path only: the enclosure of the loss (Loss is its upper end).
	LossLower *float64 `json:"loss_lower,omitempty"`
	LossUpper *float64 `json:"loss_upper,omitempty"`
}

// NewLossReport describes an evaluation of a model with observations obs
// (desc names it) over sequences of lengths 1..n.
func NewLossReport(obs []string, desc string, n int, ev Evaluation) LossReport {
	out := LossReport{Model: desc, Length: n, Ratio: "inf"}
	var witness []int
	if ev.Float != nil {
		r := ev.Float
		out.Explored, out.Arithmetic = r.Explored, "float64 with rigorous error bounds (enclosure in loss_lower..loss_upper)"
		out.Witness = Witness{Observations: []string{}, Secret: r.Secret, Larger: r.Larger}
		if !math.IsInf(r.LossHi, 1) {
			lo, hi := r.LossLo, r.LossHi
			out.Loss, out.LossLower, out.LossUpper, out.Ratio = &hi, &lo, &hi, ""
		}
		witness = r.Witness
	} else {
		r := ev.Exact
		out.Explored, out.Arithmetic = r.Explored, "exact (big.Int numerators over a common denominator)"
		if ev.Streamed {
			out.Arithmetic = "exact (rationals; neighbour pairs streamed, no HMM built)"
		}
		out.Witness = Witness{Observations: []string{}, Secret: r.Secret, Larger: r.Larger}
		if r.Ratio != nil {
			l := r.Loss
			out.Loss = &l
			out.Ratio = r.Ratio.Num().String() + "/" + r.Ratio.Denom().String()
		}
		witness = r.Witness
	}
	for _, o := range witness {
		out.Witness.Observations = append(out.Witness.Observations, obs[o])
	}
	return out
}

// LossLine is the loss for text output: the exact value with its ratio,
// or the float path's enclosure.
func (l LossReport) LossLine() string {
	if l.LossLower != nil {
		return fmt.Sprintf("in [%.12g, %.12g]", *l.LossLower, *l.LossUpper)
	}
	text := "∞"
	if l.Loss != nil {
		text = strconv.FormatFloat(*l.Loss, 'g', 10, 64)
	}
	return text + fmt.Sprintf(" (ratio %s)", l.Ratio)
}
