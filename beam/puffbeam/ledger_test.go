package puffbeam

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/ledger/logfile"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/record"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/release/commit"
)

// fixedStart is a class whose chains start from a fixed distribution: a
// recorded release (puff release --ledger, no origin) is calibrated for
// every start (class.AnyStart), which changes σ; the pipeline must do the
// same.
const fixedStart = `{"states": ["0", "1", "2"], "chains": [{"transition": [[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]], "initial": [1, 0, 0]}]}`

// newLedger is a ledger at dsn (created) with one dataset of this budget.
func newLedger(t *testing.T, dsn, dataset, budget string) ledger.Store {
	t.Helper()
	s, err := ledger.Open(context.Background(), dsn, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b, ok := new(big.Rat).SetString(budget)
	if !ok {
		t.Fatal(budget)
	}
	if err := s.Init(context.Background(), ledger.Registration{Name: dataset, Budget: b}); err != nil {
		t.Fatal(err)
	}
	return s
}

// coreRecorded is what puff release --ledger prepares on the whole data:
// placed as a recorded release without an origin (commit.Place), so
// every start is calibrated for.
func coreRecorded(t *testing.T, whole string, cl *markov.Class, cfg Config, m mechanism.Name) *release.Pending {
	t.Helper()
	req := release.Request{Class: cl}
	if cfg.Fit {
		req = release.Request{Fit: true, Smoothing: cfg.Smoothing}
	}
	req.CSV, _ = cfg.Spec.CSV()
	req.Options = release.Options{Epsilon: cfg.Epsilon, Method: m, Profile: cfg.Profile}
	if cfg.EpsilonRat != "" {
		req.EpsilonRat, _ = new(big.Rat).SetString(cfg.EpsilonRat)
	}
	if err := commit.Place(context.Background(), &req, commit.Target{Log: "recorded"}, ""); err != nil {
		t.Fatal(err)
	}
	if !req.UnknownStart {
		t.Fatal("a recorded release without an origin is not calibrated for every start")
	}
	p, err := release.Prepare(strings.NewReader(whole), "whole.csv", req, cfg.Window)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recordJSON is a record with its segments in series order, as JSON.
func recordJSON(t *testing.T, r record.Release) string {
	t.Helper()
	r.Segments = slices.Clone(r.Segments)
	slices.SortFunc(r.Segments, func(a, b record.Segment) int { return strings.Compare(a.Series, b.Series) })
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ledgerField is the report's "ledger" field as JSON.
func ledgerField(t *testing.T, report []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(report, &m); err != nil {
		t.Fatalf("%v: %s", err, report)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, m["ledger"]); err != nil {
		t.Fatalf("the report has no ledger field: %v", err)
	}
	return b.String()
}

// With --ledger the pipeline records one release whose record is puff
// release --ledger's on the same data (the same segments, σ, mechanism
// and active quilts, computed by the core on the whole file), spends ε,
// and its report carries the ledger state as puff release --json
// --ledger prints it; the report is the core's recorded release but for
// the noise (σ calibrated for every start, as the core's).
func TestLedgerRecordsTheRelease(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, 300, 3)
	cl, err := markov.ParseClass(strings.NewReader(fixedStart), "class")
	if err != nil {
		t.Fatal(err)
	}
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		for i, c := range []struct {
			m   mechanism.Name
			fit bool
		}{{mechanism.Exact, false}, {mechanism.Approx, false}, {mechanism.Exact, true}} {
			m := c.m
			dataset := fmt.Sprint("meters-", m, c.fit)
			s := newLedger(t, dsn, dataset, "10")
			cfg := Config{Input: filepath.Join(dir, "part-*"), Class: fixedStart, Epsilon: 0.5, EpsilonRat: "1/2", Method: string(m),
				Output: filepath.Join(t.TempDir(), fmt.Sprint("report", i, ".json")), Ledger: dsn, Dataset: dataset,
				Spec: reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series"}}
			if c.fit {
				cfg.Class, cfg.Fit, cfg.Smoothing = "", true, 0.5
			}
			got := runPipeline(t, cfg)
			entries, err := s.Entries(context.Background(), dataset)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				t.Fatalf("%s: %d ledger entries, want 1", m, len(entries))
			}
			st, err := s.Dataset(context.Background(), dataset)
			if err != nil {
				t.Fatal(err)
			}
			if st.Spent.Epsilon.Cmp(big.NewRat(1, 2)) != 0 || st.Releases != 1 {
				t.Errorf("%s: spent %s over %d releases, want 1/2 over 1", m, st.Spent.Epsilon.RatString(), st.Releases)
			}
			want, _ := json.Marshal(st)
			if g := ledgerField(t, got); g != string(want) {
				t.Errorf("%s: the report's ledger field\n%s\nwant the ledger's state\n%s", m, g, want)
			}
			p := coreRecorded(t, whole, cl, cfg, m)
			if g, w := recordJSON(t, entries[0].Record), recordJSON(t, *p.Record); g != w {
				t.Fatalf("%s: the pipeline's record differs from puff release's:\n%.3000s\n%.3000s", m, g, w)
			}
			if len(entries[0].Record.Segments) != 300 {
				t.Fatalf("%s: %d segments for 300 series", m, len(entries[0].Record.Segments))
			}
			out, err := p.Draw()
			if err != nil {
				t.Fatal(err)
			}
			core, _ := json.Marshal(out)
			var gotNoLedger map[string]any
			json.Unmarshal(got, &gotNoLedger)
			delete(gotNoLedger, "ledger")
			g, _ := json.Marshal(gotNoLedger)
			if gs, ws := strip(t, g), strip(t, core); gs != ws {
				t.Fatalf("%s: the recorded pipeline's report and puff release --ledger's differ:\n%s\n%s", m, gs, ws)
			}
			// the recorded result is the report's noisy histogram
			var rec, rep struct{ Histogram json.RawMessage }
			json.Unmarshal(entries[0].Result, &rec)
			json.Unmarshal(got, &rep)
			if len(rec.Histogram) == 0 || !bytes.Equal(compact(t, rec.Histogram), compact(t, rep.Histogram)) {
				t.Fatalf("%s: the ledger recorded %s, the report shows %s", m, rec.Histogram, rep.Histogram)
			}
		}
		// the class of a fixed start is calibrated for every start: σ
		// differs from an unrecorded release's
		cfg := Config{Input: filepath.Join(dir, "part-*"), Class: fixedStart, Epsilon: 0.5, Method: "exact", Output: filepath.Join(t.TempDir(), "plain.json"),
			Spec: reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series"}}
		plain := runPipeline(t, cfg)
		var a struct{ Sigma float64 }
		json.Unmarshal(plain, &a)
		p := coreRecorded(t, whole, cl, cfg, mechanism.Exact)
		out, _ := p.Draw()
		if out.(*release.Report).Sigma == a.Sigma {
			t.Fatalf("σ %v with and without a ledger: the test does not tell the calibrations apart", a.Sigma)
		}
	})
}

func compact(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A release over the budget is refused before any noise is drawn: the
// pipeline fails with the ledger's refusal, no report is written and the
// ledger is unchanged.
func TestLedgerRefusesOverBudget(t *testing.T) {
	dir := t.TempDir()
	generate(t, dir, 100, 2)
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		s := newLedger(t, dsn, "meters", "0.4")
		cfg := Config{Input: filepath.Join(dir, "part-*"), Class: class, Epsilon: 0.5, EpsilonRat: "1/2", Method: "exact",
			Output: filepath.Join(t.TempDir(), "report.json"), Ledger: dsn, Dataset: "meters",
			Spec: reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series"}}
		p, sc := beam.NewPipelineWithRoot()
		if err := Build(sc, cfg); err != nil {
			t.Fatal(err)
		}
		err := ptest.Run(p)
		if err == nil || !strings.Contains(err.Error(), ledger.ErrRefused.Error()) {
			t.Fatalf("error %v, want the ledger's refusal", err)
		}
		if _, err := os.Stat(cfg.Output); err == nil {
			t.Fatal("a refused release wrote a report")
		}
		st, err := s.Dataset(context.Background(), "meters")
		if err != nil {
			t.Fatal(err)
		}
		if st.Spent.Epsilon.Sign() != 0 || st.Releases != 0 {
			t.Fatalf("a refused release changed the ledger: spent %s, %d releases", st.Spent.Epsilon.RatString(), st.Releases)
		}
	})
}

// reportInputs is a small summary of two series for calling the report
// function directly: a and b read at times 1–3 and 1, 2, 4.
func reportInputs(t *testing.T) (Acc, func(*string, *string) bool) {
	t.Helper()
	gapped, err := mqm.At([]int{1, 2, 4})
	if err != nil {
		t.Fatal(err)
	}
	pa, _ := json.Marshal(mqm.Consecutive(1, 3))
	pb, _ := json.Marshal(gapped)
	a := Acc{Counts: []float64{3, 2, 1}, Patterns: map[string]int{string(pa): 1, string(pb): 1}, Sequences: 2, Observations: 6, Missing: 1, MinLen: 3, MaxLen: 3}
	segs := func() func(*string, *string) bool {
		list := [][2]string{{"a", string(pa)}, {"b", string(pb)}}
		i := 0
		return func(s, p *string) bool {
			if i == len(list) {
				return false
			}
			*s, *p = list[i][0], list[i][1]
			i++
			return true
		}
	}
	return a, segs()
}

// ε stays exact from what the user typed to the ledger: nine releases of
// ε = 5/9 spend a budget of 5 exactly, and a tenth is refused (as
// TestExactEpsilonReachesTheLedger for puff release; the float nearest
// 5/9 is above it, so nine of them would exceed 5).
func TestExactEpsilonReachesTheLedger(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		s := newLedger(t, dsn, "ex", "5")
		dir := t.TempDir()
		for i := range 10 {
			cfg := Config{Class: class, Epsilon: 5.0 / 9, EpsilonRat: "5/9", Method: "exact", Output: filepath.Join(dir, fmt.Sprint(i, ".json")),
				Ledger: dsn, Dataset: "ex", RunID: fmt.Sprint("run-", i), Spec: reading.Spec{TimeCol: "time", SeriesCol: "series"}}
			a, segs := reportInputs(t)
			err := (&reportFn{Cfg: cfg}).ProcessElement(context.Background(), a, 1, reading.RowStats{}, segs)
			if i < 9 && err != nil {
				t.Fatalf("release %d: %v", i+1, err)
			}
			if i == 9 && !strings.Contains(fmt.Sprint(err), ledger.ErrRefused.Error()) {
				t.Fatalf("a tenth release of 5/9 on a budget of 5: %v, want refused", err)
			}
		}
		st, err := s.Dataset(context.Background(), "ex")
		if err != nil {
			t.Fatal(err)
		}
		if st.Spent.Epsilon.Cmp(big.NewRat(5, 1)) != 0 || st.Releases != 9 {
			t.Fatalf("nine releases of 5/9 spent %s over %d releases, want exactly 5 over 9", st.Spent.Epsilon.RatString(), st.Releases)
		}
	})
	// through the whole pipeline, the record carries the exact ε
	dir := t.TempDir()
	generate(t, dir, 50, 2)
	dsn := filepath.Join(t.TempDir(), "l.db")
	s := newLedger(t, dsn, "ex", "5")
	cfg := Config{Input: filepath.Join(dir, "part-*"), Class: class, Epsilon: 5.0 / 9, EpsilonRat: "5/9", Method: "exact", Output: filepath.Join(dir, "r.json"),
		Ledger: dsn, Dataset: "ex", Spec: reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series"}}
	runPipeline(t, cfg)
	entries, err := s.Entries(context.Background(), "ex")
	if err != nil || len(entries) != 1 {
		t.Fatalf("%v, %d entries", err, len(entries))
	}
	if e := entries[0].Record.EpsilonExact; e != "5/9" {
		t.Fatalf("the pipeline's record carries ε %q, want 5/9", e)
	}
}

