package reading

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

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
