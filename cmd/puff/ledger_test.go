package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
	"github.com/pufferfish-privacy/pufferfish/release"
)

func puffRun(bin string, args ...string) (stdout, stderr string, code int) {
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		code = -1
	}
	return o.String(), e.String(), code
}

// 8 processes × 5 releases of ε = 0.1 racing on a budget of 1: exactly 9
// accepted (status 0; each is calibrated by the leakage bound, and ten
// compose by dp-leakage to a little over 1), 31 refused (status 4,
// nothing on stdout), 9 rows.
func TestLedgerProcessesNeverOverspend(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 40 processes")
	}
	bin := binary(t)
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		if _, e, code := puffRun(bin, "ledger", "init", "--ledger", dsn, "--dataset", "ex", "--budget", "1"); code != 0 {
			t.Fatal(e)
		}
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 5 {
					out, e, code := puffRun(bin, "release", "--epsilon", "0.1", "--ledger", dsn, "--dataset", "ex", "--json")
					mu.Lock()
					codes[code]++
					mu.Unlock()
					switch code {
					case 0:
						var r struct {
							Ledger struct {
								Spent float64 `json:"spent"`
							} `json:"ledger"`
						}
						if err := json.Unmarshal([]byte(out), &r); err != nil || r.Ledger.Spent > 1 {
							t.Errorf("accepted release printed %q (%v)", out, err)
						}
					case exitRefused:
						if out != "" || !bytes.Contains([]byte(e), []byte("privacy budget exceeded")) {
							t.Errorf("refused release: stdout %q, stderr %q", out, e)
						}
					default:
						t.Errorf("status %d: %s", code, e)
					}
				}
			})
		}
		wg.Wait()
		s, err := ledger.Open(context.Background(), dsn, false)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		es, err := s.Entries(context.Background(), "ex")
		if codes[0] != 9 || codes[exitRefused] != 31 || len(es) != 9 || err != nil {
			t.Fatalf("statuses %v, %d rows (%v)", codes, len(es), err)
		}
		checkLedger(t, s, "ex")
	})
}

// checkLedger checks a ledger's consistency: every release has a JSON
// result, and each one's recorded total is compose's verdict over the
// releases up to it.
func checkLedger(t *testing.T, s ledger.Store, dataset string) []ledger.Entry {
	t.Helper()
	es, err := s.Entries(context.Background(), dataset)
	if err != nil {
		t.Fatal(err)
	}
	class, err := markov.ParseClass(release.ExampleClass(), "example")
	if err != nil {
		t.Fatal(err)
	}
	var recs []*record.Release
	for i, e := range es {
		var res struct {
			Histogram []json.RawMessage `json:"histogram"`
		}
		if err := json.Unmarshal(e.Result, &res); err != nil || len(res.Histogram) != len(class.States) {
			t.Fatalf("entry %d: result %s (%v)", e.ID, e.Result, err)
		}
		recs = append(recs, &es[i].Record)
		v, err := compose.Records(class, recs)
		if err != nil {
			t.Fatal(err)
		}
		if e.Spent.String() != fmt.Sprint(v.Float()) && e.Spent.String() != ledger.Decimal(v.Epsilon) {
			t.Fatalf("entry %d records total %s, compose gives %v", e.ID, e.Spent, v.Float())
		}
	}
	return es
}

// Releases killed with SIGKILL at random moments leave the ledger
// consistent: each is recorded with its result or absent, and a release
// that printed anything is recorded.
func TestLedgerSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes in a loop")
	}
	bin := binary(t)
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		if _, e, code := puffRun(bin, "ledger", "init", "--ledger", dsn, "--dataset", "ex", "--budget", "1000"); code != 0 {
			t.Fatal(e)
		}
		rng := rand.New(rand.NewPCG(7, 11))
		rows := 0
		printed, killed := 0, 0
		for i := range 25 {
			cmd := exec.Command(bin, "release", "--epsilon", "0.1", "--ledger", dsn, "--dataset", "ex", "--json")
			var o bytes.Buffer
			cmd.Stdout = &o
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
			if cmd.Process.Signal(syscall.SIGKILL) == nil {
				killed++
			}
			cmd.Wait()
			s, err := ledger.Open(context.Background(), dsn, false)
			if err != nil {
				t.Fatalf("iteration %d: the ledger does not open after a kill: %v", i, err)
			}
			es := checkLedger(t, s, "ex")
			s.Close()
			if len(es) < rows || len(es) > rows+1 {
				t.Fatalf("iteration %d: %d rows after %d", i, len(es), rows)
			}
			if o.Len() > 0 {
				printed++
				if len(es) != rows+1 {
					t.Fatalf("iteration %d: the release printed but is not recorded", i)
				}
			}
			rows = len(es)
		}
		t.Logf("%d kills, %d releases recorded, %d printed before the kill", killed, rows, printed)
	})
}

