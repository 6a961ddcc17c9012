package builtin

import (
	"fmt"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/hmm"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// Spec selects a model as puff verify's flags do: a built-in by Name with
// its Params, the rational ones as written (fractions or expressions,
// read with package ratexpr when it is built), or a model file with
// parameter values Set (name=value).
type Spec struct {
	Name                                string
	Params                              Params
	Alpha, Keep, P1, P2, AlphaThreshold string
	Set                                 []string
}

// ParamError is an error in one of a Spec's parameters; its message
// starts with the parameter's name (alpha, keep, p1, p2, alpha-threshold,
// set, builtin).
type ParamError struct{ Err error }

func (e *ParamError) Error() string { return e.Err.Error() }
func (e *ParamError) Unwrap() error { return e.Err }

// LoadBuiltin builds the built-in the spec names.
func (s Spec) LoadBuiltin() (Model, error) {
	p := s.Params
	for _, r := range []struct {
		name, val string
		dst       **big.Rat
	}{{"alpha", s.Alpha, &p.Alpha}, {"keep", s.Keep, &p.Keep}, {"p1", s.P1, &p.P1}, {"p2", s.P2, &p.P2}, {"alpha-threshold", s.AlphaThreshold, &p.AlphaThreshold}} {
		v, err := ratexpr.Eval(r.val, nil)
		if err != nil {
			return Model{}, &ParamError{fmt.Errorf("%s: %v", r.name, err)}
		}
		*r.dst = v
	}
	b, err := Load(s.Name, p)
	if err != nil {
		return Model{}, &ParamError{fmt.Errorf("builtin %s: %w", s.Name, err)}
	}
	return b, nil
}

// LoadFile reads the model file at path and builds it with the spec's
// parameter values.
func (s Spec) LoadFile(path string) (Model, error) {
	file, err := hmm.ReadFile(path)
	if err != nil {
		return Model{}, err
	}
	set, err := hmm.ParseSet(s.Set)
	if err != nil {
		return Model{}, &ParamError{fmt.Errorf("set %w", err)}
	}
	m, secs, err := file.Build(path, set)
	return Model{Problem: hmm.Problem{Model: m, Secrets: secs}, Description: path}, err
}
