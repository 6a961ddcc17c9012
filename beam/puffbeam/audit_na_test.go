package puffbeam

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Missing values are readings of unknown value (docs/math.md §4.8): on a
// small file heavy in them — a series whose every value is missing, one
// whose first and last are, missing values spread over CSV files and
// Parquet nulls — the pipeline's report equals puff release's but for the
// noise (σ, scales, sizes, lengths; windows too), for counts, relative
// frequencies and the mean, with a given class and fitted; and the sizes
// are those of the rows, whichever values are missing.
func TestAuditNAPipelineEqualsCore(t *testing.T) {
	dir := t.TempDir()
	header := "series,time,kw\n"
	rows := []string{
		// all missing
		"n,0,NA\n", "n,60,\n", "n,120,?\n", "n,180,NaN\n",
		// first and last missing, a gap at 240
		"e,0,NA\n", "e,60,1.2\n", "e,120,0.4\n", "e,180,2.9\n", "e,300,NA\n", "e,360,NA\n",
		// mostly known
		"k,0,0.1\n", "k,60,0.2\n", "k,120,NA\n", "k,180,1.7\n", "k,240,2.2\n", "k,300,0.9\n", "k,360,1.1\n", "k,420,NA\n",
		// one row, missing
		"o,60,NA\n",
	}
	filled := strings.NewReplacer(",NA\n", ",1.5\n", ",\n", ",1.5\n", ",?\n", ",1.5\n", ",NaN\n", ",1.5\n")
	whole := header + strings.Join(rows, "")
	// three files, rows interleaved; the third as Parquet (nulls for NA)
	parts := make([]string, 3)
	for i, r := range rows {
		parts[(i*7)%3] += r
	}
	for i, p := range parts {
		name := filepath.Join(dir, fmt.Sprintf("part-%d.csv", i))
		if i == 2 {
			f, _ := os.Create(strings.TrimSuffix(name, ".csv") + ".parquet")
			if err := reading.WriteParquet(f, strings.NewReader(header+p), name, map[string]string{"time": "int64", "kw": "double"}, 4); err != nil {
				t.Fatal(err)
			}
			f.Close()
			continue
		}
		os.WriteFile(name, []byte(header+p), 0o644)
	}
	cl, err := markov.ParseClass(strings.NewReader(class), "class")
	if err != nil {
		t.Fatal(err)
	}
	spec := reading.Spec{ValueCol: "kw", Levels: "0:3:3", TimeCol: "time", SeriesCol: "series"}
	for _, c := range []struct {
		query  string
		fit    bool
		window time.Duration
	}{{"counts", false, 0}, {"relative", false, 0}, {"mean", true, 0}, {"mean", false, 2 * time.Minute}, {"relative", true, 2 * time.Minute}} {
		out := filepath.Join(dir, fmt.Sprintf("report-%s-%v-%v.json", c.query, c.fit, c.window))
		cfg := Config{Input: filepath.Join(dir, "part-*"), Class: class, Epsilon: 0.5, Method: "exact", Query: c.query, Output: out, Spec: spec, Window: c.window}
		req := setFit(&cfg, cl, c.fit, mechanism.Exact)
		req.Options.Query = c.query
		got := runPipeline(t, cfg)
		var want, same []byte
		if c.window == 0 {
			rep, _, err := release.Run(strings.NewReader(whole), "whole.csv", req)
			if err != nil {
				t.Fatal(err)
			}
			want, _ = json.Marshal(rep)
			if rep.Observations != len(rows) || rep.Sequences != 4 || rep.Missing != 1 || rep.MinLength != 1 || rep.MaxLength != 8 {
				t.Fatalf("%+v: %d readings in %d series, %d missing, lengths %d–%d; want %d rows in 4 series, 1 missing step, lengths 1–8",
					c, rep.Observations, rep.Sequences, rep.Missing, rep.MinLength, rep.MaxLength, len(rows))
			}
			if !c.fit {
				rf, _, err := release.Run(strings.NewReader(filled.Replace(whole)), "filled.csv", req)
				if err != nil {
					t.Fatal(err)
				}
				same, _ = json.Marshal(rf)
			}
		} else {
			wr, err := release.RunWindows(strings.NewReader(whole), "whole.csv", req, c.window)
			if err != nil {
				t.Fatal(err)
			}
			want, _ = json.Marshal(wr)
			if !c.fit {
				wf, err := release.RunWindows(strings.NewReader(filled.Replace(whole)), "filled.csv", req, c.window)
				if err != nil {
					t.Fatal(err)
				}
				same, _ = json.Marshal(wf)
			}
		}
		st := strip
		if c.window > 0 {
			st = stripWindows
		}
		if g, w := st(t, got), st(t, want); g != w {
			t.Fatalf("%+v: pipeline and core differ:\n%s\n%s", c, g, w)
		}
		if same != nil {
			if f, w := st(t, same), st(t, want); f != w {
				t.Fatalf("%+v: the report depends on which values are missing:\n%s\n%s", c, w, f)
			}
		}
		if g := st(t, got); strings.Contains(g, "clipped") || strings.Contains(g, "missing_values") {
			t.Fatalf("the pipeline prints a count of clipped or missing values: %s", g)
		}
	}
}
