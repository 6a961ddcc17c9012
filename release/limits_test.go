package release

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

func exampleLoaded(t *testing.T) (*reading.Data, *markov.Class) {
	t.Helper()
	class, err := markov.ParseClass(ExampleClass(), "class")
	if err != nil {
		t.Fatal(err)
	}
	data, cl, err := Load(ExampleData(), "example", Request{Class: class, CSV: reading.CSVOptions{SeriesCol: "series", TimeCol: "time", StateCol: "state"}})
	if err != nil {
		t.Fatal(err)
	}
	return data, cl
}

// distinctWindows counts the calendar windows holding a reading directly
// (UTC: floor(t / width)), independently of WindowOf.
func distinctWindows(d *reading.Data, width time.Duration) int {
	seen := map[float64]bool{}
	for _, ts := range d.Times {
		for _, t := range ts {
			seen[math.Floor(t/width.Seconds())] = true
		}
	}
	return len(seen)
}

// A release over the limits is refused before any work, naming the limit,
// the count and the flag that raises it; at the limit it is made (issue
// 26, item 1).
func TestLimitsRefuseBeforeWork(t *testing.T) {
	data, class := exampleLoaded(t)
	bins := len(class.States)
	width := time.Minute
	n := distinctWindows(data, width)
	if n < 3 {
		t.Fatalf("the example has %d one-minute windows; the test needs several", n)
	}
	opts := Options{Epsilon: 1, Method: mechanism.Exact}
	// at the limit: made
	opts.Limits = Limits{MaxWindows: n, MaxCells: n * bins}
	p, err := PrepareData(data, class, false, opts, width, time.UTC)
	if err != nil {
		t.Fatalf("%d windows at a limit of %d: %v", n, n, err)
	}
	out, err := p.Draw()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(out.(*WindowedReport).Windows); got != n {
		t.Fatalf("%d windows released, counted %d", got, n)
	}
	// one window over: refused, and before any work (a cancelled context
	// would stop the work: the limit answers first)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		l     Limits
		field string
	}{
		{Limits{MaxWindows: n - 1}, "max_windows"},
		{Limits{MaxCells: (n - 1) * bins}, "max_cells"},
		{Limits{MaxCells: n*bins - 1}, "max_cells"},
	} {
		opts.Limits, opts.Context = c.l, ctx
		_, err := PrepareData(data, class, false, opts, width, time.UTC)
		var le *LimitError
		if !errors.As(err, &le) {
			t.Fatalf("%+v: %v, want a LimitError", c.l, err)
		}
		if le.Field() != c.field || le.Bins != bins || le.Windows > n || le.Windows < min(n, le.Max/bins+1, le.Max+1) {
			t.Errorf("%+v: %+v", c.l, le)
		}
		flag := "--max-" + strings.TrimPrefix(c.field, "max_")
		if msg := err.Error(); !strings.Contains(msg, flag) || !strings.Contains(msg, "window 1m0s") || !strings.Contains(msg, "MB of JSON") {
			t.Errorf("%+v: error %q does not name the window, the size and %s", c.l, msg, flag)
		}
	}
	// the defaults hold the example, and a one-bin-too-many class
	if err := checkLimits(data, bins, width, time.UTC, Limits{}); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := checkLimits(data, DefaultMaxCells+1, 0, nil, Limits{}); err == nil {
		t.Errorf("%d bins accepted", DefaultMaxCells+1)
	}
}

// One window per second over many readings (the reproduction, at
// a size a unit test can afford) is refused after counting just past the
// limit.
func TestLimitsOneSecondWindows(t *testing.T) {
	var b strings.Builder
	b.WriteString("series,time,state\n")
	for i := range 30000 {
		b.WriteString("a,")
		b.WriteString(jsonInt(i))
		b.WriteString([]string{",x\n", ",y\n"}[i%3/2])
	}
	class, err := markov.ParseClass(strings.NewReader(`{"states": ["x", "y"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"}]}`), "c")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(strings.NewReader(b.String()), "d.csv", Request{Class: class, CSV: reading.CSVOptions{SeriesCol: "series", TimeCol: "time", StateCol: "state"}, Options: Options{Epsilon: 1, Method: mechanism.Exact}}, time.Second)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "windows" || le.Windows != DefaultMaxWindows+1 || !le.Partial {
		t.Fatalf("30000 one-second windows: %v (%+v)", err, le)
	}
	if !strings.Contains(err.Error(), "at least 10001 windows") {
		t.Errorf("error %q", err)
	}
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

// A cancelled context stops a release between patterns and between
// windows, with the context's error.
func TestContextStopsRelease(t *testing.T) {
	data, class := exampleLoaded(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, width := range []time.Duration{0, time.Minute} {
		_, err := PrepareData(data, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Context: ctx}, width, time.UTC)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("window %v: %v, want context.Canceled", width, err)
		}
	}
}

// The windowed report streamed window by window is byte for byte the
// indented JSON of the whole report with the ledger field added.
func TestWindowedWriteJSON(t *testing.T) {
	data, class := exampleLoaded(t)
	wr, err := releaseWindows(data, class, false, Options{Epsilon: 1, Method: mechanism.Exact}, time.Minute, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	for _, ledger := range []any{nil, map[string]any{"spent": 1, "rule": "single <&>"}} {
		raw, err := json.Marshal(wr)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(strictjson.AddField(raw, "ledger", ledger)); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := wr.WriteJSON(&got, Field{"ledger", ledger}); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("ledger %v: streamed JSON differs:\n%.2000s\nwant\n%.2000s", ledger, got.String(), want.String())
		}
	}
}
