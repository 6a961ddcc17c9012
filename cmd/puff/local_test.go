package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/bdp"
)

func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, err := run(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: not one JSON object: %v\n%s", args, err, out)
	}
	return v
}

// The flip contract: dp_flip, published_flip, certified_flip (every
// length), checked against the definitions.
func TestLocalFlipContract(t *testing.T) {
	v := runJSON(t, "local", "flip", "--theta", "0.4", "--epsilon", "4", "--json")
	if got := v["dp_flip"].(float64); math.Abs(got-1/(math.Exp(4)+1)) > 1e-15 {
		t.Errorf("dp_flip %v", got)
	}
	if got := v["published_flip"].(float64); math.Abs(got-0.03795694274980815) > 1e-12 {
		t.Errorf("published_flip %v", got)
	}
	cert := v["certified_flip"].(float64)
	ch, _ := bdp.SymmetricChain(0.4)
	for _, n := range []int{5, 50} {
		m, _ := bdp.RandomizedResponse(cert, cert)
		if l, _ := bdp.Worst(ch, m, n, bdp.AnyKnown); l.Loss > 4 {
			t.Errorf("certified_flip %v leaks %v at n=%d", cert, l.Loss, n)
		}
	}
	if !(cert > v["published_flip"].(float64)) {
		t.Errorf("certified %v not above published %v", cert, v["published_flip"])
	}
	// A deterministic chain needs a fair coin.
	v = runJSON(t, "local", "flip", "--theta", "0", "--epsilon", "1", "--json")
	if v["certified_flip"].(float64) != 0.5 {
		t.Errorf("θ = 0: certified %v", v["certified_flip"])
	}
}

// The loss contract: loss (natural log of the worst BDPL) and adversary.
func TestLocalLossContract(t *testing.T) {
	rho := 0.03795694274980815 // ρ*(0.4, 4)
	v := runJSON(t, "local", "loss", "--theta", "0.4", "--flip", "0.03795694274980815", "--length", "5", "--json")
	if got := v["loss"].(float64); math.Abs(got-4.1109124264609616) > 1e-9 {
		t.Errorf("loss %.17g", got)
	}
	adv, ok := v["adversary"].(map[string]any)
	if !ok || adv["target"].(float64) != 3 || len(adv["known"].([]any)) != 2 {
		t.Errorf("adversary %v", v["adversary"])
	}
	v = runJSON(t, "local", "loss", "--theta", "0.4", "--flip", "0.03795694274980815", "--length", "inf", "--knowledge", "none", "--json")
	if got := v["loss"].(float64); math.Abs(got-4) > 1e-9 || v["length"] != "inf" {
		t.Errorf("K = ∅ every length: %v", v)
	}
	v = runJSON(t, "local", "loss", "--theta", "0.4", "--flip", "0.03795694274980815", "--length", "7", "--knowledge", "all", "--json")
	if got := v["loss"].(float64); math.Abs(got-math.Log((1-rho)/rho)) > 1e-12 {
		t.Errorf("K = all others: %v", got)
	}
}

func TestLocalAttack(t *testing.T) {
	v := runJSON(t, "local", "attack", "--theta", "0.02", "--epsilon", "0.5", "--length", "30", "--json")
	rows := v["rows"].([]any)
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	dp := rows[0].(map[string]any)
	ca := dp["correlation_aware"].(map[string]any)
	if dp["mechanism"] != "dp" || math.Abs(ca["success"].(float64)-0.831215) > 5e-7 || ca["exact"] != true {
		t.Errorf("dp row %v", dp)
	}
	cert := rows[2].(map[string]any)["correlation_aware"].(map[string]any)
	if cert["implied_epsilon"].(float64) > 0.5 {
		t.Errorf("certified row leaks %v", cert)
	}
	// Beyond exact enumeration: Monte Carlo with an interval.
	v = runJSON(t, "local", "attack", "--theta", "0.1", "--epsilon", "1", "--length", "60", "--trials", "2000", "--json")
	ca = v["rows"].([]any)[0].(map[string]any)["correlation_aware"].(map[string]any)
	if ca["exact"] != false || ca["ci95"] == nil || ca["trials"].(float64) != 2000 {
		t.Errorf("Monte Carlo row %v", ca)
	}
}

