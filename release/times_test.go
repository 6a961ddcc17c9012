package release

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

func timesClass(t *testing.T) *markov.Class {
	t.Helper()
	c, err := markov.ParseClass(strings.NewReader(`{"states": ["off", "on"], "chains": [{"transition": [[0.8, 0.2], [0.1, 0.9]], "initial": "stationary"}]}`), "c")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// windowStarts is the start of every 24h window of a windowed release of csv.
func windowStarts(t *testing.T, csv string) []string {
	t.Helper()
	req := Request{CSV: reading.DefaultCSV, Class: timesClass(t), Options: Options{Epsilon: 1, Method: "exact"}}
	wr, err := RunWindows(strings.NewReader(csv), "t.csv", req, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range wr.Windows {
		out = append(out, w.Start+" "+w.End)
	}
	return out
}

// Times outside 1678–2262 (int64 nanoseconds) are read as written, not
// wrapped (issue 34): the window of 9999-12-31 is that day, not one of
// 1816; two readings an hour apart in 1600 share their day, not two days
// of 2184; readings a second apart in 2262 past the nanosecond range
// increase.
func TestTimesEveryRFC3339Year(t *testing.T) {
	for _, c := range []struct{ csv, want string }{
		{"series,time,state\na,9999-12-31T22:00:00Z,on\na,9999-12-31T23:00:00Z,off\n", "9999-12-31T00:00:00Z 10000-01-01T00:00:00Z"},
		{"series,time,state\na,1600-01-01T00:00:00Z,on\na,1600-01-01T01:00:00Z,off\n", "1600-01-01T00:00:00Z 1600-01-02T00:00:00Z"},
		{"series,time,state\na,0000-01-01T00:00:00Z,on\na,0000-01-01T00:00:01Z,off\n", "0000-01-01T00:00:00Z 0000-01-02T00:00:00Z"},
		{"series,time,state\na,2262-04-11T23:47:16Z,on\na,2262-04-11T23:47:17Z,off\n", "2262-04-11T00:00:00Z 2262-04-12T00:00:00Z"},
	} {
		if got := windowStarts(t, c.csv); !slices.Equal(got, []string{c.want}) {
			t.Errorf("%q: windows %q, want %q", c.csv, got, c.want)
		}
	}
	// a gap across the end of int64 nanoseconds (1677-09-21): 1677-01-01
	// to 1679-01-01 is 730 days (365 each, neither a leap year), so 729
	// daily readings are missing; read whole and streamed
	csv := "series,time,state\na,1677-01-01T00:00:00Z,on\na,1679-01-01T00:00:00Z,off\na,1679-01-02T00:00:00Z,off\n"
	const want = 729
	opts := reading.DefaultCSV
	opts.Step = 86400
	d, err := reading.ReadData(strings.NewReader(csv), "t.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	if d.Missing() != want {
		t.Errorf("ReadData: %d missing readings, want %d", d.Missing(), want)
	}
	sum, _, err := reading.ReadSummary(strings.NewReader(csv), "t.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Missing != want {
		t.Errorf("ReadSummary (streamed): %d missing readings, want %d", sum.Missing, want)
	}
	// rows assembled as a pipeline does (puffbeam)
	var rows []reading.Row
	opts.States = []string{"off", "on"}
	if _, err := reading.ReadRows(strings.NewReader(csv), "t.csv", opts, func(r reading.Row) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if step := reading.SeriesStep(rows); step != 86400 {
		t.Errorf("SeriesStep %v, want 86400", step)
	}
	seq, secs, ob, err := reading.AssembleSeries(rows, 86400)
	if err != nil {
		t.Fatal(err)
	}
	if ob.Gaps() != want {
		t.Errorf("AssembleSeries: %d missing readings, want %d", ob.Gaps(), want)
	}
	parts, err := SplitWindows(seq, secs, ob, 24*time.Hour, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, p := range parts {
		s, _ := WindowBounds(p.Window, 24*time.Hour, time.UTC)
		starts = append(starts, s)
	}
	if w := []string{"1677-01-01T00:00:00Z", "1679-01-01T00:00:00Z", "1679-01-02T00:00:00Z"}; !slices.Equal(starts, w) {
		t.Errorf("SplitWindows: windows %q, want %q", starts, w)
	}
}

// A Parquet timestamp in milliseconds reaches years 0000–9999 (its int64
// nanoseconds would wrap): read as written.
func TestParquetMillisecondTimesEveryYear(t *testing.T) {
	type rec struct {
		Series string `parquet:"series"`
		Time   int64  `parquet:"time,timestamp(millisecond)"`
		State  string `parquet:"state"`
	}
	ms := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.Unix() * 1000
	}
	for _, c := range []struct{ a, b string }{
		{"9999-12-31T22:00:00Z", "9999-12-31T23:00:00Z"},
		{"0001-01-01T00:00:00Z", "0001-01-01T01:00:00Z"},
		{"1600-01-01T00:00:00Z", "1600-01-01T01:00:00Z"},
	} {
		var pq bytes.Buffer
		w := parquet.NewGenericWriter[rec](&pq)
		if _, err := w.Write([]rec{{"a", ms(c.a), "on"}, {"a", ms(c.b), "off"}}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		opts := reading.DefaultCSV
		opts.KeepTimes = true
		d, err := reading.ReadData(bytes.NewReader(pq.Bytes()), "t.parquet", opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.TimeText[0]; !slices.Equal(got, []string{c.a, c.b}) {
			t.Errorf("times %q, want %q", got, []string{c.a, c.b})
		}
		if d.Step != 3600 || d.Missing() != 0 {
			t.Errorf("%s: step %v, %d missing, want 3600 and 0", c.a, d.Step, d.Missing())
		}
		req := Request{CSV: reading.DefaultCSV, Class: timesClass(t), Options: Options{Epsilon: 1, Method: "exact"}}
		wr, err := RunWindows(bytes.NewReader(pq.Bytes()), "t.parquet", req, 24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(wr.Windows) != 1 || wr.Windows[0].Start != c.a[:10]+"T00:00:00Z" {
			t.Errorf("%s: windows %+v", c.a, wr.Windows)
		}
	}
	// past year 9999 in milliseconds: refused with the range
	var pq bytes.Buffer
	w := parquet.NewGenericWriter[rec](&pq)
	w.Write([]rec{{"a", (reading.MaxTime + 3600) * 1000, "on"}})
	w.Close()
	_, err := reading.ReadData(bytes.NewReader(pq.Bytes()), "t.parquet", reading.DefaultCSV)
	if err == nil || !strings.Contains(err.Error(), "t.parquet:1") || !strings.Contains(err.Error(), "to 9999-12-31T23:59:59Z") {
		t.Errorf("a millisecond timestamp past 9999: %v", err)
	}
}
