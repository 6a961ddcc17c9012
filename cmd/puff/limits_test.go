package main

import (
	"fmt"
	"strings"
	"testing"
)

// Inputs that once panicked or hung: each now gets a clear error naming
// the size (or, where the answer is cheap, the answer).
func TestSizeLimits(t *testing.T) {
	var chain strings.Builder
	chain.WriteString(`{"domain": [0, 1], "query": "sum", "thetas": [{"network": [{"name": "X0", "parents": [], "cpt": [[0.5, 0.5]]}`)
	for i := 1; i < 200; i++ {
		fmt.Fprintf(&chain, `, {"name": "X%d", "parents": ["X%d"], "cpt": [[0.9, 0.1], [0.2, 0.8]]}`, i, i-1)
	}
	chain.WriteString("]}]}")
	bn200 := write(t, "bn200.json", chain.String())
	interval := write(t, "iv.json", `{"binary_interval": {"lo": 0.1, "hi": 0.9, "step": 1e-7}}`)
	bigLog := write(t, "log.json", `{"datasets": [{"name": "d", "length": 1000000000000000000}],
	  "releases": [{"name": "a", "dataset": "d", "mechanism": "dp", "epsilon": 1, "start": 1, "end": 5},
	               {"name": "b", "dataset": "d", "mechanism": "dp", "epsilon": 1, "start": 3, "end": 999999999999999999}]}`)
	tinyProb := write(t, "m.json", `{"states": ["a", "b"], "observations": ["x", "y"],
	  "transition": [[1, 0], [0, 1]], "emission": [["1e-1000000", "1 - 1e-1000000"], [0.5, 0.5]],
	  "secrets": [{"name": "a vs b", "pi": [1, 0], "tau": [0, 1]}]}`)
	given := write(t, "g.json", `{"states": ["0", "1", "2"], "chains": [{"transition": [[0.8, 0.15, 0.05], [0.1, 0.7, 0.2], [0.3, 0.3, 0.4]], "initial": [1, 0, 0]}]}`)
	audit := write(t, "a.json", twoState)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"local loss, length 1e18", []string{"local", "loss", "--theta", "0.2", "--flip", "0.3", "--length", "1000000000000000000"}, "exceeds"},
		{"local attack, length 1e9", []string{"local", "attack", "--theta", "0.02", "--epsilon", "0.5", "--length", "1000000000"}, "exceeds"},
		{"compose, length 1e18", []string{"compose", "--log", bigLog, "--json"}, ""},
		{"binary interval, step 1e-7", []string{"scale", "--class", interval, "--length", "10"}, "more than the limit"},
		{"verify audit, length 1e6", []string{"verify", "audit", "--class", audit, "--length", "1000000"}, "exceeds 10"},
		{"bn, 200-node chain", []string{"bn", "--framework", bn200, "--epsilon", "1"}, "limit"},
		{"HMM probability 1e-1000000", []string{"verify", "loss", tinyProb, "--length", "2"}, "exponent"},
		{"scale, fixed initial, length 1e9", []string{"scale", "--class", given, "--length", "1000000000", "--json"}, ""},
		// these two panicked (51^8 answer vectors) or ran out of memory
		{"above threshold, 8 queries in 0..50", []string{"verify", "loss", "--builtin", "above-threshold", "--queries", "8", "--range", "50"}, "answer vectors"},
		{"above threshold, 8 queries in 0..2", []string{"verify", "loss", "--builtin", "above-threshold", "--queries", "8"}, "hidden states"},
		{"geometric, range 10^8", []string{"verify", "loss", "--builtin", "geometric", "--range", "100000000"}, "at most"},
		{"noisy max, 24 queries in 0..1 (4.8e9 ratios)", []string{"verify", "loss", "--builtin", "noisy-max", "--queries", "24", "--range", "1", "--neighbours", "any"}, "ratios exceed"},
		{"noisy max, 12^12 answer vectors", []string{"verify", "loss", "--builtin", "noisy-max", "--queries", "12", "--range", "11"}, "answer vectors"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(c.args...)
			if c.want == "" {
				if err != nil || !strings.Contains(out, "{") {
					t.Fatalf("error %v, output %q", err, out)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if out != "" {
				t.Fatalf("printed %q despite the error", out)
			}
		})
	}
}

