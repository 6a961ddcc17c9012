package stream

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

func testClass(t testing.TB, init string) *markov.Class {
	c, err := markov.ParseClass(strings.NewReader(`{"states": ["0", "1", "2"], "chains": [{"transition": [[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]], "initial": `+init+`}]}`), "class")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The stream's σ is the supremum over lengths (docs/math.md §4.9): no
// length, and no start (a fixed start is calibrated as "any"), needs more.
func TestDeclaredSigmaIsTheSupremum(t *testing.T) {
	for _, init := range []string{`"stationary"`, `"any"`, `[1, 0, 0]`} {
		class := testClass(t, init)
		for _, m := range []mechanism.Name{mechanism.Exact, mechanism.Approx} {
			s, err := Declare(reading.Spec{}, "1h", 1, m, "counts", class)
			if err != nil {
				t.Fatal(err)
			}
			for _, T := range []int{1, 2, 5, 17, 100, 1000, 3000} {
				for _, c := range []*markov.Class{class, class.AnyStart()} {
					r, err := release.ComputeScale(c, T, 1, m)
					if err != nil {
						t.Fatal(err)
					}
					if *r.Sigma > *s.Scale.Sigma {
						t.Errorf("%s %s: σ(%d) = %.10g exceeds the stream's %.10g", init, m, T, *r.Sigma, *s.Scale.Sigma)
					}
				}
			}
		}
	}
}

// No appended text makes Append panic; an error changes nothing, and a
// success never releases a window twice.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{
		"series,time,state\na,0,0\na,3600,1\nb,3600,2\na,7200,1\n",
		"series,time,state\na,7200,0\na,0,1\n",
		"series,time,state\na,0,0\na,0,1\n",
		"time,state\n0,0\n1800,1\n3600,2\n",
		"series,time,state\na,1e9,3\n",
		"",
	} {
		f.Add(s, s)
	}
	s, err := Declare(reading.Spec{States: "0,1,2"}, "1h", 1, mechanism.Exact, "counts", testClass(f, `"stationary"`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		st := s.NewState()
		seen := map[int64]bool{}
		for _, body := range []string{a, b} {
			next, rel, err := s.Append(st, strings.NewReader(body), "fuzz.csv", nil)
			if err != nil {
				continue
			}
			for _, r := range rel {
				if seen[r.Index] {
					t.Fatalf("window %d released twice", r.Index)
				}
				seen[r.Index] = true
			}
			st = next
		}
	})
}

// One append cannot release more windows than MaxWindows: it is refused
// before any noise is drawn, naming the limit.
func TestAppendWindowLimit(t *testing.T) {
	s, err := Declare(reading.Spec{States: "0,1,2"}, "1s", 1, mechanism.Exact, "counts", testClass(t, `"stationary"`))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("series,time,state\n")
	for i := range MaxWindows + 2 {
		b.WriteString("a," + strconv.Itoa(i) + ",0\n")
	}
	if _, _, err := s.Append(s.NewState(), strings.NewReader(b.String()), "many.csv", nil); err == nil || !strings.Contains(err.Error(), "more than 10000") {
		t.Fatalf("%v", err)
	}
}

// A missing value appended to a stream is a reading of unknown value
// (docs/math.md §4.8, "missing values"): the windows released are the same
// up to the noise whether a value is missing or not.
func TestStreamMissingValuesNotRevealed(t *testing.T) {
	class, err := markov.ParseClass(strings.NewReader(`{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"}]}`), "class")
	if err != nil {
		t.Fatal(err)
	}
	for _, query := range []string{"counts", "mean"} {
		s, err := Declare(reading.Spec{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: "0:4:2"}, "2h", 1, mechanism.Exact, query, class)
		if err != nil {
			t.Fatal(err)
		}
		var shapes []string
		for _, v := range []string{"3", "NA"} {
			body := "s,t,v\na,0,1\na,3600," + v + "\na,7200,3\nb,3600,1\na,10800,1\na,14400,1\n"
			_, rel, err := s.Append(s.NewState(), strings.NewReader(body), "d.csv", nil)
			if err != nil {
				t.Fatal(err)
			}
			var shape strings.Builder
			for _, r := range rel {
				w := r.Window
				fmt.Fprintf(&shape, "%s %d %d %d %.17g %.17g %d|", w.Start, w.Observations, w.Missing, w.Sequences, w.PerBinScale, w.Lipschitz, len(w.Histogram))
			}
			shapes = append(shapes, shape.String())
		}
		if shapes[0] != shapes[1] || shapes[0] == "" {
			t.Errorf("%s: an NA changes the released windows:\n value %s\n NA    %s", query, shapes[0], shapes[1])
		}
	}
}

// A stream reads every time RFC 3339 writes (years 0000–9999) as written:
// the windows of 9999-12-30 and of 1600-01-01 are those days, not days
// of 1816 and 2184 (int64 nanoseconds wrap outside 1678–2262).
func TestAppendEveryRFC3339Year(t *testing.T) {
	s, err := Declare(reading.Spec{States: "0,1,2"}, "24h", 1, mechanism.Exact, "counts", testClass(t, `"stationary"`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ body, want string }{
		{"series,time,state\na,9999-12-30T23:00:00Z,0\na,9999-12-31T00:00:00Z,1\n", "9999-12-30T00:00:00Z – 9999-12-31T00:00:00Z"},
		{"series,time,state\na,1600-01-01T00:00:00Z,0\na,1600-01-01T01:00:00Z,1\na,1600-01-02T00:00:00Z,1\n", "1600-01-01T00:00:00Z – 1600-01-02T00:00:00Z"},
	} {
		_, rel, err := s.Append(s.NewState(), strings.NewReader(c.body), "y.csv", nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rel {
			got = append(got, r.Window.Start+" – "+r.Window.End)
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%q: released %q, want [%s]", c.body, got, c.want)
		}
	}
	// a year past 9999 (as seconds) is refused with the range
	if _, _, err := s.Append(s.NewState(), strings.NewReader("series,time,state\na,253402300800,0\n"), "y.csv", nil); err == nil || !strings.Contains(err.Error(), "y.csv:2") || !strings.Contains(err.Error(), "9999-12-31T23:59:59Z") {
		t.Errorf("year 10000: %v", err)
	}
}

// A gap of more steps than reading.MaxSpan between two readings of a
// series is refused before the steps between are counted.
func TestAppendGapBounded(t *testing.T) {
	s, err := Declare(reading.Spec{States: "0,1,2", Step: 1}, "1h", 1, mechanism.Exact, "counts", testClass(t, `"stationary"`))
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := s.Append(s.NewState(), strings.NewReader("series,time,state\na,0,0\n"), "a.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Append(st, strings.NewReader("series,time,state\na,3000000000,1\n"), "b.csv", nil)
	if err == nil || !strings.Contains(err.Error(), "b.csv:2") || !strings.Contains(err.Error(), "more than 1073741824 steps") {
		t.Errorf("a gap of 3e9 steps: %v", err)
	}
}

// An appended row with a field the header does not name is refused with
// its line, and nothing is appended.
func TestAppendExtraFieldRefused(t *testing.T) {
	s, err := Declare(reading.Spec{States: "0,1,2"}, "1h", 1, mechanism.Exact, "counts", testClass(t, `"stationary"`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Append(s.NewState(), strings.NewReader("series,time,state\na,0,0\na,3600,1,\n"), "x.csv", nil); err == nil || !strings.Contains(err.Error(), "x.csv:3: 4 fields, header has 3") {
		t.Errorf("%v", err)
	}
}
