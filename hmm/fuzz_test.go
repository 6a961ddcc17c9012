package hmm

import (
	"strings"
	"testing"
)

// FuzzParseFile: no model file makes parsing or building panic.
func FuzzParseFile(f *testing.F) {
	f.Add(`{"states": ["h", "s"], "observations": ["ok", "cough"], "parameters": {"p": "1/10"},
	 "transition": [["1-p", "p"], ["p", "1-p"]], "emission": [["3/4", "1/4"], ["1/4", "3/4"]],
	 "prior": ["1/2", "1/2"], "secrets": [{"name": "sick", "pi_event": ["s"], "tau_event": ["h"]}]}`)
	f.Add(`{"states": ["a", "b"], "observations": ["x"], "transition": [[1, 0], [0, 1]], "emission": [[1], [1]],
	 "secrets": [{"name": "a vs b", "pi": [1, 0], "tau": [0, 1]}]}`)
	f.Add(`{"states": [], "observations": []}`)
	f.Fuzz(func(t *testing.T, s string) {
		file, err := parseFile(strings.NewReader(s), "fuzz.json")
		if err != nil {
			return
		}
		_, _, _ = file.Build("fuzz.json", nil)
	})
}
