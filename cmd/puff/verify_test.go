package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The verify contract: loss, ratio (reduced p/q), witness.
func TestVerifyLossContract(t *testing.T) {
	v := runJSON(t, "verify", "loss", "--builtin", "noisy-max", "--queries", "3", "--returns", "index", "--neighbours", "any", "--json")
	if v["ratio"] != "25/7" || math.Abs(v["loss"].(float64)-math.Log(25.0/7)) > 1e-12 {
		t.Errorf("noisy-max index any n=3: %v", v)
	}
	w, ok := v["witness"].(map[string]any)
	if !ok || len(w["observations"].([]any)) != 1 || w["secret"] == "" {
		t.Errorf("witness %v", v["witness"])
	}
	v = runJSON(t, "verify", "loss", "--builtin", "noisy-max", "--queries", "5", "--returns", "value", "--neighbours", "one", "--json")
	if v["ratio"] != "2/1" {
		t.Errorf("wrong Noisy Max n=5: %v", v["ratio"])
	}
	v = runJSON(t, "verify", "check", "--builtin", "example71", "--p1", "0.2", "--p2", "0.4", "--epsilon", "ln(2)", "--json")
	if v["verdict"] != "holds" || v["ratio"] != "911/550" || v["epsilon_exact"] != true {
		t.Errorf("Example 7.1: %v", v)
	}
	v = runStatus(t, exitViolated, "verify", "check", "--builtin", "rr", "--keep", "3/4", "--epsilon", "1", "--json")
	if v["verdict"] != "violated" { // ln 3 > 1
		t.Errorf("rr: %v", v)
	}
	// Discretised Above Threshold leaks ln(3/2) per ⊥ here: (3/2)^4 at 4 queries.
	v = runJSON(t, "verify", "loss", "--builtin", "above-threshold", "--queries", "4", "--alpha", "2/3", "--json")
	if v["ratio"] != "81/16" || v["length"].(float64) != 4 {
		t.Errorf("above-threshold: %v", v)
	}
	// Sparse Vector with cutoff 2 (checked against direct enumeration in
	// package hmm): the same ratio here, from a ⊥⊤⊥⊤ witness.
	v = runJSON(t, "verify", "loss", "--builtin", "sparse-vector", "--queries", "4", "--cutoff", "2", "--alpha", "2/3", "--json")
	if v["ratio"] != "81/16" {
		t.Errorf("sparse-vector: %v", v)
	}
	model := write(t, "m.json", `{"states": ["h", "s"], "observations": ["ok", "cough"], "parameters": {"p": "1/10"},
 "transition": [["1-p", "p"], ["p", "1-p"]], "emission": [["3/4", "1/4"], ["1/4", "3/4"]],
 "prior": ["1/2", "1/2"], "secrets": [{"name": "sick", "pi_event": ["s"], "tau_event": ["h"]}]}`)
	v = runJSON(t, "verify", "sweep", model, "--epsilon", "ln(4)", "--length", "3", "--grid", "p=1/10:1/2:1/5", "--json")
	if rows := v["rows"].([]any); len(rows) != 3 {
		t.Errorf("sweep rows %v", rows)
	}
	for _, args := range [][]string{
		{"verify", "loss", "--builtin", "nope"},
		{"verify", "loss"},
		{"verify", "loss", model},
		{"verify", "loss", "--builtin", "noisy-max", "--returns", "max"},
		{"verify", "check", "--builtin", "rr", "--epsilon", "ln(1/2)"},
		{"verify", "check", "--builtin", "rr"},
		{"verify", "sweep", model, "--epsilon", "ln(2)", "--length", "2", "--grid", "q=0:1:1/2"},
		{"verify", "loss", write(t, "bad.json", `{"states": ["a"], "observations": ["x"], "transition": [["1/2"]], "emission": [[1]], "secrets": [{"pi": [1], "tau": [1]}]}`), "--length", "2"},
	} {
		if out, err := run(args...); err == nil || out != "" {
			t.Errorf("%v: err=%v stdout %q", args, err, out)
		}
	}
}

