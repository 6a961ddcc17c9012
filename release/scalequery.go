package release

import (
	"context"
	"fmt"
	"io"

	"github.com/pufferfish-privacy/pufferfish/epsilon"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// ScaleQuery is what puff scale asks: σ for the class file at ClassPath
// on Length readings from step Start at ε with Method, or with Leakage the
// temporal leakage bounds' per-bin scale for windows of Length readings
// (0: any length), under Limits.
type ScaleQuery struct {
	ClassPath     string
	Length, Start int
	Epsilon       float64
	Method        mechanism.Name
	Leakage       bool
	Limits        Limits
}

// Answer is a computed answer as text (its JSON is the value itself).
type Answer interface{ WriteText(io.Writer) error }

// Compute checks the query, reads the class and computes the answer (a
// *LeakageReport with Leakage, else a *Scale with the class summarized);
// ctx stops the computation.
func (q ScaleQuery) Compute(ctx context.Context) (Answer, error) {
	if err := epsilon.Check(q.Epsilon); err != nil {
		return nil, err
	}
	if q.ClassPath == "" {
		return nil, fmt.Errorf("--class FILE is required")
	}
	if q.Length < 1 && !(q.Leakage && q.Length == 0) {
		return nil, fmt.Errorf("--length %d: must be ≥ 1 (0 with --leakage: any length)", q.Length)
	}
	if q.Start < 1 {
		return nil, fmt.Errorf("--start %d: must be ≥ 1 (the first time step of the chain is 1)", q.Start)
	}
	if q.Limits.MaxStates < 1 {
		return nil, fmt.Errorf("--max-states %d: want ≥ 1", q.Limits.MaxStates)
	}
	class, err := markov.ReadClassFile(q.ClassPath)
	if err != nil {
		return nil, err
	}
	if err := q.Limits.CheckStates(len(class.States)); err != nil {
		return nil, err
	}
	if q.Leakage {
		if !(q.Limits.MaxLeakageWork > 0) {
			return nil, fmt.Errorf("--max-leakage-work %g: want > 0", q.Limits.MaxLeakageWork)
		}
		return LeakageFor(ctx, class, q.Length, q.Epsilon, q.Limits)
	}
	if q.Method == mechanism.Exact {
		if !(q.Limits.MaxSearchWork >= 0) {
			return nil, fmt.Errorf("--max-search-work %g: want > 0 (0: the default)", q.Limits.MaxSearchWork)
		}
		var err error
		if ctx, err = q.Limits.CheckSearchWork(ctx, class, q.Length, q.Epsilon); err != nil {
			return nil, err
		}
	}
	s, err := ComputeScaleAtContext(ctx, class, mqm.Consecutive(q.Start, q.Length), q.Epsilon, q.Method)
	if err != nil {
		return nil, err
	}
	s.Class = Summarize(class, false)
	return s, nil
}
