package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// puff synth on the HAR labels (issue 35's command): 30 synthetic series
// with the input's lengths, in CSV and Parquet; the ledger records ε = 1
// with the query "transitions" and the σ the printed per-cell scale is
// drawn with (scale = 4σ); a release over the budget is refused with
// nothing written.
func TestSynthHAR(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, db string) {
		dir := t.TempDir()
		har := "../../data/uci_har_activity_sequences.csv.gz"
		args := []string{"synth", "--data", har, "--series-col", "subject", "--state-col", "activity", "--states", "WALKING,WALKING_UPSTAIRS,WALKING_DOWNSTAIRS,SITTING,STANDING,LAYING", "--fit", "--epsilon", "1", "--ledger", db, "--dataset", "har"}
		if _, err := run("ledger", "init", "--ledger", db, "--dataset", "har", "--budget", "1.5"); err != nil {
			t.Fatal(err)
		}
		csvOut := filepath.Join(dir, "synth.csv")
		out, err := run(append(args, "--out", csvOut, "--json")...)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Query       string
			Lipschitz   float64
			PerBinScale float64 `json:"per_bin_scale"`
			Chain       [][]float64
			Histogram   []struct{ State string }
			Synthetic   struct{ Series, Rows int }
			Ledger      struct{ Spent float64 }
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Query != "transitions" || rep.Lipschitz != 4 || len(rep.Histogram) != 36 || len(rep.Chain) != 6 || rep.Synthetic.Series != 30 || rep.Ledger.Spent != 1 {
			t.Fatalf("%+v", rep)
		}
		exp, err := run("ledger", "export", "--ledger", db, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Record struct {
				Query    string
				Epsilon  float64
				Sigma    float64
				Segments []json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(strings.SplitN(exp, "\n", 2)[0]), &rec); err != nil || rec.Record.Query != "transitions" || rec.Record.Epsilon != 1 || len(rec.Record.Segments) != 30 || rec.Record.Sigma*4 != rep.PerBinScale {
			t.Fatalf("recorded %+v, printed scale %g: %v", rec, rep.PerBinScale, err)
		}
		// the input's and the output's lengths, series by series in the
		// input's order (the output's series are named 1, 2, …)
		lengths := func(path string, opts reading.CSVOptions) ([]string, []int) {
			r, name, err := release.OpenData(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			d, err := reading.ReadData(r, name, opts)
			if err != nil {
				t.Fatal(err)
			}
			var n []int
			for _, s := range d.Seqs {
				n = append(n, len(s))
			}
			return d.Series, n
		}
		states := strings.Split("WALKING,WALKING_UPSTAIRS,WALKING_DOWNSTAIRS,SITTING,STANDING,LAYING", ",")
		_, want := lengths(har, reading.CSVOptions{SeriesCol: "subject", StateCol: "activity", States: states})
		names, got := lengths(csvOut, reading.CSVOptions{SeriesCol: "subject", TimeCol: "time", StateCol: "activity", States: states})
		if len(want) != 30 || !slices.Equal(got, want) || names[0] != "1" || names[29] != "30" {
			t.Fatalf("lengths %v (series %q), want %v", got, names, want)
		}
		// a second release does not fit: refused, nothing written (the
		// pairwise leakage bound calibrates HAR's transitions, recorded as
		// an ε-Pufferfish release, which no rule composes with another)
		pq := filepath.Join(dir, "synth.parquet")
		os.WriteFile(pq, []byte("the user's file"), 0o644)
		if _, err := run(append(args, "--out", pq)...); !errors.Is(err, ledger.ErrRefused) {
			t.Fatalf("over the budget: %v", err)
		}
		if b, err := os.ReadFile(pq); err != nil || string(b) != "the user's file" {
			t.Fatalf("a refused release changed %s: %q %v", pq, b, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".synth*")); len(left) != 0 {
			t.Fatalf("left behind: %v", left)
		}
		// Parquet, without a ledger
		if _, err := run("synth", "--data", har, "--series-col", "subject", "--state-col", "activity", "--states", strings.Join(states, ","), "--fit", "--epsilon", "1", "--out", pq, "--seed", "7"); err != nil {
			t.Fatal(err)
		}
		if _, got := lengths(pq, reading.CSVOptions{SeriesCol: "subject", TimeCol: "time", StateCol: "activity", States: states}); !slices.Equal(got, want) {
			t.Fatalf("parquet: %v", got)
		}
	})
}

// The matrix's k² cells are checked against --max-cells before any work;
// bad input is refused with what to give.
func TestSynthRefusals(t *testing.T) {
	har := "../../data/uci_har_activity_sequences.csv.gz"
	states := "WALKING,WALKING_UPSTAIRS,WALKING_DOWNSTAIRS,SITTING,STANDING,LAYING"
	out := filepath.Join(t.TempDir(), "s.csv")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", har, "--series-col", "subject", "--state-col", "activity", "--states", states, "--fit", "--out", out, "--max-cells", "35"}, "36 bins"},
		{[]string{"--data", har, "--series-col", "subject", "--state-col", "activity", "--states", states, "--fit"}, "--out"},
		{[]string{"--data", har, "--series-col", "subject", "--state-col", "activity", "--out", out}, "--fit"},
		{[]string{"--data", har, "--series-col", "subject", "--state-col", "activity", "--states", "WALKING", "--fit", "--out", out}, "not declared"},
	} {
		if _, err := run(append([]string{"synth"}, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v wrote %s", c.args, out)
		}
	}
}
