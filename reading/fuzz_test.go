package reading

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadData: no input makes ReadData panic or hang; accepted data has
// states inside the declared list and strictly increasing offsets.
func FuzzReadData(f *testing.F) {
	ex, _ := os.ReadFile(exampleFile)
	f.Add(ex[:2000], false)
	f.Add([]byte("series,time,state\na,0,x\na,3,y\nb,1,x\n"), true)
	f.Add([]byte("\ufeffseries;time;state\na;1;x\n"), false)
	f.Add([]byte("x\ny\nx\n"), true)
	f.Add([]byte("series,time,state\na,1e300,x\na,-1e300,y\n"), false)
	// issue 34: a trailing field the header does not name; times of
	// years 0000 and 9999, and past them
	f.Add([]byte("series,time,state\na,1,x,\na,2,y\n"), true)
	f.Add([]byte("series,time,state\na,0000-01-01T00:00:00Z,x\na,9999-12-31T23:59:59.5Z,y\na,253402300800,x\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, declared bool) {
		opts := DefaultCSV
		if declared {
			opts.States = []string{"x", "y"}
		}
		d, err := ReadData(bytes.NewReader(data), "fuzz.csv", opts)
		if err != nil {
			return
		}
		if declared && len(d.States) != 2 {
			t.Fatalf("states %v, declared x, y", d.States)
		}
		for s, seq := range d.Seqs {
			for _, v := range seq {
				if v < 0 || v >= len(d.States) {
					t.Fatalf("state index %d of %d", v, len(d.States))
				}
			}
			if d.Offsets != nil && d.Offsets[s] != nil {
				off := d.Offsets[s]
				if len(off) != len(seq) || off[0] != 0 {
					t.Fatalf("offsets %v for %d readings", off, len(seq))
				}
				for j := 1; j < len(off); j++ {
					if off[j] <= off[j-1] {
						t.Fatalf("offsets %v do not increase", off)
					}
				}
				_ = d.Observation(s) // must not panic
			}
		}
	})
}

// FuzzReadParquet: no Parquet input makes ReadData panic or hang; what it
// accepts has states inside the declared list.
func FuzzReadParquet(f *testing.F) {
	ex, _ := os.ReadFile(exampleFile)
	var seeds [][]byte
	for _, types := range []map[string]string{nil, {"time": "int64"}, {"time": "double"}} {
		var b bytes.Buffer
		if err := WriteParquet(&b, bytes.NewReader(ex[:1500]), "seed.csv", types, 20); err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b.Bytes())
	}
	var b bytes.Buffer
	WriteParquet(&b, strings.NewReader("series,time,kw\na,2024-01-01T00:00:00Z,1.5\na,2024-01-01T00:01:00Z,NA\n"), "seed.csv", map[string]string{"time": "timestamp", "kw": "double"}, 0)
	seeds = append(seeds, b.Bytes())
	for i, s := range seeds {
		f.Add(s, i%2 == 0)
	}
	lv, _ := ParseLevels("0:2:4")
	f.Fuzz(func(t *testing.T, data []byte, numeric bool) {
		opts := DefaultCSV
		opts.States = []string{"sleep", "sit", "walk", "run"}
		if numeric {
			opts = CSVOptions{SeriesCol: "series", TimeCol: "time", ValueCol: "kw", Levels: lv}
		}
		d, err := ReadData(bytes.NewReader(data), "fuzz.parquet", opts)
		if err != nil {
			return
		}
		unknown := 0
		for _, seq := range d.Seqs {
			for _, v := range seq {
				if v == Unknown { // a missing value: a reading of unknown value (docs/math.md §4.8)
					unknown++
					continue
				}
				if v < 0 || v >= len(d.States) {
					t.Fatalf("state index %d of %d", v, len(d.States))
				}
			}
		}
		if unknown != d.MissingValues {
			t.Fatalf("%d readings of unknown value, %d missing values read: every missing value stays a reading", unknown, d.MissingValues)
		}
	})
}

// FuzzReadSummary: streaming (ReadSummary) and reading whole (ReadData,
// then Data.Summary) give the same summary, patterns and error on any
// input.
func FuzzReadSummary(f *testing.F) {
	ex, _ := os.ReadFile(exampleFile)
	f.Add(ex[:3000], false)
	f.Add([]byte("series,time,state\na,0,x\nb,0,y\na,1,y\na,5,x\nb,1,y\n"), false)
	f.Add([]byte("s,t,v\na,1,1.5\na,2,NA\na,4,0.5\nb,1,\"2\"\n"), true)
	f.Add([]byte("series,time,state\na,1,x\na,1.5,y\na,2.25,x\n"), false)
	f.Add([]byte("series,time,state\na,1,x\na,2,y,z\n"), false)
	f.Add([]byte("series,time,state\na,1600-01-01T00:00:00Z,x\na,9999-12-31T23:00:00Z,y\n"), false)
	lv, _ := ParseLevels("0:2:3")
	f.Fuzz(func(t *testing.T, data []byte, numeric bool) {
		opts := DefaultCSV
		opts.States = []string{"x", "y"}
		if numeric {
			opts = CSVOptions{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: lv}
		}
		want, wantPats, wantCounts, wantErr := summaryOfData(ReadData(bytes.NewReader(data), "f.csv", opts))
		got, gotPats, gotCounts, gotErr := ReadSummaryTransitions(bytes.NewReader(data), "f.csv", opts)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("streaming error %v, whole %v", gotErr, wantErr)
		}
		if wantErr == nil && (!reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotPats, wantPats) || !reflect.DeepEqual(gotCounts, wantCounts)) {
			t.Fatalf("streaming %+v %+v\nwhole %+v %+v", got, gotPats, want, wantPats)
		}
	})
}

// exampleFile is the built-in example (release.ExampleData), read from
// its file: package release reads with this package.
const exampleFile = "../release/example/activity.csv"