func TestLocalSanitize(t *testing.T) {
	data := write(t, "d.csv", "series,time,state\na,1,rest\na,2,rest\na,3,active\nb,10,active\nb,11,active\n")
	out, err := run("local", "sanitize", "--data", data, "--flip", "0.2")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 6 || strings.Join(recs[0], ",") != "series,time,state" {
		t.Fatalf("output %q (%v)", out, err)
	}
	wantKeys := []string{"a,1", "a,2", "a,3", "b,10", "b,11"}
	for i, r := range recs[1:] {
		if r[0]+","+r[1] != wantKeys[i] || (r[2] != "rest" && r[2] != "active") {
			t.Fatalf("row %d: %v", i+1, r)
		}
	}
	if _, err := run("local", "sanitize", "--data", data, "--epsilon", "1", "--fit"); err != nil {
		t.Fatal(err)
	}
	three := write(t, "t.csv", "state\na\nb\nc\n")
	for _, args := range [][]string{
		{"local", "sanitize", "--data", three, "--flip", "0.2"},
		{"local", "sanitize", "--data", data, "--flip", "0.7"},
		{"local", "sanitize", "--data", data},
		{"local", "sanitize", "--data", data, "--epsilon", "1"},
		{"local", "sanitize", "--data", data, "--epsilon", "1", "--theta", "0.1", "--mechanism", "nope"},
		{"local", "flip", "--theta", "1.5", "--epsilon", "1"},
		{"local", "flip", "--theta", "0.1", "--epsilon", "-1"},
		{"local", "loss", "--theta", "0.1", "--flip", "0.2"},
		{"local", "loss", "--theta", "0.1", "--flip", "0.2", "--length", "x"},
		{"local", "loss", "--theta", "0.1", "--flip", "0.2", "--length", "4", "--knowledge", "some"},
		{"local", "attack", "--theta", "0.1", "--epsilon", "1", "--target", "99"},
	} {
		out, err := run(args...)
		if err == nil || out != "" {
			t.Errorf("%v: err=%v, stdout %q", args, err, out)
		}
	}
}

// The learned attacker's contract: one JSON object with the four
// accuracies, the flip and ε; the same seed gives the same numbers.
func TestLocalAttackLSTM(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network")
	}
	args := []string{"local", "attack", "--adversary", "lstm", "--data", "../../examples/n10_heart_binary.csv.gz", "--states", "low,high",
		"--epsilon", "1", "--flip", "dp", "--lstm-examples", "300", "--lstm-epochs", "1", "--lstm-half-window", "4", "--json"}
	out, err := run(args...)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"lstm_accuracy", "posterior_accuracy", "viterbi_accuracy", "single_accuracy", "epsilon", "accuracy_bound"} {
		if v, ok := r[k].(float64); !ok || v <= 0 || v > 1 && k != "epsilon" {
			t.Fatalf("%s = %v in %s", k, r[k], out)
		}
	}
	if r["flip"] != "dp" || r["epsilon"] != 1.0 {
		t.Fatalf("%s", out)
	}
	// the posterior attacker knows the chain: on the DP flip it beats reading the output as is
	if r["posterior_accuracy"].(float64) <= r["single_accuracy"].(float64) {
		t.Fatalf("%s", out)
	}
	again, _ := run(args...)
	var r2 map[string]any
	json.Unmarshal([]byte(again), &r2)
	if r2["lstm_accuracy"] != r["lstm_accuracy"] || r2["single_accuracy"] != r["single_accuracy"] {
		t.Fatalf("not reproducible:\n%s\n%s", out, again)
	}
	for _, bad := range [][]string{
		{"local", "attack", "--adversary", "lstm", "--epsilon", "1"},
		{"local", "attack", "--adversary", "lstm", "--data", "../../examples/n10_heart_binary.csv.gz", "--states", "low,high", "--epsilon", "1", "--flip", "magic"},
		{"local", "attack", "--adversary", "lstm", "--data", write(t, "three.csv", "series,time,state\na,1,x\na,2,y\na,3,z\n"), "--epsilon", "1"},
		{"local", "attack", "--adversary", "neural", "--epsilon", "1"},
		{"local", "attack", "--adversary", "lstm", "--data", "../../examples/n10_heart_binary.csv.gz", "--states", "low,high", "--epsilon", "1", "--lstm-hidden", "0"},
	} {
		if out, err := run(bad...); err == nil || out != "" {
			t.Errorf("%v: %v %q", bad, err, out)
		}
	}
}
