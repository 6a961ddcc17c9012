package release

import (
	"context"
	"math"
	"strings"
	"testing"
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
