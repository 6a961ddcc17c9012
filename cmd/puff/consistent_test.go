package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// puff consistent names what is missing or wrong, and prints the joint
// estimate of two matching reports.
func TestConsistentCommand(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "w.json")
	p := filepath.Join(dir, "p.json")
	hist := `"query": "counts", "per_bin_scale": 1, "histogram": [{"state": "a", "value": 2.5}, {"state": "b", "value": -0.5}]`
	if err := os.WriteFile(w, []byte(`{"windows": [{"start": "d1", "end": "d2", "observations": 2, `+hist+`}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"profile": [{"cell": "00", "observations": 2, `+hist+`}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"consistent", "--windows", w}, "--windows and --profile are required"},
		{[]string{"consistent", "--windows", w, "--profile", filepath.Join(dir, "none.json")}, "none.json"},
		{[]string{"consistent", "--windows", p, "--profile", p}, `no "windows"`},
	} {
		if _, err := run(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	out, err := run("consistent", "--windows", w, "--profile", p)
	if err != nil || !strings.Contains(out, "1 windows and 1 profile cells of 2 readings") || !strings.Contains(out, "total") {
		t.Fatalf("%v\n%s", err, out)
	}
}
