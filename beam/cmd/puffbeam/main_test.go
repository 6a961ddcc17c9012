package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A failed pipeline prints its cause first and alone — the file's line,
// not the 34th line after Beam's logs and the runner's trace of the stage
// (issue 34) — and exits with status 2; --verbose adds the logs and the
// runner's report.
func TestFailurePrintsItsCauseAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds puffbeam and runs it on Prism")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "puffbeam")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data := filepath.Join(dir, "dup.csv")
	os.WriteFile(data, []byte("series,time,state\na,1,sleep\na,1,sit\n"), 0o644)
	args := []string{"--input", data, "--class", "../../../release/example/activity_class.json", "--output", filepath.Join(dir, "r.json"), "--runner", "prism"}
	want := "puffbeam: " + data + `:3: time 1 of series "a" does not increase (repeated) (line 2 has 1)` + "\n"
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("exit %v, want status 2", err)
	}
	if stderr.String() != want {
		t.Errorf("stderr\n%s\nwant only\n%s", stderr.String(), want)
	}
	out, _ := exec.Command(bin, append(args, "--verbose")...).CombinedOutput()
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "the runner's report:") || !strings.Contains(string(out), "level=") {
		t.Errorf("--verbose: no logs, cause and report in\n%s", out)
	}
}