// Every bad ledger input gets one clear error (status 2 in main) and
// prints nothing.
func TestLedgerBadInput(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "b.db")
	if _, err := run("ledger", "init", "--ledger", db, "--dataset", "d", "--budget", "1"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ledger", "init", "--ledger", db, "--dataset", "e"}, "required"},
		{[]string{"ledger", "init", "--ledger", db, "--dataset", "e", "--budget", "NaN"}, "budget"},
		{[]string{"ledger", "init", "--ledger", db, "--dataset", "e", "--budget", "1/3"}, "decimal"},
		{[]string{"ledger", "init", "--ledger", db, "--dataset", "e", "--budget", "-1"}, "budget"},
		{[]string{"ledger", "init", "--ledger", db, "--dataset", "d", "--budget", "5"}, "already exists"},
		{[]string{"ledger", "init", "--ledger", db, "--dataset", "a/b", "--budget", "5"}, "without '/'"},
		{[]string{"ledger", "init", "--ledger", dir, "--dataset", "x", "--budget", "5"}, "not a regular file"},
		{[]string{"ledger", "init", "--ledger", "postgres://nobody@127.0.0.1:1/x?connect_timeout=2", "--dataset", "x", "--budget", "5"}, "connecting"},
		{[]string{"ledger", "show", "--ledger", filepath.Join(dir, "missing.db")}, "does not exist"},
		{[]string{"ledger", "show"}, "--ledger is required"},
		{[]string{"ledger", "show", "--ledger", db, "--dataset", "nope"}, "unknown dataset"},
		{[]string{"ledger", "export", "--ledger", db, "--dataset", "nope"}, "unknown dataset"},
		{[]string{"ledger"}, "subcommand"},
		{[]string{"release", "--ledger", db}, "--dataset"},
		{[]string{"release", "--ledger", db, "--dataset", "nope"}, "unknown dataset"},
		{[]string{"release", "--ledger", db, "--dataset", "d", "--log", filepath.Join(dir, "l.json")}, "not both"},
		{[]string{"release", "--ledger", filepath.Join(dir, "typo.db"), "--dataset", "d"}, "does not exist"},
		{[]string{"release", "--ledger", db, "--dataset", "d", "--window", "-1h"}, "positive duration"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, err := run(c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if out != "" {
				t.Fatalf("printed %q despite the error", out)
			}
		})
	}
	// nothing above was recorded, and a missing file was not created
	out, err := run("ledger", "show", "--ledger", db, "--json")
	if err != nil || !strings.Contains(out, `"releases": 0`) {
		t.Fatalf("%v %s", err, out)
	}
	if _, err := run("ledger", "show", "--ledger", filepath.Join(dir, "typo.db")); err == nil {
		t.Fatal("a mistyped ledger path was created")
	}
}

// --log with --window records the windows (it was once ignored): jointly
// calibrated windows as one release on each series' whole segment, windows
// calibrated one by one window by window.
func TestWindowedReleaseIsLogged(t *testing.T) {
	for _, c := range []struct{ calibration, segment string }{{"joint", "[1, 480]"}, {"per-window", "[361, 480]"}} {
		logPath := filepath.Join(t.TempDir(), "log.json")
		out, err := run("release", "--window", "2h", "--time-unit", "60", "--window-calibration", c.calibration, "--log", logPath, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Windows []json.RawMessage `json:"windows"`
			Ledger  struct {
				Spent    float64 `json:"spent"`
				Releases int     `json:"releases"`
			} `json:"ledger"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Windows) != 4 || r.Ledger.Releases != 1 || r.Ledger.Spent < 1 {
			t.Fatalf("%s: %v %s", c.calibration, err, out)
		}
		out, err = run("compose", "--log", logPath, "--json")
		if err != nil || !strings.Contains(out, c.segment) {
			t.Fatalf("%s: want segment %s: %v %s", c.calibration, c.segment, err, out)
		}
	}
}

// ε stays exact from what the user typed to the ledger: nine releases of
// ε = 5/9 spend a budget of 5 exactly. (Regression: the record carried ε
// as a float, which the ledger read back as its shortest decimal
// 0.5555555555555556 > 5/9, so the ninth release was refused at
// 5.0000000000000004 > 5.) A tenth is refused. The same for window runs,
// calibrated per window (regression: their records carried no exact ε;
// a joint run calibrated by the leakage bound composes by dp-leakage,
// which is not a sum).
func TestExactEpsilonReachesTheLedger(t *testing.T) {
	bin := binary(t)
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		// a whole-series release of the example is calibrated by the
		// leakage bound (dp-leakage, not a sum): an i.i.d. class keeps MQM
		iid := write(t, "iid.json", `{"states": ["sleep", "sit", "walk", "run"], "chains": [{"transition": [[0.4, 0.3, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1]], "initial": "stationary"}]}`)
		for _, extra := range [][]string{{"--data", "../../release/example/activity.csv", "--class", iid}, {"--window", "2h", "--window-calibration", "per-window"}} {
			exactNine(t, bin, dsn, extra)
		}
	})
}

func exactNine(t *testing.T, bin, dsn string, extra []string) {
	t.Helper()
	dataset := "ex-" + strings.TrimLeft(extra[0], "-")
	if _, e, code := puffRun(bin, "ledger", "init", "--ledger", dsn, "--dataset", dataset, "--budget", "5"); code != 0 {
		t.Fatal(e)
	}
	args := append([]string{"release", "--epsilon", "5/9", "--ledger", dsn, "--dataset", dataset, "--json"}, extra...)
	{
		var spent json.Number
		for i := range 9 {
			out, e, code := puffRun(bin, args...)
			if code != 0 {
				t.Fatalf("release %d: status %d: %s", i+1, code, e)
			}
			var r struct {
				Ledger struct {
					Spent json.Number `json:"spent"`
				} `json:"ledger"`
			}
			d := json.NewDecoder(strings.NewReader(out))
			d.UseNumber()
			if err := d.Decode(&r); err != nil {
				t.Fatal(err)
			}
			spent = r.Ledger.Spent
		}
		if spent != "5" {
			t.Errorf("%v: nine releases of 5/9 spent %s, want exactly 5", extra, spent)
		}
		if _, e, code := puffRun(bin, args...); code != exitRefused {
			t.Errorf("%v: a tenth release: status %d (%s), want refused", extra, code, e)
		}
	}
}