// A retried release stage (the report function called again with the
// same Config: the same run) replays the recorded release: the same
// report byte for byte, nothing drawn or spent again; another run draws
// and spends anew.
func TestRetryReplaysTheRecordedRelease(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "l.db")
	s := newLedger(t, dsn, "ds", "10")
	out := filepath.Join(t.TempDir(), "report.json")
	cfg := Config{Class: class, Epsilon: 1, EpsilonRat: "1", Method: "exact", Output: out, Ledger: dsn, Dataset: "ds",
		Spec: reading.Spec{TimeCol: "time", SeriesCol: "series"}, Warning: "a warning"}
	// Build gives the run its id, once
	if err := cfg.checkRecording(); err != nil || cfg.RunID == "" {
		t.Fatalf("no run id: %v", err)
	}
	var reports [][]byte
	for range 2 {
		a, segs := reportInputs(t)
		if err := (&reportFn{Cfg: cfg}).ProcessElement(context.Background(), a, 1, reading.RowStats{}, segs); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(out)
		reports = append(reports, b)
	}
	if !bytes.Equal(reports[0], reports[1]) {
		t.Fatalf("the retry's report differs:\n%s\n%s", reports[0], reports[1])
	}
	if !strings.Contains(string(reports[1]), "a warning") || !strings.Contains(string(reports[1]), `"histogram"`) {
		t.Fatalf("the replayed report lacks its warning or histogram: %s", reports[1])
	}
	entries, err := s.Entries(context.Background(), "ds")
	if err != nil || len(entries) != 1 {
		t.Fatalf("%v: %d entries after a retry, want 1", err, len(entries))
	}
	// another run (a new id) is a new release
	cfg.RunID = NewRunID()
	a, segs := reportInputs(t)
	if err := (&reportFn{Cfg: cfg}).ProcessElement(context.Background(), a, 1, reading.RowStats{}, segs); err != nil {
		t.Fatal(err)
	}
	st, err := s.Dataset(context.Background(), "ds")
	if err != nil {
		t.Fatal(err)
	}
	if st.Releases != 2 || st.Spent.Epsilon.Cmp(big.NewRat(2, 1)) != 0 {
		t.Fatalf("two runs: %d releases spending %s, want 2 spending 2", st.Releases, st.Spent.Epsilon.RatString())
	}
	// the same id with a different release is refused, not replayed
	cfg.Epsilon, cfg.EpsilonRat = 0.5, "1/2"
	a, segs = reportInputs(t)
	if err := (&reportFn{Cfg: cfg}).ProcessElement(context.Background(), a, 1, reading.RowStats{}, segs); err == nil || !strings.Contains(err.Error(), ledger.ErrKeyReused.Error()) {
		t.Fatalf("a run id reused for another release: %v", err)
	}
}

