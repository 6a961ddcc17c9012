package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
)

type streamWindow struct {
	Start       string  `json:"start"`
	End         string  `json:"end"`
	PerBinScale float64 `json:"per_bin_scale"`
	Histogram   []struct {
		State string  `json:"state"`
		Value float64 `json:"value"`
	} `json:"histogram"`
}

func appendJSON(t *testing.T, args ...string) []streamWindow {
	t.Helper()
	out, err := run(append([]string{"stream", "append", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var v struct{ Windows []streamWindow }
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v", err)
	}
	return v.Windows
}

// A tiny stream released in two appends: the exact loss of every window
// it released (enumeration of every sequence of the chain, grid supremum
// over the outputs) is at most ε — stationary, "any" and fixed starts (a
// stream calibrates for every start), a missing reading, two and three
// states. The per-window scale is the same at every length (σ is the
// supremum), so these short chains are the hardest case for it.
func TestStreamByBruteForce(t *testing.T) {
	cases := []struct {
		P       [][]float64
		initial string
		starts  [][]float64
		T       int
		width   int // hours
		missing int // a step without a reading (−1: none)
	}{
		{[][]float64{{0.8, 0.2}, {0.1, 0.9}}, `"stationary"`, [][]float64{{1.0 / 3, 2.0 / 3}}, 8, 3, -1},
		{[][]float64{{0.2, 0.8}, {0.7, 0.3}}, `"any"`, [][]float64{{1, 0}, {0, 1}, {0.5, 0.5}}, 8, 2, 4},
		{[][]float64{{0.9, 0.1}, {0.2, 0.8}}, `[1, 0]`, [][]float64{{1, 0}, {0.6, 0.4}}, 7, 3, -1},
		{[][]float64{{0.6, 0.3, 0.1}, {0.1, 0.6, 0.3}, {0.3, 0.1, 0.6}}, `"any"`, [][]float64{{1, 0, 0}, {0.2, 0.3, 0.5}}, 6, 2, -1},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i, c := range cases {
		k := len(c.P)
		states := make([]string, k)
		for j := range states {
			states[j] = fmt.Sprint(j)
		}
		pj, _ := json.Marshal(c.P)
		sj, _ := json.Marshal(states)
		class := write(t, "class.json", fmt.Sprintf(`{"states": %s, "chains": [{"transition": %s, "initial": %s}]}`, sj, pj, c.initial))
		var first, second strings.Builder
		first.WriteString("series,time,state\n")
		second.WriteString("series,time,state\n")
		for s := 0; s < c.T; s++ {
			if s == c.missing {
				continue
			}
			b := &first
			if s >= c.T/2 {
				b = &second
			}
			fmt.Fprintf(b, "a,%d,%d\n", s*3600, rng.IntN(k))
		}
		db := filepath.Join(t.TempDir(), "l.db")
		if _, err := run("ledger", "init", "--ledger", db, "--dataset", "d", "--budget", "1"); err != nil {
			t.Fatal(err)
		}
		if _, err := run("stream", "init", "--ledger", db, "--dataset", "d", "--class", class, "--window", fmt.Sprintf("%dh", c.width), "--epsilon", "1", "--step", "3600"); err != nil {
			t.Fatal(err)
		}
		wins := appendJSON(t, "--ledger", db, "--dataset", "d", "--data", write(t, "1.csv", first.String()))
		wins = append(wins, appendJSON(t, "--ledger", db, "--dataset", "d", "--data", write(t, "2.csv", second.String()), "--close", fmt.Sprint((c.T+c.width-1)/c.width*c.width*3600))...)
		// the windows released and their readings
		var rels []brute.Release
		for _, w := range wins {
			from, _ := time.Parse(time.RFC3339, w.Start)
			to, _ := time.Parse(time.RFC3339, w.End)
			var pos []int
			for s := int(from.Unix() / 3600); s < int(to.Unix()/3600) && s < c.T; s++ {
				if s != c.missing {
					pos = append(pos, s)
				}
			}
			rels = append(rels, brute.Counts(k, pos, w.PerBinScale))
		}
		if want := (c.T + c.width - 1) / c.width; len(wins) != want {
			t.Fatalf("case %d: %d windows released, want %d", i, len(wins), want)
		}
		for _, q := range c.starts {
			loss, at, a, b, err := brute.Loss(brute.Chain{Q: q, P: c.P, T: c.T}, rels)
			if err != nil {
				t.Fatal(err)
			}
			if loss > 1+1e-9 {
				t.Errorf("case %d, start %v: all windows lose %.9g > ε = 1 (X_%d = %d vs %d)", i, q, loss, at+1, a, b)
			}
		}
	}
}

// Appending the same file twice changes nothing; a reading inside a
// released window, or not after its series' last reading, is refused with
// its file and line and stores nothing; windows are released once and
// shown from the ledger without drawing; a stream that does not fit the
// budget is refused with status 4 and not created. On SQLite and
// PostgreSQL.
func TestStreamContract(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, db string) {
		class := write(t, "class.json", `{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.1, 0.9]], "initial": "stationary"}]}`)
		if _, err := run("ledger", "init", "--ledger", db, "--dataset", "d", "--budget", "1.5"); err != nil {
			t.Fatal(err)
		}
		if _, err := run("ledger", "init", "--ledger", db, "--dataset", "small", "--budget", "0.5"); err != nil {
			t.Fatal(err)
		}
		_, err := run("stream", "init", "--ledger", db, "--dataset", "small", "--class", class, "--window", "2h", "--epsilon", "1")
		if !errors.Is(err, ledger.ErrRefused) {
			t.Fatalf("a stream over the budget: %v", err)
		}
		if _, err := run("stream", "show", "--ledger", db, "--dataset", "small"); err == nil || !strings.Contains(err.Error(), "has no stream") {
			t.Fatalf("a refused stream was created: %v", err)
		}
		out, err := run("stream", "init", "--ledger", db, "--dataset", "d", "--class", class, "--window", "2h", "--epsilon", "1", "--json")
		if err != nil || !strings.Contains(out, `"spent": 1`) {
			t.Fatalf("%v %s", err, out)
		}
		if _, err := run("stream", "init", "--ledger", db, "--dataset", "d", "--class", class, "--window", "2h", "--epsilon", "0.1"); err == nil || !strings.Contains(err.Error(), "already has a stream") {
			t.Fatalf("a second stream: %v", err)
		}
		day1 := write(t, "day1.csv", "series,time,state\na,0,0\na,3600,1\nb,3600,1\na,7200,1\nb,7200,0\n")
		w1 := appendJSON(t, "--ledger", db, "--dataset", "d", "--data", day1)
		if len(w1) != 1 || w1[0].Start != "1970-01-01T00:00:00Z" || w1[0].PerBinScale != 11.825893364148214 { // the leakage bound (MQM: 44.60)
			t.Fatalf("first append: %+v", w1)
		}
		if again := appendJSON(t, "--ledger", db, "--dataset", "d", "--data", day1); len(again) != 0 {
			t.Fatalf("the same file again released %+v", again)
		}
		late := write(t, "late.csv", "series,time,state\nc,3600,0\n")
		if _, err := run("stream", "append", "--ledger", db, "--dataset", "d", "--data", late); err == nil || !strings.Contains(err.Error(), "late.csv:2") || !strings.Contains(err.Error(), "already closed") {
			t.Fatalf("a late reading: %v", err)
		}
		old := write(t, "old.csv", "series,time,state\na,10800,0\nb,3600,0\n")
		if _, err := run("stream", "append", "--ledger", db, "--dataset", "d", "--data", old); err == nil || !strings.Contains(err.Error(), "old.csv:3") {
			t.Fatalf("a reading before its series' last: %v", err)
		}
		w2 := appendJSON(t, "--ledger", db, "--dataset", "d", "--data", write(t, "day2.csv", "series,time,state\na,10800,0\nb,14400,1\n"), "--close", "14400")
		if len(w2) != 1 || w2[0].Start != "1970-01-01T02:00:00Z" {
			t.Fatalf("second append: %+v", w2)
		}
		out, err = run("stream", "show", "--ledger", db, "--dataset", "d", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var shown struct{ Windows []streamWindow }
		json.Unmarshal([]byte(out), &shown)
		if len(shown.Windows) != 2 || fmt.Sprint(shown.Windows[0]) != fmt.Sprint(w1[0]) || fmt.Sprint(shown.Windows[1]) != fmt.Sprint(w2[0]) {
			t.Fatalf("show: %+v, released %+v %+v", shown.Windows, w1, w2)
		}
		for _, word := range []string{`"counts":`, `"open":`, `"last":`, `"closed":`} {
			if strings.Contains(out, word) {
				t.Errorf("show prints %q (the open windows' counts must stay in the ledger):\n%s", word, out)
			}
		}
		// the stream's one charge is the dataset's spend; releases add to it
		st := runJSON(t, "ledger", "show", "--ledger", db, "--json")
		if !strings.Contains(fmt.Sprint(st), "spent:1 ") {
			t.Fatalf("ledger after the stream: %v", st)
		}
	})
}

// kill -9 during appends leaves the old state or the new one: after
// killing appends at random moments and then appending every file to the
// end, the stream has released exactly the windows of the data, each once,
// with the counts of a single pass (checked by the windows' number and
// their readings).
func TestStreamSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds puff and kills it")
	}
	bin := binary(t)
	pgtest.Stores(t, func(t *testing.T, db string) {
		dir := t.TempDir()
		class := filepath.Join(dir, "class.json")
		os.WriteFile(class, []byte(`{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.1, 0.9]], "initial": "stationary"}]}`), 0o644)
		if _, e, code := puffRun(bin, "ledger", "init", "--ledger", db, "--dataset", "d", "--budget", "1"); code != 0 {
			t.Fatal(e)
		}
		if _, e, code := puffRun(bin, "stream", "init", "--ledger", db, "--dataset", "d", "--class", class, "--window", "1h", "--epsilon", "1", "--step", "60"); code != 0 {
			t.Fatal(e)
		}
		// 4 files of 40,000 rows (100 series × 400 minutes each)
		var files []string
		for f := range 4 {
			var b strings.Builder
			b.WriteString("series,time,state\n")
			for s := range 100 {
				for m := f * 400; m < (f+1)*400; m++ {
					fmt.Fprintf(&b, "s%d,%d,%d\n", s, m*60, (m/7+s)%2)
				}
			}
			p := filepath.Join(dir, fmt.Sprintf("f%d.csv", f))
			os.WriteFile(p, []byte(b.String()), 0o644)
			files = append(files, p)
		}
		rng := rand.New(rand.NewPCG(9, 9))
		for _, f := range files {
			for range 3 {
				cmd := exec.Command(bin, "stream", "append", "--ledger", db, "--dataset", "d", "--data", f)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
				cmd.Process.Kill()
				cmd.Wait()
			}
			if _, e, code := puffRun(bin, "stream", "append", "--ledger", db, "--dataset", "d", "--data", f); code != 0 {
				t.Fatalf("%s after kills: %s", f, e)
			}
		}
		out, e, code := puffRun(bin, "stream", "show", "--ledger", db, "--dataset", "d", "--json")
		if code != 0 {
			t.Fatal(e)
		}
		var shown struct {
			Windows []struct {
				Start        string `json:"start"`
				Observations int    `json:"observations"`
			}
		}
		json.Unmarshal([]byte(out), &shown)
		// 1600 minutes: hours 0..25 close (the 27th hour, 1560–1599, stays open)
		if len(shown.Windows) != 26 {
			t.Fatalf("%d windows released, want 26", len(shown.Windows))
		}
		for i, w := range shown.Windows {
			if w.Observations != 6000 {
				t.Fatalf("window %d (%s) holds %d readings, want 6000: a reading was lost or counted twice", i, w.Start, w.Observations)
			}
		}
	})
}

