package release

import (
	"bytes"
	"compress/gzip"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// Local times that daylight saving makes ambiguous or nonexistent are
// refused with the file, line, the zone and the way out; times beside
// them (and the same times with an offset) are read.
func TestReadDataDaylightSaving(t *testing.T) {
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	opts := DefaultCSV
	opts.TimeFormats = []string{"2006-01-02 15:04", "2006-01-02 15:04 -07:00"}
	opts.Location = london
	opts.Step = 60
	cases := []struct{ in, want string }{
		// the clocks go back at 02:00 BST on 27 October 2024: 01:00–01:59 occur twice
		{"a,2024-10-27 00:30,x\na,2024-10-27 01:00,x\na,2024-10-27 01:30,y\na,2024-10-27 01:00,x\n", `dst.csv:3: field "time": "2024-10-27 01:00": this local time occurs twice in Europe/London`},
		{"a,2024-10-27 00:30,x\na,2024-10-27 01:30,x\n", "dst.csv:3"},
		// the clocks go forward at 01:00 GMT on 31 March 2024: 01:00–01:59 do not exist
		{"a,2024-03-31 00:30,x\na,2024-03-31 01:30,x\n", `dst.csv:3: field "time": "2024-03-31 01:30": this local time does not exist in Europe/London`},
		{"a,2024-03-31 01:00,x\n", "does not exist"},
		// beside the changes, and with offsets, times are read
		{"a,2024-03-31 00:59,x\na,2024-03-31 02:00,y\na,2024-10-27 00:59,x\na,2024-10-27 02:00,y\n", ""},
		{"a,2024-10-27 01:00 +01:00,x\na,2024-10-27 01:30 +01:00,y\na,2024-10-27 01:00 +00:00,x\na,2024-10-27 01:30 +00:00,y\n", ""},
		{"a,2024-07-01 01:30,x\na,2024-12-01 01:30,y\n", ""},
	}
	for _, c := range cases {
		d, err := ReadData(strings.NewReader("series,time,state\n"+c.in), "dst.csv", opts)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.in, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: read %d readings, want an error %q", c.in, d.Observations(), c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "UTC offset") {
			t.Errorf("%q: error %v, want %q and how to resolve it", c.in, err, c.want)
		}
	}
	// the offsets are honoured: 01:00 BST, 01:30 BST, 01:00 GMT, 01:30 GMT are 30 minutes apart
	d, err := ReadData(strings.NewReader("series,time,state\n"+cases[5].in), "dst.csv", opts)
	if err != nil || !slices.Equal(d.Offsets[0], []int{0, 30, 60, 90}) {
		t.Fatalf("offset times: %v %+v", err, d)
	}
	if got := d.Times[0][2] - d.Times[0][0]; got != 3600 {
		t.Fatalf("01:00 GMT is %v s after 01:00 BST, want 3600", got)
	}
}

// A gzip file cut short names the file, gzip and the last whole line.
func TestReadDataTruncatedGzip(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	raw, _ := io.ReadAll(ExampleData())
	zw.Write(raw)
	zw.Close()
	cut := b.Bytes()[:b.Len()*2/3]
	_, err := ReadData(bytes.NewReader(cut), "act.csv.gz", DefaultCSV)
	if err == nil {
		t.Fatal("a truncated gzip file was read")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "act.csv.gz: the gzip stream is cut short or corrupt after line ") || !strings.Contains(msg, "unexpected EOF") {
		t.Fatalf("error %q", msg)
	}
	_, err = ReadData(bytes.NewReader(b.Bytes()[:6]), "act.csv.gz", DefaultCSV)
	if err == nil || !strings.Contains(err.Error(), "act.csv.gz: not a readable gzip file") {
		t.Fatalf("gzip header cut: %v", err)
	}
}

// An overlong line is named once: file:line, not file: file:line.
func TestReadDataHugeLineNamedOnce(t *testing.T) {
	in := "state\n" + strings.Repeat("x,", maxLine) + "\n"
	_, err := ReadData(strings.NewReader(in), "x.csv", DefaultCSV)
	if err == nil || !strings.HasPrefix(err.Error(), "x.csv:2: line longer than") {
		t.Fatalf("huge line: %v", err)
	}
}
