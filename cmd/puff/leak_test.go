package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
)

// Regression tests for privacy failures: outputs that revealed the data or
// exact answers, and splits that treated one person as many.

func TestNoExactAnswerInAnyOutput(t *testing.T) {
	for _, args := range [][]string{
		{"wasserstein", "--framework", "../../framework/testdata/flu.json", "--epsilon", "1"},
		{"bn", "--framework", "../../framework/testdata/tree30.json", "--epsilon", "5"},
	} {
		for _, js := range []bool{false, true} {
			a := args
			if js {
				a = append(append([]string{}, args...), "--json")
			}
			out, err := run(a...)
			if err != nil {
				t.Fatalf("%v: %v", a, err)
			}
			if strings.Contains(out, "true_answer") || strings.Contains(out, "true answer") {
				t.Errorf("%v prints the exact answer:\n%s", a, out)
			}
		}
	}
}

// Two files that differ only in their first reading print the same bins,
// in the declared order; --fit without declared states is refused.
func TestBinsDoNotDependOnTheData(t *testing.T) {
	a := write(t, "a.csv", "series,time,state\np,1,run\np,2,sit\np,3,walk\np,4,sit\n")
	b := write(t, "b.csv", "series,time,state\np,1,sit\np,2,walk\np,3,run\np,4,sit\n")
	var bins []string
	for _, f := range []string{a, b} {
		v := runJSON(t, "release", "--data", f, "--fit", "--states", "sleep,sit,walk,run", "--smoothing", "1", "--json")
		var got []string
		for _, h := range v["histogram"].([]any) {
			got = append(got, h.(map[string]any)["state"].(string))
		}
		if bins == nil {
			bins = got
		}
		if strings.Join(got, ",") != "sleep,sit,walk,run" || strings.Join(got, ",") != strings.Join(bins, ",") {
			t.Fatalf("bins %v (first file %v), want the declared sleep,sit,walk,run", got, bins)
		}
	}
	if _, err := run("release", "--data", a, "--fit"); err == nil || !strings.Contains(err.Error(), "fitting needs the declared states") {
		t.Fatalf("--fit without --states: %v", err)
	}
	if _, err := run("release", "--data", a, "--fit", "--states", "sit,walk"); err == nil || !strings.Contains(err.Error(), `a.csv:2: state "run" is not declared`) {
		t.Fatalf("undeclared state: %v", err)
	}
}

// A sticky series with every 6th minute missing is one chain: --gap does
// not split it (σ ≈ 303, not 5).
func TestGapDoesNotSplitASeries(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("series,time,state\n")
	for m := 1; m <= 6000; m++ {
		if m%6 != 0 {
			fmt.Fprintf(&sb, "p,%d,%d\n", m, (m/700)%2)
		}
	}
	data := write(t, "sticky.csv", sb.String())
	class := write(t, "c.json", `{"states": ["0", "1"], "chains": [{"transition": [[0.99, 0.01], [0.01, 0.99]], "initial": "stationary"}]}`)
	v := runJSON(t, "release", "--data", data, "--class", class, "--gap", "1", "--json")
	// MQM's σ (the noise's is the leakage bound's, smaller)
	if s := v["calibration"].(map[string]any)["mqm_sigma"].(float64); s < 300 || s > 305 || v["sigma"].(float64) > s {
		t.Fatalf("MQM's σ = %v, want ≈ 302.7 (one chain with missing readings); σ %v", s, v["sigma"])
	}
	if v["sequences"].(float64) != 1 || v["missing"].(float64) != 999 {
		t.Fatalf("sequences %v missing %v", v["sequences"], v["missing"])
	}
	if w := fmt.Sprint(v["warnings"]); !strings.Contains(w, "--gap has no effect") {
		t.Fatalf("warnings %v", w)
	}
	for _, g := range []string{"-1", "NaN"} {
		if _, err := run("release", "--data", data, "--class", class, "--gap", g); err == nil || !strings.Contains(err.Error(), "--gap") {
			t.Errorf("--gap %s: %v", g, err)
		}
	}
}

