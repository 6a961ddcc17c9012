package main

import (
	"bufio"
	"fmt"
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
// README shows for it, or one command of a sh block (output not shown).
type readmeCommand struct {
	file string
	line int
	cmd  string
	want []string
	sh   bool
}

func readmeCommands(t *testing.T, path string) []readmeCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeCommand
	block := "" // "console", "sh" or ""
	cont := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```console"):
			block = "console"
		case strings.HasPrefix(l, "```sh"):
			block = "sh"
		case strings.HasPrefix(l, "```"):
			block = ""
		case block == "console" && strings.HasPrefix(l, "$ "):
			out = append(out, readmeCommand{file: path, line: n, cmd: strings.TrimPrefix(l, "$ ")})
			cont = strings.HasSuffix(l, `\`)
		case block == "sh" && cont:
			c := &out[len(out)-1]
			c.cmd = strings.TrimSuffix(c.cmd, `\`) + " " + strings.TrimSpace(l)
			cont = strings.HasSuffix(l, `\`)
		case block == "console" && cont:
			c := &out[len(out)-1]
			c.cmd = strings.TrimSuffix(c.cmd, `\`) + " " + strings.TrimSpace(strings.TrimPrefix(l, "> "))
			cont = strings.HasSuffix(l, `\`)
		case block == "sh" && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#"):
			out = append(out, readmeCommand{file: path, line: n, cmd: l, sh: true})
			cont = strings.HasSuffix(l, `\`)
		case block == "console" && len(out) > 0 && strings.TrimSpace(l) != "":
			out[len(out)-1].want = append(out[len(out)-1].want, l)
		}
	}
	return out
}

// notRun are the README commands the test cannot run, each with why: it
// matches a command by substring.
var notRun = []struct{ match, why string }{
	{"go test ./...", "the test suite itself (this test is part of it)"},
	{"go test ./ledger ./cmd/puff", "the test suite itself; .ci/run runs it against a throw-away PostgreSQL"},
	{".ci/postgres", "starts a PostgreSQL server; .ci/run does the same"},
	{"puff experiment all", "≈ 3 min on 2 cores; every experiment has its own test in ./experiment"},
	{"puff serve ", "a server that runs until stopped; serve.TestWebPageInBrowser and the serve tests make the same calls"},
	{"localhost:8080", "talks to the puff serve above"},
	{"TOKEN=$(puff token create --ledger demo.db", "a token for the puff serve above"},
	{"--runner dataflow", "needs a Google Cloud project"},
	{"--runner flink", "needs a Flink cluster"},
	{"--runner spark", "needs a Spark cluster"},
}

// notRerun are the README commands the second run of the walkthrough does
// not repeat, each with why (matched by substring, as notRun): the first
// run compared their output with the README's, which is fixed text, so a
// repeat could only find what the second run is for — a state the first
// run left behind — and the commands that would meet such a state still
// run: the set-up that starts the session in a new directory, and every
// "puff ledger init" (which refuses an existing ledger). The two
// 51-level ledgers are filled only by the commands skipped here.
var notRerun = []struct{ match, why string }{
	{"--levels 0:10:51", "a UCI 51-level release computes the pairwise leakage bound (≈ 50 s of CPU for the five)"},
	{"puff ledger show --ledger budget.db", "shows what the 51-level releases above recorded"},
	{"--adversary lstm", "trains an LSTM (≈ 5 s of CPU)"},
}

// beamEnv runs the README commands that build the Beam pipeline (its own
// module; the first build takes minutes) when set; .ci/run sets it.
const beamEnv = "PUFF_TEST_BEAM"

// scratch makes a directory holding what the README commands read —
// go.mod, go.sum, the directories of Go packages and modules, examples/ and
// data/ — as symbolic links into the repository, and nothing else: no
// user file of the repository root (a budget.db, report.json or
// ledger.json left by following the README) is seen or overwritten.
func scratch(t *testing.T, root string) string {
	t.Helper()
	work := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !readmeNeeds(filepath.Join(root, e.Name()), e) {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// readmeNeeds says whether the README commands need a top-level entry:
// the module files, the shipped data, and directories of Go source.
func readmeNeeds(path string, e os.DirEntry) bool {
	switch e.Name() {
	case "go.mod", "go.sum", "examples", "data":
		return true
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() || strings.HasPrefix(e.Name(), ".") {
		return false
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return true
	}
	found := false
	filepath.WalkDir(path+string(filepath.Separator), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// Every command in the READMEs' console and sh blocks runs verbatim, as
// one shell session per README typed by a user in a clone of the
// repository (a cd or a variable set by one command holds for the next),
// on files the repository ships, and prints what the README shows (lines
// ending in "…" or "..." are prefixes). Every output shown is compared:
// none is noisy (the README shows a release's σ, sizes and ledger, never
// its noisy values). Each session starts in a directory of its own, so it
// writes nothing into the clone, and the whole walkthrough runs twice:
// the second run prints the same, so the first left nothing behind that
// changes it; it skips the slow commands of notRerun, whose output the
// first run compared. Commands that cannot run here are listed in notRun
// with the reason.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs every README command")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("the README's examples pipe into jq: install it (Debian package jq)")
	}
	bin := binary(t)
	root, _ := filepath.Abs("../..")
	sessions := map[string][]readmeCommand{}
	names := []string{"README.md", "beam/README.md"}
	total := 0
	for _, name := range names {
		cs := readmeCommands(t, filepath.Join(root, name))
		if len(cs) == 0 {
			t.Fatalf("found no commands in %s; the blocks were not parsed", name)
		}
		for i := range cs {
			cs[i].file = name
		}
		// the walkthrough's first command moves the session to a
		// directory of its own: nothing is written into the clone (the
		// set-up commands before it, in sh blocks, run in the clone)
		if first := walkthrough(cs); first < 0 || !strings.Contains(cs[first].cmd, readmeSetup) {
			t.Fatalf("%s: the walkthrough's first command must start it in a directory of its own (%s)", name, readmeSetup)
		}
		sessions[name] = cs
		total += len(cs)
	}
	if total < 10 {
		t.Fatalf("found %d README commands; the console blocks were not parsed", total)
	}
	// The clone is a scratch directory (scratch): the user's own files
	// in the repository root are neither seen nor overwritten.
	work := scratch(t, root)
	gobin := t.TempDir() // go install puts puffbeam here
	before := entries(t, work)
	for run := 1; run <= 2; run++ {
		t.Run(fmt.Sprintf("run %d", run), func(t *testing.T) {
			for _, name := range names {
				cs := sessions[name]
				outs, status := runSession(t, cs, work, bin, gobin, run)
				for i, c := range cs {
					t.Run(c.cmd, func(t *testing.T) {
						if why := skipped(c, run); why != "" {
							t.Skip(why)
						}
						if status[i] != 0 {
							t.Fatalf("%s:%d: exit status %d\n%s", c.file, c.line, status[i], outs[i])
						}
						compareOutput(t, c, outs[i])
					})
				}
				if after := entries(t, work); !slices.Equal(after, before) {
					t.Errorf("%s wrote into the clone: its root holds %q, had %q", name, after, before)
				}
			}
		})
	}
}

// readmeSetup is what the first command of a README's session runs: a new
// directory of its own (with links to the files the commands read).
const readmeSetup = `cd "$(mktemp -d)"`

// skipped is why a README command is not run in the given run of the
// walkthrough (1 or 2; "" when it is).
func skipped(c readmeCommand, run int) string {
	if run > 1 {
		for _, n := range notRerun {
			if strings.Contains(c.cmd, n.match) {
				return fmt.Sprintf("%s:%d not run again: %s; the first run compared it", c.file, c.line, n.why)
			}
		}
	}
	for _, n := range notRun {
		if strings.Contains(c.cmd, n.match) {
			return fmt.Sprintf("%s:%d not run: %s", c.file, c.line, n.why)
		}
	}
	if strings.Contains(c.cmd, "puffbeam") && os.Getenv(beamEnv) == "" {
		return fmt.Sprintf("%s:%d builds the Beam pipeline (minutes): set %s=1 to run it (.ci/run does)", c.file, c.line, beamEnv)
	}
	return ""
}

// walkthrough is the index of the first command of a console block that
// is run (-1: none).
func walkthrough(cs []readmeCommand) int {
	for i, c := range cs {
		if !c.sh && skipped(c, 1) == "" {
			return i
		}
	}
	return -1
}

// entries are the names in a directory.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// runSession runs the commands that are not skipped as one bash session
// in work, with puff (and puffbeam, in gobin) on the PATH and mktemp's
// directories under a temporary directory of the test, and returns each
// command's output (stdout and stderr) and exit status (-1: not run).
func runSession(t *testing.T, cs []readmeCommand, work, bin, gobin string, run int) ([][]byte, []int) {
	t.Helper()
	const begin, end = "@@readme-command-begin", "@@readme-command-end"
	var script strings.Builder
	script.WriteString("set -o pipefail\n")
	for i, c := range cs {
		if skipped(c, run) != "" {
			continue
		}
		fmt.Fprintf(&script, "printf '\\n%s %d\\n'\n%s\nprintf '\\n%s %d %%d\\n' $?\n", begin, i, c.cmd, end, i)
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+gobin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOBIN="+gobin, "PWD="+work, "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the session of %s ended with %v\n%s", cs[0].file, err, out)
	}
	outs, status := make([][]byte, len(cs)), make([]int, len(cs))
	for i := range status {
		status[i] = -1
	}
	cur := -1
	for _, l := range strings.SplitAfter(string(out), "\n") {
		var i, st int
		switch {
		case strings.HasPrefix(l, begin+" "):
			if _, err := fmt.Sscanf(l, begin+" %d", &i); err == nil {
				cur = i
			}
		case strings.HasPrefix(l, end+" "):
			if _, err := fmt.Sscanf(l, end+" %d %d", &i, &st); err == nil && i == cur {
				status[i], cur = st, -1
			}
		case cur >= 0:
			outs[cur] = append(outs[cur], l...)
		}
	}
	for i, c := range cs {
		if skipped(c, run) == "" && status[i] < 0 {
			t.Fatalf("%s:%d: the session ended before this command finished\n%s", c.file, c.line, out)
		}
	}
	return outs, status
}

// runREADMECommand runs a command in work with puff (and puffbeam, in
// gobin) on the PATH and returns its output; it fails on a non-zero exit.
func runREADMECommand(t *testing.T, c readmeCommand, work, bin, gobin string) []byte {
	t.Helper()
	cmd := exec.Command("bash", "-o", "pipefail", "-c", c.cmd)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+gobin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOBIN="+gobin, "PWD="+work)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s:%d: %v\n%s", c.file, c.line, err, out)
	}
	return out
}

// compareOutput checks that out holds every line the README shows.
func compareOutput(t *testing.T, c readmeCommand, out []byte) {
	t.Helper()
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
				t.Errorf("%s:%d: no output line starts with %q; got\n%s", c.file, c.line, prefix, out)
			}
		} else if !got[w] {
			t.Errorf("%s:%d: output lacks the line %q; got\n%s", c.file, c.line, w, out)
		}
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

// A user who followed the README in the repository root leaves budget.db,
// report.json, ledger.json and an experiments folder there: the README
// test must neither read nor overwrite them (issue 26, item 2). The
// scratch directory of a root holding such files links none of them, and
// the README's "ledger init" (which fails on an existing budget.db) runs
// in it as on a fresh clone.
func TestREADMEScratchIgnoresUserFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := binary(t)
	repo, _ := filepath.Abs("../..")
	root := t.TempDir()
	for _, e := range []string{"go.mod", "go.sum", "examples", "data", "release", "cmd", "beam"} {
		if err := os.Symlink(filepath.Join(repo, e), filepath.Join(root, e)); err != nil {
			t.Fatal(err)
		}
	}
	// the user's files, made by the README's own commands
	userLedger := filepath.Join(root, "budget.db")
	if _, err := run("ledger", "init", "--ledger", userLedger, "--dataset", "house", "--budget", "32.5"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.json", "ledger.json", "private.csv"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("the user's "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "experiments"), 0o755); err != nil {
		t.Fatal(err)
	}
	work := scratch(t, root)
	entries, _ := os.ReadDir(work)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"beam", "cmd", "data", "examples", "go.mod", "go.sum", "release"}
	if !slices.Equal(names, want) {
		t.Errorf("scratch holds %q, want %q", names, want)
	}
	var init, ledgerLog readmeCommand
	for _, c := range readmeCommands(t, filepath.Join(repo, "README.md")) {
		switch {
		case strings.HasPrefix(c.cmd, "puff ledger init --ledger budget.db"):
			init = c
		case strings.Contains(c.cmd, "--log ledger.json") && ledgerLog.cmd == "":
			ledgerLog = c
		}
	}
	if init.cmd == "" || ledgerLog.cmd == "" {
		t.Fatal("the README no longer shows ledger init and release --log: update this test")
	}
	init.file, ledgerLog.file = "README.md", "README.md"
	runREADMECommand(t, init, work, bin, t.TempDir())
	// a first release --log on a fresh log: its first release, whatever
	// the user's ledger.json holds
	ledgerLog.want = []string{`{"dataset":"activity","spent":0.5,"rule":"single","theorem":"the release's own guarantee","releases":1}`}
	compareOutput(t, ledgerLog, runREADMECommand(t, ledgerLog, work, bin, t.TempDir()))
	for _, f := range []string{"report.json", "ledger.json", "private.csv"} {
		if b, _ := os.ReadFile(filepath.Join(root, f)); string(b) != "the user's "+f {
			t.Errorf("the user's %s was changed: %q", f, b)
		}
	}
	if out, err := run("ledger", "show", "--ledger", userLedger); err != nil || !strings.Contains(out, "0 ") {
		t.Errorf("the user's budget.db: %v\n%s", err, out)
	}
}

// TestMain removes the binary built for the tests: a test leaves nothing
// behind.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}
