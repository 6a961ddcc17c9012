package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A profile on the command line: 24 cells, every one with a window's
// fields, a total of ε, and the ledger charging exactly ε with the
// record's σ the σ each cell was drawn with (per-bin scale over L);
// --window and --profile together, or an unknown kind, are refused.
func TestReleaseProfile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "l.db")
	if _, err := run("ledger", "init", "--ledger", db, "--dataset", "meters", "--budget", "2"); err != nil {
		t.Fatal(err)
	}
	args := []string{"release", "--data", "../../examples/stream/day1.csv", "--series-col", "meter", "--class", "../../examples/stream/class.json", "--epsilon", "1/2", "--profile", "hour-of-day"}
	out, err := run(append(args, "--ledger", db, "--dataset", "meters", "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Kind    string `json:"profile_kind"`
		Profile []struct {
			Cell         string  `json:"cell"`
			Observations int     `json:"observations"`
			PerBinScale  float64 `json:"per_bin_scale"`
			Lipschitz    float64 `json:"lipschitz"`
			Histogram    []struct{ Value float64 }
		} `json:"profile"`
		Total  struct{ Epsilon float64 }
		Ledger struct{ Spent float64 }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Kind != "hour-of-day" || len(r.Profile) != 24 || r.Profile[7].Cell != "07" || r.Profile[7].Observations != 3 || len(r.Profile[7].Histogram) != 2 {
		t.Fatalf("%+v", r)
	}
	if r.Total.Epsilon != 0.5 || r.Ledger.Spent != 0.5 {
		t.Fatalf("total %v, ledger spent %v: want 0.5", r.Total.Epsilon, r.Ledger.Spent)
	}
	exp, err := run("ledger", "export", "--ledger", db, "--dataset", "meters", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Record struct {
			Epsilon float64 `json:"epsilon"`
			Exact   string  `json:"epsilon_exact"`
			Query   string  `json:"query"`
			Profile string  `json:"profile"`
			Sigma   float64 `json:"sigma"`
		} `json:"record"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(exp, "\n", 2)[0]), &e); err != nil {
		t.Fatal(err)
	}
	c := r.Profile[0]
	if e.Record.Epsilon != 0.5 || e.Record.Exact != "1/2" || e.Record.Query != "counts" || e.Record.Profile != "hour-of-day" || e.Record.Sigma*c.Lipschitz > c.PerBinScale || c.PerBinScale > e.Record.Sigma*c.Lipschitz*(1+1e-15) {
		t.Fatalf("record %+v, cell scale %v = σ·%v", e.Record, c.PerBinScale, c.Lipschitz)
	}
	text, err := run(args...)
	if err != nil || !strings.Contains(text, "total        ε = 0.5 by tpl-joint") || !strings.Contains(text, "\n23    on     ") {
		t.Fatalf("%v\n%s", err, text)
	}
	for _, bad := range [][]string{{"--window", "1h"}, {"--profile", "month"}} {
		if _, err := run(append(args, bad...)...); err == nil || !strings.Contains(err.Error(), "profile") {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