func TestExplicitColumnsAndDelimiter(t *testing.T) {
	data := write(t, "d.csv", "subject,time,state\na,1,0\na,2,1\nb,1,0\n")
	class := write(t, "c.json", twoState)
	if _, err := run("release", "--data", data, "--class", class, "--series-col", "subjet"); err == nil || !strings.Contains(err.Error(), `no series column "subjet"`) {
		t.Fatalf("misspelled column: %v", err)
	}
	semi := write(t, "s.csv", "series;time;state\na;1;0\na;2;1\n")
	if _, err := run("release", "--data", semi, "--class", class); err == nil || !strings.Contains(err.Error(), "delimiter") {
		t.Fatalf("semicolons: %v", err)
	}
	v := runJSON(t, "release", "--data", semi, "--class", class, "--delimiter", ";", "--json")
	if v["observations"].(float64) != 2 {
		t.Fatalf("with --delimiter: %v", v["observations"])
	}
}

// scale --start: the segment [5, 6] of a chain that starts in state 0 needs
// more noise than the same length from time 1.
func TestScaleStart(t *testing.T) {
	class := write(t, "c.json", `{"states":["0","1"],"chains":[{"transition":[[0.9993414172575612, 0.0006585827424387219], [0.4008305458724634, 0.5991694541275365]],"initial":[1,0]}]}`)
	at1 := runJSON(t, "scale", "--class", class, "--length", "2", "--epsilon", "4", "--json")
	at5 := runJSON(t, "scale", "--class", class, "--length", "2", "--epsilon", "4", "--start", "5", "--json")
	if at1["sigma"].(float64) > 0.2501 || at5["sigma"].(float64) <= 0.25 || at5["start"].(float64) != 5 {
		t.Fatalf("start 1: %v, start 5: %v", at1["sigma"], at5["sigma"])
	}
	if _, err := run("scale", "--class", class, "--length", "2", "--start", "0"); err == nil {
		t.Fatal("--start 0 accepted")
	}
}

// puff release --log records the release and prints the total guarantee:
// the example's releases are calibrated by the leakage bound, and two
// compose by the dp-leakage rule (the log keeps σ).
func TestReleaseLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "ledger.json")
	for i, want := range []struct {
		spent float64
		rule  string
	}{{0.5, "single"}, {1.00483857397399, "dp-leakage"}} {
		v := runJSON(t, "release", "--epsilon", "1/2", "--log", log, "--json")
		l := v["ledger"].(map[string]any)
		if l["spent"].(float64) != want.spent || l["rule"] != want.rule || l["dataset"] != "activity" || l["releases"].(float64) != float64(i+1) {
			t.Fatalf("release %d: ledger %v", i+1, l)
		}
	}
	out, err := run("compose", "--log", log, "--dataset", "activity/p03")
	if err != nil || !strings.Contains(out, "ε = 1.00484 by dp-leakage") {
		t.Fatalf("compose on the recorded log: %v\n%s", err, out)
	}
}

// Numeric readings outside the levels' bounds, and rows whose value is
// missing, are counts of private values: two files that differ only in
// how many readings clip (and where a value is missing rather than a
// time absent) print the same report up to the noise, in JSON, in text
// and per window (regression: the report printed "clipped": 2 and
// "missing_values": 1, and a warning with the count).
func TestNoClippedOrMissingValueCounts(t *testing.T) {
	// same times, same pattern; b clips two readings and has one missing value
	b := write(t, "b.csv", "series,time,kw\np,0,-5\np,60,2\np,120,30\np,180,\np,240,4\nq,0,2\nq,60,NA\n")
	c := write(t, "c.csv", "series,time,kw\np,0,1\np,60,2\np,120,3\np,180,\np,240,4\nq,0,2\nq,60,\n")
	class := write(t, "class.json", `{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"}]}`)
	noiseFree := func(out string) string {
		// the noisy values and their estimates are the only things allowed
		// to differ
		return regexp.MustCompile(`"value": -?[0-9.e+-]+|"(mean_)?estimate": -?[0-9.e+-]+|"mean": -?[0-9.e+-]+|(?m)^\S+ +\[[^\]\)]*[\]\)] +-?[0-9.e+-]+ +-?[0-9.e+-]+$|(?m)^private mean +-?[0-9.e+-]+$|(?m)^estimate +-?[0-9.e+-]+ \(`).ReplaceAllString(out, "")
	}
	for _, extra := range [][]string{{"--json"}, {}, {"--window", "2m", "--json"}, {"--window", "2m"}, {"--query", "mean", "--json"}} {
		var outs []string
		for _, f := range []string{b, c} {
			args := append([]string{"release", "--data", f, "--class", class, "--value-col", "kw", "--levels", "0:5:2", "--time-unit", "1"}, extra...)
			out, err := run(args...)
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			for _, word := range []string{"clipped", "missing_values", "2 readings outside", "2 outside", "1 missing value"} {
				if strings.Contains(out, word) {
					t.Errorf("%v prints %q:\n%s", extra, word, out)
				}
			}
			outs = append(outs, noiseFree(out))
		}
		if outs[0] != outs[1] {
			t.Errorf("%v: the report depends on how many readings clip:\n%s\n----\n%s", extra, outs[0], outs[1])
		}
	}
}

