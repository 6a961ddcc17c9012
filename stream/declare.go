package stream

import (
	"context"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Declaration is a stream as puff stream init gives it: the class file,
// the reading flags, the window, ε (and the rational written, nil for
// ln(r)), the method and query, whether it is running (SetRunning) and
// the limits on the work of declaring it.
type Declaration struct {
	ClassPath  string
	Data       *reading.DataFlags
	Window     string
	Epsilon    float64
	EpsilonRat *big.Rat
	Method     mechanism.Name
	Query      string
	Running    bool
	Limits     release.Limits
}

// Declare reads the class file, checks the reading flags and the class's
// states against the limits, and declares the stream (DeclareWithLimits;
// ctx stops it), to be charged exactly EpsilonRat when given.
func (d Declaration) Declare(ctx context.Context) (*Settings, error) {
	class, err := markov.ReadClassFile(d.ClassPath)
	if err != nil {
		return nil, err
	}
	spec := d.Data.Given()
	if _, err := d.Data.CSV(); err != nil {
		return nil, err
	}
	if err := d.Limits.CheckStates(len(class.States)); err != nil {
		return nil, err
	}
	s, err := DeclareWithLimits(ctx, d.Limits, spec, d.Window, d.Epsilon, d.Method, d.Query, class)
	if err != nil {
		return nil, err
	}
	if d.EpsilonRat != nil {
		s.EpsilonExact = d.EpsilonRat.RatString() // charged exactly (record.Release.Charge)
	}
	if d.Running {
		if err := s.SetRunning(); err != nil {
			return nil, err
		}
	}
	return s, nil
}
