package reading

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
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
	raw, _ := os.ReadFile(exampleFile)
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

func TestReadDataRefusesHugeLines(t *testing.T) {
	in := "state\n" + strings.Repeat("x,", maxLine) + "\n"
	_, err := ReadData(strings.NewReader(in), "x.csv", DefaultCSV)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("huge line: %v", err)
	}
}

func TestReadDataErrorsNameFileAndLine(t *testing.T) {
	cases := map[string]string{
		"":                                   "x.csv: empty data file",
		"series,time,state\n":                "no data rows",
		"series,time,state\na,1,s\na,2\n":    "x.csv:3: missing field",
		"series,time,state\na,1,s\na,1,s\n":  "x.csv:3: time 1 of series \"a\" does not increase",
		"series,time,state\na,1,s\na,zz,s\n": "x.csv:3: field \"time\"",
		"series,time,state\na,1,s\na,2, \n":  "x.csv:3: empty state",
		"a,b\n1,2\n":                         "x.csv:1: header",
		"series,time,state\na,1,\"s\n":       "x.csv: line",
		"series,time,state,state\na,0,0,1\n": `x.csv:1: the header names column "state" twice (columns 3 and 4)`,
		"series, time,time\na,0,0\n":         `x.csv:1: the header names column "time" twice`,
	}
	for in, want := range cases {
		t.Run(fmt.Sprint(in), func(t *testing.T) {
			_, err := ReadData(strings.NewReader(in), "x.csv", DefaultCSV)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("input %q: error %v, want it to contain %q", in, err, want)
			}
		})
	}
}

func TestReadDataGapsSeriesAndPlain(t *testing.T) {
	in := "series,time,state\na,0,x\nb,0,y\na,1,y\na,5,x\nb,1,y\n"
	d, err := ReadData(strings.NewReader(in), "g.csv", DefaultCSV)
	if err != nil {
		t.Fatal(err)
	}
	// one chain per series; a's reading at 5 follows three missing ones
	if len(d.Seqs) != 2 || d.Observations() != 5 || d.Missing() != 3 || d.Step != 1 {
		t.Fatalf("got %d series %v, %d missing, step %v", len(d.Seqs), d.Seqs, d.Missing(), d.Step)
	}
	if ob := d.Observation(0); ob.Len != 3 || ob.End() != 6 {
		t.Fatalf("series a: %+v", ob)
	}
	if runs := d.Runs(); len(runs) != 3 {
		t.Fatalf("runs %v, want [x y] [x] [y y]", runs)
	}
	p, err := ReadData(strings.NewReader("x\ny\ny\n"), "p.txt", DefaultCSV)
	if err != nil || len(p.Seqs) != 1 || len(p.Seqs[0]) != 3 {
		t.Fatalf("plain file: %v %v", p, err)
	}
	if err := p.Align([]string{"y"}, "p.txt"); err == nil || !strings.Contains(err.Error(), `state "x" is not in the class`) {
		t.Fatalf("align: %v", err)
	}
}

// Bins are the declared states in their order, whatever the data holds:
// two files differing only in their first reading give the same bins.
func TestDeclaredStatesFixTheBins(t *testing.T) {
	opts := DefaultCSV
	opts.States = []string{"run", "sit", "walk", "sleep"}
	for _, in := range []string{"series,time,state\na,1,sit\na,2,walk\na,3,run\n", "series,time,state\na,1,walk\na,2,sit\na,3,run\n"} {
		d, err := ReadData(strings.NewReader(in), "x.csv", opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.States, opts.States) {
			t.Fatalf("states %v, want the declared %v", d.States, opts.States)
		}
	}
	_, err := ReadData(strings.NewReader("series,time,state\na,1,sit\na,2,jog\n"), "x.csv", opts)
	if err == nil || !strings.Contains(err.Error(), `x.csv:3: state "jog" is not declared`) {
		t.Fatalf("undeclared state: %v", err)
	}
}

func TestReadDataColumnsDelimiterBOM(t *testing.T) {
	cases := []struct {
		name, in string
		opts     func(*CSVOptions)
		want     string // error substring, "" for success
	}{
		{"misspelled series column", "subject,time,state\na,1,x\n", func(o *CSVOptions) { o.SeriesCol, o.RequireSeries = "subjet", true }, `no series column "subjet"`},
		{"misspelled time column", "series,time,state\na,1,x\n", func(o *CSVOptions) { o.TimeCol, o.RequireTime = "tme", true }, `no time column "tme"`},
		{"BOM before the header", "\ufeffseries,time,state\na,1,x\nb,1,x\n", nil, ""},
		{"semicolons without --delimiter", "series;time;state\na;1;x\n", nil, `looks delimited by ';'`},
		{"semicolons with --delimiter", "series;time;state\na;1;x\na;2;y\n", func(o *CSVOptions) { o.Delimiter = ';' }, ""},
		{"plain file with several fields", "x\ny,z\n", nil, "2 fields in a one-state-per-line file"},
		{"time off the grid", "series,time,state\na,0,x\na,2,x\na,3,x\na,4.5,x\n", nil, "x.csv:5: time 4.5 is 1.5 steps"},
		{"step larger than a difference", "series,time,state\na,0,x\na,30,x\n", func(o *CSVOptions) { o.Step = 60 }, "0.5 steps of 60"},
		{"bad delimiter", "a\n", func(o *CSVOptions) { o.Delimiter = '"' }, "cannot separate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := DefaultCSV
			if c.opts != nil {
				c.opts(&opts)
			}
			d, err := ReadData(strings.NewReader(c.in), "x.csv", opts)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.name == "BOM before the header" && len(d.Seqs) != 2 {
					t.Fatalf("BOM: %d series, want 2 (the series column must be found)", len(d.Seqs))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestWriteCSVKeepsGaps(t *testing.T) {
	d, err := ReadData(strings.NewReader("series,time,state\na,0,x\na,1,y\na,5,x\n"), "g.csv", DefaultCSV)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := d.WriteCSV(&b, "series", "time", "state"); err != nil {
		t.Fatal(err)
	}
	if b.String() != "series,time,state\na,0,x\na,1,y\na,5,x\n" {
		t.Fatalf("%q", b.String())
	}
}

// A declared state list has distinct non-empty names; a delimiter is one
// character ("\t" for tab).
func TestParseStatesAndDelimiter(t *testing.T) {
	for _, s := range []string{"a,,b", "a,a"} {
		if _, err := parseStates(s); err == nil {
			t.Errorf("states %q accepted", s)
		}
	}
	if d, err := parseDelimiter(`\t`); err != nil || d != '\t' {
		t.Fatalf("tab: %q %v", d, err)
	}
	if _, err := parseDelimiter(";;"); err == nil {
		t.Fatal("two-character delimiter accepted")
	}
}
