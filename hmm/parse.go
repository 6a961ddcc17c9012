package hmm

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// File is the JSON model format (README "Verifying a mechanism"):
//
//	{
//	  "states": ["s0", "s1"],
//	  "observations": ["a", "b"],
//	  "parameters": {"p": "1/5"},
//	  "transition": [["1-p", "p"], [0, 1]],
//	  "emission": [["1/2", "1/2"], [0.25, 0.75]],
//	  "secrets": [{"name": "s0 vs s1", "pi": [1, 0], "tau": [0, 1]}]
//	}
//
// Probabilities are JSON numbers (read exactly as decimals) or strings:
// fractions "1/6", decimals "0.25", or arithmetic (+ − * / and
// parentheses) over numbers and parameter names, evaluated exactly.
// Instead of explicit pairs a secret can be a prior and two events, the
// tool conditioning the prior on each: "prior": [...], "secrets":
// [{"name": ..., "pi_event": ["s0"], "tau_event": ["s1"]}].
type File struct {
	States     []string                   `json:"states"`
	Obs        []string                   `json:"observations"`
	Parameters map[string]json.RawMessage `json:"parameters"`
	Transition [][]json.RawMessage        `json:"transition"`
	Emission   [][]json.RawMessage        `json:"emission"`
	Prior      []json.RawMessage          `json:"prior"`
	Secrets    []fileSecret               `json:"secrets"`
}

type fileSecret struct {
	Name     string            `json:"name"`
	Pi       []json.RawMessage `json:"pi"`
	Tau      []json.RawMessage `json:"tau"`
	PiEvent  []string          `json:"pi_event"`
	TauEvent []string          `json:"tau_event"`
}

// parseFile reads a model file; name is used in error messages. Unknown
// fields are errors.
func parseFile(r io.Reader, name string) (*File, error) {
	data, err := strictjson.ReadAll(r, name)
	if err != nil {
		return nil, err
	}
	var f File
	if err := strictjson.Decode(data, name, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// ParameterNames lists the file's parameters.
func (f *File) ParameterNames() []string {
	var out []string
	for k := range f.Parameters {
		out = append(out, k)
	}
	return out
}

// Build evaluates the file into a model and its secret pairs, with
// parameter values overridden by set (for sweeps). Errors name the file
// and the offending entry (state, row, column).
func (f *File) Build(name string, set map[string]*big.Rat) (*Model, []Secret, error) {
	errf := func(format string, a ...any) error { return fmt.Errorf("%s: "+format, append([]any{name}, a...)...) }
	params := map[string]*big.Rat{}
	for p, raw := range f.Parameters {
		if !ratexpr.IsIdent(p) {
			return nil, nil, errf("parameter name %q is not an identifier", p)
		}
		v, err := ratexpr.JSON(raw, nil)
		if err != nil {
			return nil, nil, errf("parameter %q: %v", p, err)
		}
		params[p] = v
	}
	for p, v := range set {
		if _, ok := params[p]; !ok {
			return nil, nil, errf("no parameter %q to set (parameters: %s)", p, strings.Join(f.ParameterNames(), ", "))
		}
		params[p] = v
	}
	k := len(f.States)
	if k == 0 {
		return nil, nil, errf("\"states\" is empty")
	}
	idx := map[string]int{}
	for i, s := range f.States {
		if _, dup := idx[s]; dup {
			return nil, nil, errf("state %q listed twice", s)
		}
		idx[s] = i
	}
	if len(f.Obs) == 0 {
		return nil, nil, errf("\"observations\" is empty")
	}
	m := &Model{States: f.States, Obs: f.Obs}
	if len(f.Transition) != k {
		return nil, nil, errf("\"transition\" has %d rows for %d states", len(f.Transition), k)
	}
	for s, row := range f.Transition {
		if len(row) != k {
			return nil, nil, errf("transition row of state %q has %d entries for %d states", f.States[s], len(row), k)
		}
		var entries []Entry
		for t, raw := range row {
			v, err := ratexpr.JSON(raw, params)
			if err != nil {
				return nil, nil, errf("transition %q → %q: %v", f.States[s], f.States[t], err)
			}
			if v.Sign() != 0 {
				entries = append(entries, Entry{To: t, P: v})
			}
		}
		m.Trans = append(m.Trans, entries)
	}
	if len(f.Emission) != k {
		return nil, nil, errf("\"emission\" has %d rows for %d states", len(f.Emission), k)
	}
	for s, row := range f.Emission {
		if len(row) != len(f.Obs) {
			return nil, nil, errf("emission row of state %q has %d entries for %d observations", f.States[s], len(row), len(f.Obs))
		}
		out := make([]*big.Rat, len(row))
		for o, raw := range row {
			v, err := ratexpr.JSON(raw, params)
			if err != nil {
				return nil, nil, errf("emission of %q by state %q: %v", f.Obs[o], f.States[s], err)
			}
			out[o] = v
		}
		m.Emit = append(m.Emit, out)
	}
	if err := m.Validate(); err != nil {
		return nil, nil, errf("%v", err)
	}
	vec := func(what string, raws []json.RawMessage) ([]*big.Rat, error) {
		if len(raws) != k {
			return nil, errf("%s has %d entries for %d states", what, len(raws), k)
		}
		out := make([]*big.Rat, k)
		for s, raw := range raws {
			v, err := ratexpr.JSON(raw, params)
			if err != nil {
				return nil, errf("%s of state %q: %v", what, f.States[s], err)
			}
			out[s] = v
		}
		return out, nil
	}
	var prior []*big.Rat
	if f.Prior != nil {
		var err error
		if prior, err = vec("prior", f.Prior); err != nil {
			return nil, nil, err
		}
	}
	if len(f.Secrets) == 0 {
		return nil, nil, errf("\"secrets\" is empty: give at least one pair")
	}
	var secrets []Secret
	for i, fs := range f.Secrets {
		sec := Secret{Name: fs.Name}
		if sec.Name == "" {
			sec.Name = fmt.Sprintf("secret %d", i+1)
		}
		switch {
		case fs.Pi != nil || fs.Tau != nil:
			if fs.PiEvent != nil || fs.TauEvent != nil {
				return nil, nil, errf("%s: give pi/tau or pi_event/tau_event, not both", sec.Name)
			}
			var err error
			if sec.Pi, err = vec(sec.Name+": pi", fs.Pi); err != nil {
				return nil, nil, err
			}
			if sec.Tau, err = vec(sec.Name+": tau", fs.Tau); err != nil {
				return nil, nil, err
			}
		default:
			if prior == nil {
				return nil, nil, errf("%s: events need a \"prior\"", sec.Name)
			}
			for j, ev := range [][]string{fs.PiEvent, fs.TauEvent} {
				var states []int
				for _, st := range ev {
					s, ok := idx[st]
					if !ok {
						return nil, nil, errf("%s: event state %q is not a state", sec.Name, st)
					}
					states = append(states, s)
				}
				d, err := condition(prior, states)
				if err != nil {
					return nil, nil, errf("%s: %v", sec.Name, err)
				}
				if j == 0 {
					sec.Pi = d
				} else {
					sec.Tau = d
				}
			}
		}
		if err := m.ValidateSecret(sec); err != nil {
			return nil, nil, errf("%v", err)
		}
		secrets = append(secrets, sec)
	}
	return m, secrets, nil
}
