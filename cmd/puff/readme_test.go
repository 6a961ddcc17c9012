package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// binary builds the puff command once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "puffbin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "puff")
		if out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput(); err != nil {
			buildErr = &buildError{err, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// readmeCommand is one "$ command" of a console block and the output the
// README shows for it.
type readmeCommand struct {
	line int
	cmd  string
	want []string
}

func readmeCommands(t *testing.T, path string) []readmeCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeCommand
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```console"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in && strings.HasPrefix(l, "$ "):
			out = append(out, readmeCommand{line: n, cmd: strings.TrimPrefix(l, "$ ")})
		case in && len(out) > 0 && strings.TrimSpace(l) != "":
			out[len(out)-1].want = append(out[len(out)-1].want, l)
		}
	}
	return out
}

// Every command in the README's console blocks runs verbatim, from the
// repository root, on files the repository ships, and prints what the
// README shows (lines ending in "…" or "..." are prefixes; outputs of noisy
// releases are not compared).
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs every README command")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("the README's examples pipe into jq: install it (Debian package jq)")
	}
	bin := binary(t)
	root, _ := filepath.Abs("../..")
	// Run in a scratch directory that links to every top-level entry, so
	// redirections do not write into the repository.
	work := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	cmds := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) < 10 {
		t.Fatalf("found %d README commands; the console blocks were not parsed", len(cmds))
	}
	for _, c := range cmds {
		t.Run(c.cmd, func(t *testing.T) {
			cmd := exec.Command("bash", "-o", "pipefail", "-c", c.cmd)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("README.md:%d: %v\n%s", c.line, err, out)
			}
			if (strings.Contains(c.cmd, "release") || strings.Contains(c.cmd, "sanitize")) && !strings.Contains(c.cmd, "exit status") {
				return // noisy output (a refused release prints no noise: compared)
			}
			got := map[string]bool{}
			var lines []string
			for _, l := range strings.Split(string(out), "\n") {
				l = strings.Join(strings.Fields(l), " ")
				got[l] = true
				lines = append(lines, l)
			}
			for _, w := range c.want {
				w = strings.Join(strings.Fields(w), " ")
				prefix := strings.TrimSuffix(strings.TrimSuffix(w, "…"), "...")
				if prefix != w {
					found := false
					for _, l := range lines {
						if strings.HasPrefix(l, prefix) {
							found = true
						}
					}
					if !found {
						t.Errorf("README.md:%d: no output line starts with %q; got\n%s", c.line, prefix, out)
					}
				} else if !got[w] {
					t.Errorf("README.md:%d: output lacks the line %q; got\n%s", c.line, w, out)
				}
			}
		})
	}
}

// The README's library snippet is ExampleScale, line for line (modulo
// spacing), so it compiles and runs.
func TestREADMESnippetIsAnExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := os.ReadFile("../../mqm/example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "## The library in five lines\n\n```go\n")
	if i < 0 {
		t.Fatal("README has no library snippet")
	}
	block := s[i+len("## The library in five lines\n\n```go\n"):]
	block = block[:strings.Index(block, "```")]
	norm := func(l string) string { return strings.Join(strings.Fields(l), " ") }
	var exLines []string
	for _, l := range strings.Split(string(ex), "\n") {
		exLines = append(exLines, norm(l))
	}
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		if !slices.Contains(exLines, norm(l)) {
			t.Errorf("README snippet line %q is not in ExampleScale", l)
		}
	}
}
