package puffbeam

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

func TestMain(m *testing.M) { ptest.Main(m) }

const class = `{"states": ["0", "1", "2"], "chains": [{"transition": [[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]], "initial": "stationary"}]}`

// generate writes n series of readings over nFiles files (rows shuffled,
// series split across files, some gzip, some Parquet), with gaps and
// missing values, and
// returns the whole data as one CSV for the core.
func generate(t *testing.T, dir string, n, nFiles int) string {
	rng := rand.New(rand.NewPCG(5, 6))
	header := "series,time,kw\n"
	var rows []string
	for s := range n {
		tm := 0
		for range 3 + rng.IntN(25) {
			tm += 60
			if rng.IntN(10) == 0 {
				tm += 60 * (1 + rng.IntN(3)) // a gap
			}
			v := fmt.Sprintf("%.2f", rng.Float64()*3.3) // some above the levels' bound
			if rng.IntN(20) == 0 {
				v = "NA" // a missing value
			}
			rows = append(rows, fmt.Sprintf("p%05d,%d,%s\n", s, tm, v))
		}
	}
	whole := header + strings.Join(rows, "")
	rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	parts := make([]string, nFiles)
	for i, r := range rows {
		parts[i%nFiles] += r
	}
	for i, p := range parts {
		name := filepath.Join(dir, fmt.Sprintf("part-%02d.csv", i))
		if i%3 == 2 {
			// Parquet, typed columns, nulls for NA
			f, _ := os.Create(strings.TrimSuffix(name, ".csv") + ".parquet")
			if err := reading.WriteParquet(f, strings.NewReader(header+p), name, map[string]string{"time": "int64", "kw": "double"}, 500); err != nil {
				t.Fatal(err)
			}
			f.Close()
			continue
		}
		if i%2 == 1 {
			f, _ := os.Create(name + ".gz")
			gz := gzip.NewWriter(f)
			gz.Write([]byte(header + p))
			gz.Close()
			f.Close()
			continue
		}
		os.WriteFile(name, []byte(header+p), 0o644)
	}
	return whole
}

// setFit makes cfg fit its class (smoothing 0.5) when fit, and returns
// the core request that releases the same.
func setFit(cfg *Config, cl *markov.Class, fit bool, m mechanism.Name) release.Request {
	req := release.Request{Class: cl}
	if fit {
		cfg.Class, cfg.Fit, cfg.Smoothing = "", true, 0.5
		req = release.Request{Fit: true, Smoothing: 0.5}
	}
	req.CSV, _ = cfg.Spec.CSV()
	req.Options = release.Options{Epsilon: cfg.Epsilon, Method: m}
	return req
}

// runPipeline builds and runs the release and returns its report.
func runPipeline(t *testing.T, cfg Config) []byte {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, cfg); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// strip is a report's JSON without its noisy values.
func strip(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	delete(m, "histogram")
	delete(m, "mean")
	delete(m, "mean_estimate")
	out, _ := json.Marshal(m)
	return string(out)
}

// 10⁴ series spread over files in any order, with gaps and missing
// values: the pipeline's report equals the core's on the whole data except
// for the noise (same σ, scales, sizes and lengths).
func TestPipelineEqualsCore(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, 10000, 6)
	cl, err := markov.ParseClass(strings.NewReader(class), "class")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m   mechanism.Name
		fit bool
	}{{mechanism.Exact, false}, {mechanism.Approx, false}, {mechanism.Exact, true}} {
		m := c.m
		out := filepath.Join(dir, fmt.Sprintf("report-%s-%v.json", m, c.fit))
		cfg := Config{Input: filepath.Join(dir, "part-*"), Class: class, Epsilon: 0.5, Method: string(m), Output: out,
			Spec: reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series"}}
		req := setFit(&cfg, cl, c.fit, m)
		got := runPipeline(t, cfg)
		rep, _, err := release.Run(strings.NewReader(whole), "whole.csv", req)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(rep)
		if g, w := strip(t, got), strip(t, want); g != w {
			t.Fatalf("%s (fit %v): pipeline and core differ:\n%s\n%s", m, c.fit, g, w)
		}
		if rep.Missing == 0 || rep.Sequences != 10000 {
			t.Fatalf("the data has %d missing steps and %d series", rep.Missing, rep.Sequences)
		}
		if g := strip(t, got); strings.Contains(g, "clipped") || strings.Contains(g, "missing_values") {
			t.Fatalf("the pipeline prints a count of clipped or missing values: %s", g)
		}
	}
}

