package release

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pufferfish-privacy/pufferfish/markov"
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
	req := Request{CSV: DefaultCSV, Class: timesClass(t), Options: Options{Epsilon: 1, Method: "exact"}}
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
	opts := DefaultCSV
	opts.Step = 86400
	d, err := ReadData(strings.NewReader(csv), "t.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	if d.Missing() != want {
		t.Errorf("ReadData: %d missing readings, want %d", d.Missing(), want)
	}
	sum, _, err := ReadSummary(strings.NewReader(csv), "t.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Missing != want {
		t.Errorf("ReadSummary (streamed): %d missing readings, want %d", sum.Missing, want)
	}
	// rows assembled as a pipeline does (puffbeam)
	var rows []Row
	opts.States = []string{"off", "on"}
	if _, err := ReadRows(strings.NewReader(csv), "t.csv", opts, func(r Row) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if step := SeriesStep(rows); step != 86400 {
		t.Errorf("SeriesStep %v, want 86400", step)
	}
	seq, secs, ob, err := AssembleSeries(rows, 86400)
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

// A time no RFC 3339 timestamp writes in UTC — a number of seconds past
// year 9999, or an offset that moves year 0000 into year −1 — is refused
// with the range, in CSV and Parquet alike.
func TestTimesOutOfRangeRefused(t *testing.T) {
	for _, c := range []struct {
		csv  string
		unit float64
	}{
		{"series,time,state\na,1,on\na,253402300800,off\n", 0},
		{"series,time,state\na,1,on\na,-62167219201,off\n", 0},
		{"series,time,state\na,1,on\na,1e300,off\n", 0},
		{"series,time,state\na,1,on\na,1700000000000,off\n", 1000}, // minutes? milliseconds × 1000
		{"series,time,state\na,0000-01-01T00:30:00+01:00,on\n", 0},
	} {
		opts := DefaultCSV
		opts.TimeUnit = c.unit
		_, err := ReadData(strings.NewReader(c.csv), "t.csv", opts)
		if err == nil || !strings.Contains(err.Error(), "t.csv:") || !strings.Contains(err.Error(), "from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z") {
			t.Errorf("%q: %v, want an error naming the line and the range", c.csv, err)
		}
	}
	// WriteParquet stores nanoseconds: a time outside them is refused,
	// not wrapped
	var b bytes.Buffer
	err := WriteParquet(&b, strings.NewReader("series,time,state\na,9999-12-31T23:00:00Z,on\n"), "in.csv", map[string]string{"time": "timestamp"}, 0)
	if err == nil || !strings.Contains(err.Error(), "in.csv:2") || !strings.Contains(err.Error(), "2262-04-11T23:47:16.854775807Z") {
		t.Errorf("WriteParquet of year 9999 in nanoseconds: %v", err)
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
		opts := DefaultCSV
		opts.KeepTimes = true
		d, err := ReadData(bytes.NewReader(pq.Bytes()), "t.parquet", opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.TimeText[0]; !slices.Equal(got, []string{c.a, c.b}) {
			t.Errorf("times %q, want %q", got, []string{c.a, c.b})
		}
		if d.Step != 3600 || d.Missing() != 0 {
			t.Errorf("%s: step %v, %d missing, want 3600 and 0", c.a, d.Step, d.Missing())
		}
		req := Request{CSV: DefaultCSV, Class: timesClass(t), Options: Options{Epsilon: 1, Method: "exact"}}
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
	w.Write([]rec{{"a", (MaxTime + 3600) * 1000, "on"}})
	w.Close()
	_, err := ReadData(bytes.NewReader(pq.Bytes()), "t.parquet", DefaultCSV)
	if err == nil || !strings.Contains(err.Error(), "t.parquet:1") || !strings.Contains(err.Error(), "to 9999-12-31T23:59:59Z") {
		t.Errorf("a millisecond timestamp past 9999: %v", err)
	}
}

// A row with a field the header does not name (a trailing delimiter, a
// shifted row) is refused with its file, line and field count, by every
// reader of CSV rows: whole, streamed, row by row (puffbeam, stream
// appends) (issue 34: it was read without a word).
func TestExtraFieldRefused(t *testing.T) {
	for _, csv := range []string{
		"series,time,state\na,1,on\na,2,off,\n",
		"series,time,state\na,1,on\na,2,off,on\n",
		"time,state\n1,on\n2,off,x\n",
	} {
		opts := DefaultCSV
		opts.States = []string{"off", "on"}
		check := func(how string, err error) {
			if err == nil || !strings.Contains(err.Error(), "x.csv:3: ") || !strings.Contains(err.Error(), "fields, header has") {
				t.Errorf("%s %q: %v, want an error naming x.csv:3 and the field count", how, csv, err)
			}
		}
		_, err := ReadData(strings.NewReader(csv), "x.csv", opts)
		check("ReadData", err)
		_, _, err = ReadSummary(strings.NewReader(csv), "x.csv", opts)
		check("ReadSummary", err)
		_, err = ReadRows(strings.NewReader(csv), "x.csv", opts, func(Row) error { return nil })
		check("ReadRows", err)
	}
	// fewer fields than the header, with every column read, stay as they were
	if _, err := ReadData(strings.NewReader("series,time,state,note\na,1,on\na,2,off,x\n"), "x.csv", DefaultCSV); err != nil {
		t.Errorf("a row without the unread last field: %v", err)
	}
}

// A series name that is not UTF-8 is refused up front, naming the file
// and line (CSV) or row (Parquet): JSON would write it with U+FFFD, and a
// compose log then could not find the series it recorded (issue 34).
func TestSeriesNameNotUTF8Refused(t *testing.T) {
	csv := "series,time,state\np\xe91,1,on\np\xe91,2,off\n"
	opts := DefaultCSV
	opts.States = []string{"off", "on"}
	_, err := ReadData(strings.NewReader(csv), "l.csv", opts)
	if err == nil || !strings.Contains(err.Error(), `l.csv:2: series name "p\xe91" is not UTF-8`) {
		t.Errorf("ReadData: %v", err)
	}
	_, _, err = ReadSummary(strings.NewReader(csv), "l.csv", opts)
	if err == nil || !strings.Contains(err.Error(), "l.csv:2: series name") {
		t.Errorf("ReadSummary: %v", err)
	}
	var pq bytes.Buffer
	if err := WriteParquet(&pq, strings.NewReader(csv), "l.csv", map[string]string{"time": "int64"}, 0); err != nil {
		t.Fatal(err)
	}
	_, err = ReadData(bytes.NewReader(pq.Bytes()), "l.parquet", opts)
	if err == nil || !strings.Contains(err.Error(), "l.parquet:1: series name") {
		t.Errorf("Parquet: %v", err)
	}
}

// A gap of more than MaxGap steps between two readings is refused before
// any work, naming the line, the steps and the limit (issue 34: year 1 to
// 2024 in hours — 17,733,240 steps — took 42 s and 5 GB), by every reader;
// a gap of MaxGap steps is read.
func TestGapOverMaxGapRefused(t *testing.T) {
	csv := "series,time,state\na,0001-01-01T00:00:00Z,on\na,2024-01-01T00:00:00Z,off\na,2024-01-01T01:00:00Z,off\n"
	opts := DefaultCSV
	opts.Step = 3600
	opts.States = []string{"off", "on"}
	check := func(how string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "t.csv:3: time 2024-01-01T00:00:00Z is 17733240 steps of 3600 after the previous reading of series \"a\" (line 2), more than 1048576") {
			t.Errorf("%s: %v", how, err)
		}
	}
	_, err := ReadData(strings.NewReader(csv), "t.csv", opts)
	check("ReadData", err)
	_, _, err = ReadSummary(strings.NewReader(csv), "t.csv", opts)
	check("ReadSummary", err)
	var rows []Row
	if _, err := ReadRows(strings.NewReader(csv), "t.csv", opts, func(r Row) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = AssembleSeries(rows, 3600)
	check("AssembleSeries", err)
	ok := "series,time,state\na,0,on\na," + strconv.Itoa(MaxGap*3600) + ",off\n"
	if _, err := ReadData(strings.NewReader(ok), "t.csv", opts); err != nil {
		t.Errorf("a gap of MaxGap steps: %v", err)
	}
}
