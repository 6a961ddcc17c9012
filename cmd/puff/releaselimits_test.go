package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// puff release refuses a release over --max-windows or --max-cells before
// any work, naming the flag; raising the flag makes it (issue 26, item 1).
// A one-second window over 20,001 seconds of readings is the issue's
// reproduction at a test's size.
func TestReleaseSizeFlags(t *testing.T) {
	class := write(t, "c.json", twoState)
	var b strings.Builder
	b.WriteString("series,time,state\n")
	for i := range 20001 {
		fmt.Fprintf(&b, "a,%d,%d\n", i, i%3/2)
	}
	data := write(t, "d.csv", b.String())
	_, err := run("release", "--data", data, "--class", class, "--window", "1s", "--json")
	if err == nil || !strings.Contains(err.Error(), "--max-windows") || !strings.Contains(err.Error(), "at least 10001 windows") {
		t.Fatalf("20001 one-second windows: %v, want a refusal naming --max-windows", err)
	}
	_, err = run("release", "--data", data, "--class", class, "--window", "1s", "--max-windows", "30000", "--max-cells", "40001", "--json")
	if err == nil || !strings.Contains(err.Error(), "--max-cells") {
		t.Fatalf("20001 windows × 2 bins at --max-cells 40001: %v", err)
	}
	// the built-in example in 1-minute windows: 8 windows × 4 bins
	ex := []string{"release", "--window", "1m", "--json"}
	if _, err := run(append(ex, "--max-windows", "7")...); err == nil || !strings.Contains(err.Error(), "--max-windows") {
		t.Fatalf("8 windows at --max-windows 7: %v", err)
	}
	if _, err := run(append(ex, "--max-cells", "31")...); err == nil || !strings.Contains(err.Error(), "--max-cells") {
		t.Fatalf("32 cells at --max-cells 31: %v", err)
	}
	out, err := run(append(ex, "--max-windows", "8", "--max-cells", "32")...)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Windows []struct {
			Histogram []any `json:"histogram"`
		} `json:"windows"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Windows) != 8 || len(v.Windows[0].Histogram) != 4 {
		t.Fatalf("at the limits: %v, %d windows\n%.300s", err, len(v.Windows), out)
	}
	if _, err := run(append(ex, "--max-windows", "0")...); err == nil {
		t.Error("--max-windows 0 accepted")
	}
}