// --window with --ledger: the whole run is recorded as one release, as
// puff release --window --ledger records it (the same record, computed
// by the core on the whole data), spending ε once.
func TestLedgerWindowsAreOneRelease(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, 300, 3)
	cl, err := markov.ParseClass(strings.NewReader(fixedStart), "class")
	if err != nil {
		t.Fatal(err)
	}
	dsn := filepath.Join(t.TempDir(), "l.db")
	s := newLedger(t, dsn, "w", "10")
	cfg := Config{Input: filepath.Join(dir, "part-*"), Class: fixedStart, Epsilon: 0.5, EpsilonRat: "1/2", Method: "exact", Output: filepath.Join(dir, "w.json"),
		Window: 10 * time.Minute, Ledger: dsn, Dataset: "w", Spec: reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series"}}
	got := runPipeline(t, cfg)
	entries, err := s.Entries(context.Background(), "w")
	if err != nil || len(entries) != 1 {
		t.Fatalf("%v: %d entries, want 1", err, len(entries))
	}
	p := coreRecorded(t, whole, cl, cfg, mechanism.Exact)
	if g, w := recordJSON(t, entries[0].Record), recordJSON(t, *p.Record); g != w {
		t.Fatalf("the pipeline's windows record differs from puff release's:\n%.3000s\n%.3000s", g, w)
	}
	st, _ := s.Dataset(context.Background(), "w")
	if st.Spent.Epsilon.Cmp(big.NewRat(1, 2)) != 0 {
		t.Fatalf("windows spent %s, want 1/2", st.Spent.Epsilon.RatString())
	}
	want, _ := json.Marshal(st)
	if g := ledgerField(t, got); g != string(want) {
		t.Errorf("the report's ledger field\n%s\nwant\n%s", g, want)
	}
	out, err := p.Draw()
	if err != nil {
		t.Fatal(err)
	}
	core, _ := json.Marshal(out)
	var m map[string]any
	json.Unmarshal(got, &m)
	delete(m, "ledger")
	g, _ := json.Marshal(m)
	if gs, ws := stripWindows(t, g), stripWindows(t, core); gs != ws {
		t.Fatalf("windows: the recorded pipeline's report and puff release --ledger's differ:\n%.2000s\n%.2000s", gs, ws)
	}
	if len(out.(*release.WindowedReport).Windows) < 3 {
		t.Fatal("too few windows: the test proves little")
	}
}

