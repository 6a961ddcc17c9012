package epsilon

import (
	"fmt"
	"math"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// ProbFlag is a probability flag (θ, a flip): a decimal or a fraction in
// [0, 1]. Unset, Float is NaN.
type ProbFlag struct {
	v    float64
	text string
}

// NewProbFlag is an unset probability flag.
func NewProbFlag() *ProbFlag { return &ProbFlag{v: math.NaN()} }

func (f *ProbFlag) String() string { return f.text }

// Set reads a probability.
func (f *ProbFlag) Set(s string) error {
	r, err := ratexpr.Eval(strings.TrimSpace(s), nil)
	if err != nil {
		return err
	}
	v, _ := r.Float64()
	if err := checks.Probability(fmt.Sprintf("%q", s), v); err != nil {
		return err
	}
	f.v, f.text = v, s
	return nil
}

// Type is the type flags' help shows.
func (f *ProbFlag) Type() string { return "p" }

// Float is the probability (NaN when not given).
func (f *ProbFlag) Float() float64 { return f.v }