// Inputs that were silently accepted, or answers that could not be printed.
func TestNoSilentAcceptance(t *testing.T) {
	empty := write(t, "empty.json", `{"datasets": [], "releases": []}`)
	huge := write(t, "huge.json", `{"datasets": [{"name": "d", "length": 10}],
	  "releases": [{"name": "a", "dataset": "d", "mechanism": "dp", "epsilon": 1e308},
	               {"name": "b", "dataset": "d", "mechanism": "dp", "epsilon": 1e308}]}`)
	model := write(t, "m.json", `{"states": ["a", "b"], "observations": ["x", "y"], "parameters": {"p": "1/4"},
	  "transition": [[1, 0], [0, 1]], "emission": [["p", "1-p"], ["1-p", "p"]],
	  "secrets": [{"name": "a vs b", "pi": [1, 0], "tau": [0, 1]}]}`)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"release with ε = 1e-300", []string{"release", "--epsilon", "1e-300", "--json"}, "beyond what can be sampled"},
		{"empty compose log", []string{"compose", "--log", empty}, "no datasets"},
		{"infinite compose bound", []string{"compose", "--log", huge, "--json"}, "no composition rule applies"},
		{"sweep grid beyond the cap", []string{"verify", "sweep", model, "--epsilon", "ln(2)", "--length", "2", "--grid", "p=0:1:1/20000"}, "more than 10001"},
		{"ε above 700", []string{"local", "flip", "--theta", "0.3", "--epsilon", "1e308"}, "ε ≤ 700"},
		{"ε as a fraction", []string{"wasserstein", "--framework", "../../framework/testdata/flu.json", "--epsilon", "1/0"}, "division by zero"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := run(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
	// one ε syntax: a fraction and ln(r) are accepted everywhere
	for _, args := range [][]string{
		{"wasserstein", "--framework", "../../framework/testdata/flu.json", "--epsilon", "1/2", "--json"},
		{"scale", "--class", write(t, "c.json", twoState), "--length", "10", "--epsilon", "ln(2)", "--json"},
		{"local", "flip", "--theta", "3/10", "--epsilon", "ln(3)", "--json"},
	} {
		runJSON(t, args...)
	}
	// an infinite loss is a valid answer: JSON null with "infinite": true
	v := runJSON(t, "local", "loss", "--theta", "0.3", "--flip", "0", "--length", "5", "--json")
	if v["loss"] != nil || v["infinite"] != true {
		t.Fatalf("flip 0: %v", v)
	}
}

// Every JSON input is strict: a duplicate key or trailing data is an error
// naming the line, never "the last key wins".
func TestStrictJSONInputs(t *testing.T) {
	dupClass := write(t, "dup.json", "{\"states\": [\"0\", \"1\"],\n \"chains\": [{\"transition\": [[0.8, 0.2], [0.3, 0.7]], \"initial\": \"stationary\", \"initial\": [1, 0]}]}")
	trailing := write(t, "tr.json", twoState+"\n}")
	dupLog := write(t, "log.json", `{"datasets": [{"name": "d", "length": 10, "length": 20}], "releases": []}`)
	dupModel := write(t, "m.json", `{"states": ["a"], "states": ["a", "b"], "observations": ["x"], "transition": [[1]], "emission": [[1]], "secrets": []}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scale", "--class", dupClass, "--length", "5"}, `line 2, column 79: duplicate key "initial"`},
		{[]string{"scale", "--class", trailing, "--length", "5"}, "line 2, column 1: unexpected data after the JSON document"},
		{[]string{"compose", "--log", dupLog}, `duplicate key "length"`},
		{[]string{"verify", "loss", dupModel, "--length", "1"}, `duplicate key "states"`},
	} {
		if _, err := run(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args[:2], err, c.want)
		}
	}
}
