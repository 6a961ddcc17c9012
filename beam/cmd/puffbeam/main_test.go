package main

import (
	"os"

	"github.com/pufferfish-privacy/pufferfish/beam/puffbeam"
	"github.com/pufferfish-privacy/pufferfish/reading"
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

// --output that is one of the inputs (the data, the class; a link to one)
// is refused before anything is read or written.
func TestOutputIsNotAnInput(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.csv")
	class := filepath.Join(dir, "c.json")
	os.WriteFile(data, []byte("series,time,state\na,1,sleep\n"), 0o644)
	os.WriteFile(class, []byte("{}"), 0o644)
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{data, link, class} {
		cfg := puffbeam.Config{Input: filepath.Join(dir, "*.csv"), Output: out}
		err := run(cfg, &reading.DataFlags{}, class, "1")
		if err == nil || !strings.Contains(err.Error(), "overwritten") {
			t.Errorf("--output %s: %v, want a refusal", out, err)
		}
	}
	if b, _ := os.ReadFile(data); string(b) != "series,time,state\na,1,sleep\n" {
		t.Fatalf("the input changed: %q", b)
	}
}