// Day files of one chain released one by one into a ledger: each file is a
// later piece of the chain, and with a fixed initial distribution q = (1, 0)
// a file calibrated as if it started the chain (the first reading known to
// be 0) understates the noise. With the dataset's origin each day is
// calibrated where it lies; without one, for every start. Either way the
// exact loss of everything released (enumeration of every sequence, grid
// supremum over the outputs) is within what the ledger says was spent.
func TestDayFilesAreCalibratedWhereTheyLie(t *testing.T) {
	P := [][]float64{{0.9, 0.1}, {0.2, 0.8}}
	class := write(t, "class.json", `{"states": ["0", "1"], "chains": [{"transition": [[0.9, 0.1], [0.2, 0.8]], "initial": [1, 0]}]}`)
	days := []string{
		write(t, "day1.csv", "series,time,state\na,0,0\na,3600,1\n"),
		// day 2 starts in 0, a state the chain can start in: calibrated
		// as if it started the chain it is possible data (a release
		// refuses impossible data), and it still understates the noise
		write(t, "day2.csv", "series,time,state\na,7200,0\na,10800,1\n"),
		write(t, "day3.csv", "series,time,state\na,14400,0\na,18000,0\n"),
	}
	chain := brute.Chain{Q: []float64{1, 0}, P: P, T: 6}
	release := func(f string, extra ...string) (scale, spent float64) {
		t.Helper()
		args := append([]string{"release", "--data", f, "--class", class, "--epsilon", "1", "--step", "3600", "--json"}, extra...)
		v := runJSON(t, args...)
		scale = v["per_bin_scale"].(float64)
		if l, ok := v["ledger"].(map[string]any); ok {
			spent = l["spent"].(float64)
		}
		return scale, spent
	}
	// the leak: day 2 calibrated as if it started the chain
	leaky, _ := release(days[1])
	if l, _, _, _, _ := brute.Loss(chain, []brute.Release{brute.Counts(2, []int{2, 3}, leaky)}); l <= 1.5 {
		t.Fatalf("day 2 calibrated at time 1 loses %.4g ≤ ε: the example does not show the leak", l)
	}
	for _, origin := range []string{"0", ""} {
		db := filepath.Join(t.TempDir(), "l.db")
		args := []string{"ledger", "init", "--ledger", db, "--dataset", "d", "--budget", "10"}
		if origin != "" {
			args = append(args, "--origin", origin)
		}
		if _, err := run(args...); err != nil {
			t.Fatal(err)
		}
		var rels []brute.Release
		var spent float64
		for i, f := range days {
			b, s := release(f, "--ledger", db, "--dataset", "d")
			spent = s
			pos := []int{2 * i, 2*i + 1}
			rels = append(rels, brute.Counts(2, pos, b))
			alone, _, _, _, err := brute.Loss(chain, rels[i:])
			if err != nil {
				t.Fatal(err)
			}
			if alone > 1+1e-9 {
				t.Errorf("origin %q: day %d alone loses %.6g > ε = 1 (per-bin scale %.6g)", origin, i+1, alone, b)
			}
		}
		joint, _, _, _, _ := brute.Loss(chain, rels)
		if joint > spent+1e-9 {
			t.Errorf("origin %q: both days lose %.6g, the ledger says %.6g was spent", origin, joint, spent)
		}
	}
}
