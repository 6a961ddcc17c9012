package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// The wasserstein contract: W and sigma = W/ε for the minimal framework form.
func TestWassersteinContract(t *testing.T) {
	fw := write(t, "f.json", `{"records": 4, "domain": [0, 1], "query": "sum", "thetas": [{"joint": [
	  [[0,0,0,0], "1/10"], [[1,0,0,0], 0.05], [[0,1,0,0], 0.05], [[1,1,1,1], "4/5"]]}]}`)
	v := runJSON(t, "wasserstein", "--framework", fw, "--epsilon", "0.5", "--json")
	// X2 = 0: N ∈ {0, 1} w.p. 2/3, 1/3; X2 = 1: N ∈ {1, 4} w.p. 1/17, 16/17.
	// Quantile coupling: 0↔1 up to 1/17, then 0↔4 — W = 4 for X2 (and X1).
	if v["W"].(float64) != 4 || v["sigma"].(float64) != 8 || v["W_exact"] != "4" {
		t.Fatalf("contract: %v", v)
	}
	v = runJSON(t, "wasserstein", "--framework", "../../framework/testdata/flu.json", "--epsilon", "1", "--json")
	if v["W"].(float64) != 2 || v["sigma"].(float64) != 2 || v["group_dp"].(map[string]any)["sensitivity"].(float64) != 4 {
		t.Fatalf("flu: %v", v)
	}
	if rel := v["released"].([]any); len(rel) != 1 || math.IsNaN(rel[0].(float64)) {
		t.Fatalf("release %v", v["released"])
	}
}

func TestWassersteinErrors(t *testing.T) {
	bad := write(t, "bad.json", `{"records": 2, "domain": [0, 1], "thetas": [{"joint": [[[0,0], 0.5], [[1,1], 0.4]]}]}`)
	for i, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"wasserstein", "--framework", bad, "--epsilon", "1"}, "sum to 9/10"},
		{[]string{"wasserstein", "--epsilon", "1"}, "--framework FILE is required"},
		{[]string{"wasserstein", "--framework", "../../framework/testdata/flu.json", "--epsilon", "0"}, "--epsilon"},
		{[]string{"wasserstein", "--framework", "../../framework/testdata/flu.json", "--epsilon", "1", "--delta", "1"}, "--delta"},
		{[]string{"wasserstein", "--framework", "../../framework/testdata/flu.json", "--epsilon", "1", "--data", "1,2,0,0"}, "not in the domain"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := run(c.args...)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%v: want %q, got %v", c.args, c.msg, err)
			}
		})
	}
}

func TestRobustCLI(t *testing.T) {
	v := runJSON(t, "robust", "--framework", "../../framework/testdata/flu.json", "--adversary", "../../framework/testdata/flu_adversary.json", "--epsilon", "1", "--json")
	bs := v["beliefs"].([]any)
	if len(bs) != 2 {
		t.Fatalf("beliefs %v", bs)
	}
	for _, b := range bs {
		m := b.(map[string]any)
		if m["delta"].(float64) <= 0 || m["wasserstein_actual_loss"].(float64) > m["guarantee"].(float64) {
			t.Errorf("belief %v", m)
		}
	}
	if _, err := run("robust", "--framework", "../../framework/testdata/flu.json", "--epsilon", "1"); err == nil {
		t.Error("missing --adversary accepted")
	}
}

func TestBNCLI(t *testing.T) {
	v := runJSON(t, "bn", "--framework", "../../framework/testdata/tree30.json", "--epsilon", "5", "--json")
	if v["sigma"].(float64) <= 0 || v["sigma"].(float64) >= 30/5.0 || v["nearby"].(float64) < 1 {
		t.Fatalf("tree: %v", v)
	}
	cyc := write(t, "cyc.json", `{"domain": [0, 1], "thetas": [{"network": [
	  {"name": "A", "parents": ["B"], "cpt": [[0.5, 0.5], [0.5, 0.5]]},
	  {"name": "B", "parents": ["A"], "cpt": [[0.5, 0.5], [0.5, 0.5]]}]}]}`)
	if _, err := run("bn", "--framework", cyc, "--epsilon", "1"); err == nil || !strings.Contains(err.Error(), "directed cycle") {
		t.Fatalf("cycle: %v", err)
	}
	if _, err := run("bn", "--framework", "../../framework/testdata/flu.json", "--epsilon", "1"); err == nil || !strings.Contains(err.Error(), "not a Bayesian network") {
		t.Fatalf("joint given to bn: %v", err)
	}
}

func TestComposeCLI(t *testing.T) {
	v := runJSON(t, "compose", "--log", "../../compose/testdata/releases.json", "--json")
	ds := v["datasets"].([]any)
	alice := ds[0].(map[string]any)["best"].(map[string]any)
	bob := ds[1].(map[string]any)["best"].(map[string]any)
	if alice["rule"] != "mqm-parallel" || alice["epsilon"].(float64) > 0.51 || alice["epsilon"].(float64) < 0.5 {
		t.Errorf("alice %v", alice)
	}
	if bob["rule"] != "mqm-sequential" || bob["epsilon"].(float64) != 1.5 {
		t.Errorf("bob %v", bob)
	}
	lg := write(t, "log.json", `{"datasets": [{"name": "d", "length": 10}],
	  "releases": [{"name": "a", "dataset": "d", "mechanism": "pufferfish", "epsilon": 1},
	               {"name": "b", "dataset": "d", "mechanism": "pufferfish", "epsilon": 1}]}`)
	if _, err := run("compose", "--log", lg); err == nil || !strings.Contains(err.Error(), "no composition rule applies") {
		t.Errorf("two generic releases: %v", err)
	}
	lg = write(t, "log2.json", `{"datasets": [{"name": "d", "length": 10}],
	  "releases": [{"name": "a", "dataset": "d", "mechanism": "magic", "epsilon": 1}]}`)
	if _, err := run("compose", "--log", lg); err == nil || !strings.Contains(err.Error(), `unknown mechanism "magic"`) {
		t.Errorf("bad mechanism: %v", err)
	}
}
