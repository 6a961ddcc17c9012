package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// slowClass is a lazy walk on a cycle of k states (JSON): it mixes in
// about k² steps, so its quilt search at a length ≫ k runs for minutes.
func slowClass(t *testing.T, k int) string {
	t.Helper()
	P := make([][]float64, k)
	states := make([]string, k)
	for i := range P {
		P[i] = make([]float64, k)
		P[i][i] = 0.98
		P[i][(i+1)%k] += 0.01
		P[i][(i+k-1)%k] += 0.01
		states[i] = fmt.Sprint("s", i)
	}
	b, err := json.Marshal(map[string]any{"states": states, "chains": []any{map[string]any{"transition": P, "initial": "stationary"}}})
	if err != nil {
		t.Fatal(err)
	}
	return write(t, "slow.json", string(b))
}

// The runaways at a test's size: --levels 0:10:10000 --fit on six
// readings (minutes, 5 GB) is refused before the fit naming --max-states;
// puff scale on a slowly mixing 200-state chain (minutes) stops at
// --timeout with an error naming it, and nothing is printed, as does a
// release of 1000 readings of it; a class over --max-states is refused
// before any work.
func TestRunawaysStop(t *testing.T) {
	data := write(t, "f.csv", "time,kw\n0,1.5\n60,2.5\n120,3\n180,4\n240,1\n300,7\n")
	_, err := run("release", "--data", data, "--value-col", "kw", "--levels", "0:10:10000", "--fit")
	if err == nil || !strings.Contains(err.Error(), "10000 states") || !strings.Contains(err.Error(), "--max-states") {
		t.Fatalf("10000 levels: %v", err)
	}
	if _, err := run("release", "--data", data, "--value-col", "kw", "--levels", "0:10:20", "--fit", "--smoothing", "0.5", "--max-states", "19"); err == nil || !strings.Contains(err.Error(), "limit of 19 states") {
		t.Fatalf("20 levels at --max-states 19: %v", err)
	}
	if _, err := run("release", "--data", data, "--value-col", "kw", "--levels", "0:10:20", "--fit", "--smoothing", "0.5", "--max-states", "20"); err != nil {
		t.Fatalf("20 levels at --max-states 20: %v", err)
	}
	class := slowClass(t, 200)
	out, err := run("scale", "--class", class, "--length", "1000", "--timeout", "1s", "--max-search-work", "1e15")
	if err == nil || !strings.Contains(err.Error(), "--timeout") || out != "" {
		t.Fatalf("a search past --timeout: %v\n%s", err, out)
	}
	if _, err := run("scale", "--class", class, "--length", "1000", "--max-states", "199"); err == nil || !strings.Contains(err.Error(), "200 states") {
		t.Fatalf("200 states at --max-states 199: %v", err)
	}
	var long strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&long, "s%d\n", i/40)
	}
	out, err = run("release", "--class", class, "--data", write(t, "s.csv", long.String()), "--timeout", "1s")
	if err == nil || !strings.Contains(err.Error(), "--timeout") || out != "" {
		t.Fatalf("a release past --timeout: %v\n%s", err, out)
	}
}

// Issue 40: puff scale on a slowly mixing 300-state birth–death chain at
// length 2000 ran for its 5-minute --timeout; it is now refused before
// any search with its estimate and the flag that raises the limit
// (generous bound: a minute, for a loaded machine).
func TestScaleWorkRefused(t *testing.T) {
	const k = 300
	P := make([][]float64, k)
	states := make([]string, k)
	for i := range P {
		P[i] = make([]float64, k)
		s := 0.0
		if i > 0 {
			P[i][i-1], s = 0.01, s+0.01
		}
		if i < k-1 {
			P[i][i+1], s = 0.01, s+0.01
		}
		P[i][i] = 1 - s
		states[i] = fmt.Sprint(i)
	}
	b, err := json.Marshal(map[string]any{"states": states, "chains": []any{map[string]any{"transition": P, "initial": "stationary"}}})
	if err != nil {
		t.Fatal(err)
	}
	class := write(t, "bd.json", string(b))
	start := time.Now()
	out, err := run("scale", "--class", class, "--length", "2000", "--epsilon", "1")
	if err == nil || !strings.Contains(err.Error(), "--max-search-work") || !strings.Contains(err.Error(), "refused") || out != "" {
		t.Fatalf("birth–death, 300 states, T = 2000: %v\n%s", err, out)
	}
	if el := time.Since(start); el > time.Minute {
		t.Fatalf("refused after %v", el)
	}
	// --leakage answers (its own limits), as before
	if out, err := run("scale", "--class", class, "--length", "2000", "--epsilon", "1", "--leakage"); err != nil || !strings.Contains(out, "per-bin scale") {
		t.Fatalf("--leakage: %v\n%s", err, out)
	}
	// a small limit refuses a small class too, naming the flag
	two := write(t, "c.json", `{"states": ["0", "1", "2"], "chains": [{"transition": [[0.98, 0.02, 0], [0.01, 0.98, 0.01], [0, 0.02, 0.98]], "initial": "stationary"}]}`)
	if _, err := run("scale", "--class", two, "--length", "300", "--max-search-work", "100"); err == nil || !strings.Contains(err.Error(), "--max-search-work") {
		t.Fatalf("--max-search-work 100: %v", err)
	}
}