// sweep --plot writes the region as PNG or SVG; other extensions are refused.
func TestSweepPlot(t *testing.T) {
	model := write(t, "m.json", `{"states": ["h", "s"], "observations": ["ok", "cough"], "parameters": {"p": "1/10", "e": "3/4"},
 "transition": [["1-p", "p"], ["p", "1-p"]], "emission": [["e", "1-e"], ["1-e", "e"]],
 "prior": ["1/2", "1/2"], "secrets": [{"name": "sick", "pi_event": ["s"], "tau_event": ["h"]}]}`)
	dir := t.TempDir()
	for _, name := range []string{"curve.png", "curve.svg"} {
		out := filepath.Join(dir, name)
		if _, err := run("verify", "sweep", model, "--epsilon", "ln(4)", "--length", "2", "--grid", "p=1/10:1/2:1/10", "--plot", out); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(out); err != nil || st.Size() < 1000 {
			t.Fatalf("%s: %v", name, err)
		}
	}
	out := filepath.Join(dir, "region.png")
	if _, err := run("verify", "sweep", model, "--epsilon", "ln(4)", "--length", "2", "--grid", "p=1/10:1/2:1/5", "--grid", "e=3/5:9/10:1/10", "--plot", out); err != nil {
		t.Fatal(err)
	}
	if _, err := run("verify", "sweep", model, "--epsilon", "ln(4)", "--length", "2", "--grid", "p=1/10:1/2:1/10", "--plot", filepath.Join(dir, "x.jpg")); err == nil || !strings.Contains(err.Error(), ".png, .svg or .pdf") {
		t.Fatalf("jpg: %v", err)
	}
}

// --arithmetic float gives an enclosure containing the exact loss and says
// so; auto falls back to exact on the boundary.
func TestVerifyFloatArithmetic(t *testing.T) {
	v := runJSON(t, "verify", "loss", "--builtin", "example71", "--p1", "0.2", "--p2", "0.4", "--length", "6", "--arithmetic", "float", "--json")
	exact := math.Log(911.0 / 550)
	if v["loss_lower"].(float64) > exact || v["loss_upper"].(float64) < exact || !strings.HasPrefix(v["arithmetic"].(string), "float64") {
		t.Fatalf("float loss %v", v)
	}
	v = runJSON(t, "verify", "check", "--builtin", "example71", "--p1", "0.2", "--p2", "0.4", "--length", "6", "--epsilon", "ln(911/550)", "--arithmetic", "auto", "--json")
	if v["verdict"] != "holds" || v["ratio"] != "911/550" || !strings.HasPrefix(v["arithmetic"].(string), "exact") {
		t.Fatalf("auto on the boundary: %v", v)
	}
	v = runStatus(t, exitUndecided, "verify", "check", "--builtin", "example71", "--p1", "0.2", "--p2", "0.4", "--length", "6", "--epsilon", "ln(911/550)", "--arithmetic", "float", "--json")
	if v["verdict"] != "undecided" {
		t.Fatalf("float on the boundary: %v", v)
	}
	if _, err := run("verify", "loss", "--builtin", "rr", "--arithmetic", "fast"); err == nil {
		t.Fatal("--arithmetic fast accepted")
	}
}

// The audit of puff release: MQM holds (tightly at ε = 8), plain DP fails.
func TestVerifyAudit(t *testing.T) {
	cl := write(t, "c.json", `{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"}]}`)
	v := runJSON(t, "verify", "audit", "--class", cl, "--length", "4", "--epsilon", "8", "--method", "exact", "--json")
	if v["verdict"] != "holds" || v["loss"].(float64) > 8 || v["loss"].(float64) < 7 {
		t.Errorf("exact: %v", v)
	}
	v = runJSON(t, "verify", "audit", "--class", cl, "--length", "4", "--epsilon", "1", "--method", "dp", "--json")
	if v["verdict"] != "violated" {
		t.Errorf("dp: %v", v)
	}
	two := write(t, "c2.json", `{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"},
	  {"transition": [[0.7, 0.3], [0.3, 0.7]], "initial": "stationary"}]}`)
	if _, err := run("verify", "audit", "--class", two, "--epsilon", "1"); err == nil || !strings.Contains(err.Error(), "exactly one chain") {
		t.Errorf("two chains: %v", err)
	}
}

// runStatus runs a command that prints its answer and ends with a status.
func runStatus(t *testing.T, code int, args ...string) map[string]any {
	t.Helper()
	out, err := run(args...)
	var se *statusError
	if !errors.As(err, &se) || se.code != code {
		t.Fatalf("%v: error %v, want exit status %d", args, err, code)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: not one JSON object: %v\n%s", args, err, out)
	}
	return v
}