// --log appends the release to a compose log as puff release --log does:
// the same log (the record computed by the core on the whole data,
// appended to a second log) and the same total in the report's "ledger"
// field.
func TestLogAppendsTheRelease(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, 200, 2)
	cl, err := markov.ParseClass(strings.NewReader(fixedStart), "class")
	if err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	cfg := Config{Input: filepath.Join(dir, "part-*"), Class: fixedStart, Epsilon: 0.25, EpsilonRat: "1/4", Method: "approx", Output: filepath.Join(dir, "l.json"),
		Log: filepath.Join(logs, "pipeline.json"), Spec: reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series"}}
	var got []byte
	for range 2 {
		got = runPipeline(t, cfg)
	}
	p := coreRecorded(t, whole, cl, cfg, mechanism.Approx)
	var total compose.Total
	for range 2 {
		if total, err = logfile.Append(filepath.Join(logs, "core.json"), release.DatasetName(cfg.Input), cl, p.Record); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := json.Marshal(total)
	if g := ledgerField(t, got); g != string(want) {
		t.Fatalf("the report's ledger field\n%s\nwant puff release --log's total\n%s", g, want)
	}
	a, _ := os.ReadFile(cfg.Log)
	b, _ := os.ReadFile(filepath.Join(logs, "core.json"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the pipeline's log differs from puff release's:\n%.2000s\n%.2000s", a, b)
	}
	if total.Releases != 2 {
		t.Fatalf("%d releases in the log, want 2", total.Releases)
	}
}

// A profile through the pipeline is puff release --profile's: the same
// report but for the noise (σ, every cell's sizes and scales, the total),
// and, recorded, the same ledger record (naming the profile) and ε
// spent.
func TestPipelineProfileEqualsCore(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, 300, 3)
	cl, err := markov.ParseClass(strings.NewReader(fixedStart), "class")
	if err != nil {
		t.Fatal(err)
	}
	// times in minutes: readings an hour apart, over several cells
	spec := reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series", TimeUnit: 60, TZ: "Europe/Paris"}
	for _, kind := range []string{"hour-of-day", "week-hour"} {
		dsn := filepath.Join(t.TempDir(), "l.db")
		s := newLedger(t, dsn, "p", "10")
		cfg := Config{Input: filepath.Join(dir, "part-*"), Class: fixedStart, Epsilon: 0.5, EpsilonRat: "1/2", Method: "exact", Output: filepath.Join(dir, kind+".json"),
			Profile: kind, Ledger: dsn, Dataset: "p", Spec: spec}
		got := runPipeline(t, cfg)
		entries, err := s.Entries(context.Background(), "p")
		if err != nil || len(entries) != 1 {
			t.Fatalf("%v: %d entries, want 1", err, len(entries))
		}
		p := coreRecorded(t, whole, cl, cfg, mechanism.Exact)
		if g, w := recordJSON(t, entries[0].Record), recordJSON(t, *p.Record); g != w || entries[0].Record.Profile != kind {
			t.Fatalf("%s: the pipeline's record differs from puff release's:\n%.3000s\n%.3000s", kind, g, w)
		}
		st, _ := s.Dataset(context.Background(), "p")
		if st.Spent.Epsilon.Cmp(big.NewRat(1, 2)) != 0 {
			t.Fatalf("%s: spent %s, want 1/2", kind, st.Spent.Epsilon.RatString())
		}
		out, err := p.Draw()
		if err != nil {
			t.Fatal(err)
		}
		core, _ := json.Marshal(out)
		var m map[string]any
		json.Unmarshal(got, &m)
		delete(m, "ledger")
		g, _ := json.Marshal(m)
		if gs, ws := stripCells(t, g), stripCells(t, core); gs != ws {
			t.Fatalf("%s: the pipeline's profile and puff release's differ:\n%.2000s\n%.2000s", kind, gs, ws)
		}
		// The data has missing values (NA, Parquet nulls): every cell's
		// estimate is the projection onto Σ ≤ its readings, as puff
		// release's (release.ConsistentCounts, complete = false), from the
		// cell's own printed values.
		var gp struct {
			Profile []struct {
				Observations float64 `json:"observations"`
				Histogram    []struct {
					Value    float64  `json:"value"`
					Estimate *float64 `json:"estimate"`
				} `json:"histogram"`
			} `json:"profile"`
		}
		if err := json.Unmarshal(got, &gp); err != nil {
			t.Fatal(err)
		}
		for ci, c := range gp.Profile {
			var vals []float64
			for _, b := range c.Histogram {
				vals = append(vals, b.Value)
			}
			want, err := release.ConsistentCounts(vals, c.Observations, false)
			if err != nil {
				t.Fatal(err)
			}
			for j, b := range c.Histogram {
				if b.Estimate == nil || math.Abs(*b.Estimate-want[j]) > 1e-9*(1+math.Abs(want[j])) {
					t.Fatalf("%s: cell %d bin %d: estimate %v, want %v (Σ ≤ %v readings)", kind, ci, j, b.Estimate, want[j], c.Observations)
				}
			}
		}
		filled := 0
		for _, c := range out.(*release.ProfileReport).Cells {
			if c.Observations > 0 {
				filled++
			}
		}
		if filled < 3 {
			t.Fatalf("%s: %d cells with readings: the test proves little", kind, filled)
		}
	}
}

func stripCells(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	for _, c := range m["profile"].([]any) {
		delete(c.(map[string]any), "histogram")
		delete(c.(map[string]any), "mean")
	}
	out, _ := json.Marshal(m)
	return string(out)
}
