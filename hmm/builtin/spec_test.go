package builtin

import (
	"errors"
	"strings"
	"testing"
)

// The rational parameters are read as written; an error in one of them
// (or in the name, or in a file's --set) is a *ParamError naming it, and
// nothing else is.
func TestSpec(t *testing.T) {
	s := Spec{Name: "rr", Params: Params{Queries: 3, Returns: "index", Neighbours: "one", Range: 2, Threshold: 1, Cutoff: 2},
		Alpha: "1/2", Keep: "1-1/4", P1: "1/5", P2: "2/5", AlphaThreshold: "1/2"}
	b, err := s.LoadBuiltin()
	if err != nil || b.Description == "" {
		t.Fatalf("%+v %v", b, err)
	}
	for _, c := range []struct {
		spec   func(*Spec)
		prefix string
	}{
		{func(s *Spec) { s.Keep = "x" }, "keep: "},
		{func(s *Spec) { s.AlphaThreshold = "1/" }, "alpha-threshold: "},
		{func(s *Spec) { s.Name = "nosuch" }, "builtin nosuch: "},
	} {
		bad := s
		c.spec(&bad)
		_, err := bad.LoadBuiltin()
		var pe *ParamError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.prefix) {
			t.Errorf("%+v: %v, want a ParamError starting %q", bad, err, c.prefix)
		}
	}
	var pe *ParamError
	if _, err := (Spec{Set: []string{"p=x"}}).LoadFile("../../examples/flu_hmm.json"); !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "set ") {
		t.Errorf("bad set: %v", err)
	}
	if _, err := (Spec{Set: []string{"p=1/5"}}).LoadFile("../../examples/flu_hmm.json"); err != nil {
		t.Errorf("good set: %v", err)
	}
	if _, err := (Spec{}).LoadFile("nosuch.json"); err == nil || errors.As(err, &pe) {
		t.Errorf("missing file: %v", err)
	}
}