// A malformed row fails the pipeline with its file and line; nothing is
// dropped silently.
func TestBadRowFails(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "good.csv"), []byte("series,time,state\nx,1,0\nx,2,1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.csv"), []byte("series,time,state\ny,1,0\ny,two,1\n"), 0o644)
	cfg := Config{Input: filepath.Join(dir, "*.csv"), Class: class, Epsilon: 1, Method: "exact", Output: filepath.Join(dir, "out.json")}
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, cfg); err != nil {
		t.Fatal(err)
	}
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "bad.csv:3") {
		t.Fatalf("error %v, want one naming bad.csv:3", err)
	}
	// its cause, alone, is the reader's error (puffbeam prints it first)
	if c := Cause(err).Error(); c != filepath.Join(dir, "bad.csv")+`:3: field "time": "two": not a number of seconds or an RFC 3339 timestamp (give a time format)` {
		t.Errorf("cause %q of\n%v", c, err)
	}
	if _, err := os.Stat(cfg.Output); err == nil {
		t.Fatal("a failed pipeline wrote a report")
	}
	// a repeated time of one series across files names both rows
	os.Remove(filepath.Join(dir, "bad.csv"))
	os.WriteFile(filepath.Join(dir, "dup.csv"), []byte("series,time,state\nx,2,2\n"), 0o644)
	p, s = beam.NewPipelineWithRoot()
	Build(s, cfg)
	err = ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "repeated") || !strings.Contains(err.Error(), `time 2 of series "x"`) {
		t.Fatalf("repeated time across files: %v", err)
	}
	if c := Cause(err).Error(); c != filepath.Join(dir, "good.csv")+`:3: time 2 of series "x" does not increase (repeated) (`+filepath.Join(dir, "dup.csv")+`:2 has 2)` {
		t.Errorf("cause %q of\n%v", c, err)
	}
	// a time off the grid is named as written
	os.Remove(filepath.Join(dir, "dup.csv"))
	os.WriteFile(filepath.Join(dir, "off.csv"), []byte("series,time,state\nx,4.50,2\nx,3,1\n"), 0o644)
	p, s = beam.NewPipelineWithRoot()
	Build(s, cfg)
	if err := ptest.Run(p); err == nil || !strings.Contains(err.Error(), "off.csv:2: time 4.50 is 1.5 steps") {
		t.Fatalf("time off the grid: %v", err)
	}
}

// --window: one report per calendar window and the composed total, equal
// to puff release --window's on the same data.
func TestPipelineWindowsEqualCore(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, 2000, 4)
	cl, err := markov.ParseClass(strings.NewReader(class), "class")
	if err != nil {
		t.Fatal(err)
	}
	for _, fit := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("windows-%v.json", fit))
		cfg := Config{Input: filepath.Join(dir, "part-*"), Class: class, Epsilon: 0.5, Method: "exact", Output: out, Window: 10 * time.Minute,
			Spec: reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series"}}
		req := setFit(&cfg, cl, fit, mechanism.Exact)
		got := runPipeline(t, cfg)
		wr, err := release.RunWindows(strings.NewReader(whole), "whole.csv", req, cfg.Window)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(wr)
		if g, w := stripWindows(t, got), stripWindows(t, want); g != w {
			t.Fatalf("pipeline and core windows differ:\n%.2000s\n%.2000s", g, w)
		}
		if len(wr.Windows) < 3 {
			t.Fatalf("%d windows: the test proves little", len(wr.Windows))
		}
	}
}

func stripWindows(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	for _, w := range m["windows"].([]any) {
		delete(w.(map[string]any), "histogram")
		delete(w.(map[string]any), "mean")
		delete(w.(map[string]any), "mean_estimate")
	}
	out, _ := json.Marshal(m)
	return string(out)
}
