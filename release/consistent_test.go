package release

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/pufferfish-privacy/pufferfish/estimate"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

const (
	testWindowsReport = `{"windows": [
 {"start": "d1", "end": "d2", "query": "counts", "observations": 4, "per_bin_scale": 2, "histogram": [{"state": "a", "value": 5.5, "estimate": 4}, {"state": "b", "value": -1.5, "estimate": 0}]},
 {"start": "d2", "end": "d3", "query": "counts", "observations": 2, "per_bin_scale": 2, "histogram": [{"state": "a", "value": 0.5, "estimate": 0.5}, {"state": "b", "value": 1.5, "estimate": 1.5}]}]}`
	testProfileReport = `{"profile": [
 {"cell": "00", "query": "counts", "observations": 3, "per_bin_scale": 1, "histogram": [{"state": "a", "value": 1, "estimate": 1}, {"state": "b", "value": 2, "estimate": 2}]},
 {"cell": "01", "query": "counts", "observations": 3, "per_bin_scale": 1, "histogram": [{"state": "a", "value": 3.2, "estimate": 3}, {"state": "b", "value": -0.2, "estimate": 0}]}]}`
)

// The joint estimate of two reports: every histogram a histogram of its
// readings, both sides' totals equal; and each malformed or mismatched
// input refused with the file and the place named.
func TestConsistentReports(t *testing.T) {
	ctx := context.Background()
	c, err := ConsistentReports(ctx, strings.NewReader(testWindowsReport), "w.json", strings.NewReader(testProfileReport), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Windows) != 2 || len(c.Profile) != 2 || c.Readings != 6 || c.DisagreementBefore == 0 || c.DisagreementAfter > 1e-6 {
		t.Fatalf("%+v", c)
	}
	for i, e := range append(append([]ConsistentEntry{}, c.Windows...), c.Profile...) {
		s := 0.0
		for _, v := range e.Estimate {
			if v < 0 {
				t.Fatalf("entry %d: %v", i, e.Estimate)
			}
			s += v
		}
		want := []float64{4, 2, 3, 3}[i]
		if math.Abs(s-want) > 1e-9 {
			t.Fatalf("entry %d sums to %v, want %v", i, s, want)
		}
	}
	for _, tc := range []struct{ w, p, want string }{
		{`{"windows": []}`, testProfileReport, `w.json: no "windows"`},
		{testWindowsReport, `{"windows": []}`, `p.json: no "profile"`},
		{`{"windows": [`, testProfileReport, "w.json: the JSON report ends early"},
		{`{"windows": 3}`, testProfileReport, `w.json: field "windows"`},
		{`not json`, testProfileReport, "w.json: not a JSON report"},
		{strings.Replace(testWindowsReport, `"query": "counts"`, `"query": "mean"`, 1), testProfileReport, `w.json: window 1: query "mean"`},
		{strings.Replace(testWindowsReport, `"per_bin_scale": 2,`, ``, 1), testProfileReport, `w.json: window 1: "per_bin_scale"`},
		{strings.Replace(testWindowsReport, `"observations": 4`, `"observations": 4.5`, 1), testProfileReport, `w.json: window 1: "observations"`},
		{strings.Replace(testWindowsReport, `"observations": 4`, `"observations": 5`, 1), testProfileReport, "do not partition the same readings"},
		{testWindowsReport, strings.Replace(testProfileReport, `"state": "b"`, `"state": "c"`, 1), `p.json: profile cell 1: its bins (a,c)`},
		{strings.Replace(testWindowsReport, `"value": 5.5`, `"value": null`, 1), testProfileReport, `w.json: window 1: bin 1: "value"`},
	} {
		_, err := ConsistentReports(ctx, strings.NewReader(tc.w), "w.json", strings.NewReader(tc.p), "p.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
}

// ConsistentReports never panics on any pair of inputs, and what it
// accepts is consistent.
func FuzzConsistentReports(f *testing.F) {
	f.Add(testWindowsReport, testProfileReport)
	f.Add(`{"windows":[{"query":"counts","observations":0,"per_bin_scale":1,"histogram":[{"state":"x","value":0}]}]}`, `{"profile":[{"query":"counts","observations":0,"per_bin_scale":1e300,"histogram":[{"state":"x","value":1e308}]}]}`)
	f.Fuzz(func(t *testing.T, w, p string) {
		c, err := ConsistentReports(context.Background(), strings.NewReader(w), "w", strings.NewReader(p), "p")
		if err != nil {
			return
		}
		for _, e := range append(append([]ConsistentEntry{}, c.Windows...), c.Profile...) {
			for _, v := range e.Estimate {
				if !(v >= 0) || math.IsInf(v, 0) {
					t.Fatalf("estimate %v", e.Estimate)
				}
			}
		}
	})
}

// puff consistent holds a histogram of readings that may miss their value
// to Σ ≤ N by the release's own rule: categorical readings from a nullable
// Parquet column, released at ε = 50, have a joint estimate as close to
// the true counts as the release's (issue 39: it forced Σ = N there, and
// its total was farther from the truth than the raw counts by the nulls).
func TestConsistentNullableParquet(t *testing.T) {
	type row struct {
		Series string  `parquet:"series"`
		Time   int64   `parquet:"time"`
		State  *string `parquet:"state,optional"`
	}
	class, err := markov.ReadClassFile("../examples/stream/class.json")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(39, 2))
	var rows []row
	truth := make([]float64, len(class.States))
	for s := range 4 {
		x := 0
		for j := range 60 {
			if rng.Float64() < 0.2 {
				x = 1 - x
			}
			r := row{Series: fmt.Sprint("m", s), Time: int64(j) * 3600}
			if (s*60+j)%9 != 4 { // 27 nulls of 240
				st := class.States[x]
				r.State = &st
				truth[x]++
			}
			rows = append(rows, r)
		}
	}
	var pq bytes.Buffer
	w := parquet.NewGenericWriter[row](&pq)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := reading.ReadData(bytes.NewReader(pq.Bytes()), "n.parquet", reading.CSVOptions{SeriesCol: "series", TimeCol: "time", StateCol: "state", States: class.States})
	if err != nil {
		t.Fatal(err)
	}
	if !d.NullValues || d.MissingValues == 0 {
		t.Fatal("want a nullable state column with nulls")
	}
	report := func(profile string, width time.Duration, seed byte) string {
		p, err := PrepareData(d, class, false, Options{Epsilon: 50, Method: mechanism.Exact, Profile: profile, Source: rand.NewChaCha8([32]byte{seed})}, width, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		o, err := p.Draw()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteJSON(&b, o); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), `"estimate_at_most": true`) {
			t.Fatalf("the report does not say its estimate sums to at most its readings")
		}
		return b.String()
	}
	wj, pj := report("", 12*time.Hour, 1), report("hour-of-day", 0, 2)
	c, err := ConsistentReports(context.Background(), strings.NewReader(wj), "w.json", strings.NewReader(pj), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	l1, sum := 0.0, 0.0
	for j, v := range c.Total {
		l1 += math.Abs(v - truth[j])
		sum += v
	}
	if sum > c.Readings+1e-6 || l1 > 5 {
		t.Errorf("the joint total is %.3g from the true counts (sum %.4g of %g readings); want it within 5 at ε = 50", l1, sum, c.Readings)
	}
}

// A joint estimate stopped at its round cap is reported as such, in the
// result's warnings (puff consistent prints them on stderr and in the
// JSON), with the agreement reached; a converged one has no warning.
func TestConsistentSaysWhenCapped(t *testing.T) {
	h := func(n float64) estimate.Histogram {
		return estimate.Histogram{Noisy: []float64{n, 0}, Variance: 1, N: n, Exact: true}
	}
	a := []estimate.Histogram{h(3)}
	ws, cs := []reportEntry{{Start: "d1", End: "d2"}}, []reportEntry{{Cell: "00"}}
	for _, capped := range []bool{false, true} {
		jr := &estimate.JointResult{A: [][]float64{{3, 0}}, B: [][]float64{{2.5, 0.5}}, Rounds: estimate.MaxJointRounds, Capped: capped}
		c := consistentOf(jr, []string{"x", "y"}, ws, cs, a, nil, nil)
		if c.DisagreementAfter != 0.5 {
			t.Fatalf("disagreement %g", c.DisagreementAfter)
		}
		if got := strings.Join(c.Warnings, "\n"); capped != strings.Contains(got, "stopped at its cap of 100000 rounds") || capped != strings.Contains(got, "agree only to 0.5") {
			t.Errorf("capped %v: warnings %q", capped, got)
		}
	}
}
