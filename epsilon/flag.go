package epsilon

import (
	"math"
	"math/big"
)

// Flag is an ε given on a command line, in Parse's syntax: a flag.Value
// (and a pflag.Value). Unset, Float is NaN.
type Flag struct {
	e   Epsilon
	set bool
}

// NewFlag is a Flag set to def ("" for none); def must parse.
func NewFlag(def string) *Flag {
	f := &Flag{}
	if def != "" {
		if err := f.Set(def); err != nil {
			panic(err)
		}
	}
	return f
}

// String is ε as given ("" when unset).
func (f *Flag) String() string {
	if !f.set {
		return ""
	}
	return f.e.Text
}

// Set parses s (Parse).
func (f *Flag) Set(s string) error {
	e, err := Parse(s)
	if err != nil {
		return err
	}
	f.e, f.set = e, true
	return nil
}

// Type names the flag's value in usage lines.
func (f *Flag) Type() string { return "ε" }

// Float is ε (NaN when not given).
func (f *Flag) Float() float64 {
	if !f.set {
		return math.NaN()
	}
	return f.e.Value
}

// Rat is ε as the exact rational written (nil when unset, or for ln(r)).
func (f *Flag) Rat() *big.Rat {
	if !f.set {
		return nil
	}
	return f.e.Rat
}