// puff stream init --running (docs/math.md §4.12): the one charge is ε,
// recorded with the query "running counts" and the σ every node is drawn
// with (the calibration's: the smaller bound), exactly as printed; every
// closed window prints the total since the first window beside the node
// it drew, and show reads them back from the ledger without drawing.
func TestStreamRunning(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, db string) {
		class := write(t, "class.json", `{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.1, 0.9]], "initial": "stationary"}]}`)
		if _, err := run("ledger", "init", "--ledger", db, "--dataset", "d", "--budget", "1"); err != nil {
			t.Fatal(err)
		}
		if _, err := run("stream", "init", "--ledger", db, "--dataset", "d", "--class", class, "--window", "1h", "--epsilon", "1", "--running", "--query", "relative"); err == nil || !strings.Contains(err.Error(), "--query counts") {
			t.Fatalf("a running stream of relative frequencies: %v", err)
		}
		out, err := run("stream", "init", "--ledger", db, "--dataset", "d", "--class", class, "--window", "1h", "--epsilon", "1", "--running", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var init struct {
			Running     bool
			Calibration struct {
				Method string
				MQM    float64 `json:"mqm_sigma"`
				TPL    float64 `json:"tpl_sigma"`
			}
			Ledger struct{ Spent float64 }
		}
		if err := json.Unmarshal([]byte(out), &init); err != nil || !init.Running || init.Ledger.Spent != 1 {
			t.Fatalf("%v %s", err, out)
		}
		sigma := min(init.Calibration.MQM, init.Calibration.TPL)
		exp, err := run("ledger", "export", "--ledger", db, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Epsilon float64
			Record  struct {
				Query   string
				Sigma   float64
				Stream  bool
				Epsilon float64
			}
		}
		if err := json.Unmarshal([]byte(strings.SplitN(exp, "\n", 2)[0]), &rec); err != nil || rec.Record.Query != "running counts" || rec.Record.Sigma != sigma || !rec.Record.Stream || rec.Record.Epsilon != 1 {
			t.Fatalf("recorded %+v (σ %g): %v\n%s", rec, sigma, err, exp)
		}
		data := write(t, "d.csv", "series,time,state\na,0,0\na,3600,1\na,7200,1\nb,7200,0\na,10800,0\na,14400,1\n")
		out, err = run("stream", "append", "--ledger", db, "--dataset", "d", "--data", data, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Windows []struct {
				Lipschitz   float64 `json:"lipschitz"`
				PerBinScale float64 `json:"per_bin_scale"`
				Running     struct {
					Windows      int
					Observations int
					Nodes        int
					Total        []struct{ Value float64 }
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Windows) != 4 {
			t.Fatalf("%v %s", err, out)
		}
		for i, w := range got.Windows {
			h := []float64{1, 2, 2, 3}[i]
			if r := w.Running; r.Windows != i+1 || r.Observations != []int{1, 2, 4, 5}[i] || r.Nodes != []int{1, 2, 2, 3}[i] || len(r.Total) != 2 || w.Lipschitz != 2*h || math.Abs(w.PerBinScale-sigma*2*h) > 1e-12*w.PerBinScale {
				t.Fatalf("window %d: %+v (σ %g)", i, w, sigma)
			}
		}
		shown, err := run("stream", "show", "--ledger", db, "--dataset", "d")
		if err != nil || strings.Count(shown, "== running total 1970-01-01T00:00:00Z") != 4 || !strings.Contains(shown, "with running totals") {
			t.Fatalf("%v\n%s", err, shown)
		}
	})
}
