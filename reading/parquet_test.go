package reading

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// toParquet converts CSV text with WriteParquet.
func toParquet(t testing.TB, csvText string, types map[string]string, perGroup int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteParquet(&b, strings.NewReader(csvText), "in.csv", types, perGroup); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// onlyReader hides every method but Read (a stream, not a file).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// Numeric readings: a double (or integer, or string) value column with
// nulls gives the same levels, missing and clipped counts and report as
// the CSV with NA; a categorical null is a missing
func TestParquetNumericAndNulls(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("meter,ts,kw\n")
	for s := range 5 {
		for j := range 200 {
			v := strconv.FormatFloat(float64(rng.IntN(900))/100-1, 'f', -1, 64)
			if rng.IntN(20) == 0 {
				v = "NA"
			}
			if rng.IntN(10) == 0 {
				continue // a missing row
			}
			fmt.Fprintf(&b, "m%d,%d,%s\n", s, 1700000000+60*j, v)
		}
	}
	lv, err := ParseLevels("0:6:5")
	if err != nil {
		t.Fatal(err)
	}
	opts := CSVOptions{SeriesCol: "meter", TimeCol: "ts", ValueCol: "kw", Levels: lv, RequireSeries: true, RequireTime: true}
	want, err := ReadData(strings.NewReader(b.String()), "x", opts)
	if err != nil {
		t.Fatal(err)
	}
	if want.MissingValues == 0 || want.Clipped == 0 || want.Missing() == 0 {
		t.Fatalf("the test data should have missing values, clipped values and gaps: %d %d %d", want.MissingValues, want.Clipped, want.Missing())
	}
	for _, types := range []map[string]string{
		{"kw": "double", "ts": "int64"},
		{"kw": "double", "ts": "timestamp"},
		nil,
	} {
		in := b.String()
		if types["ts"] == "timestamp" {
			var s strings.Builder
			for i, l := range strings.Split(strings.TrimSpace(in), "\n") {
				f := strings.Split(l, ",")
				if i > 0 {
					sec, _ := strconv.ParseInt(f[1], 10, 64)
					f[1] = time.Unix(sec, 0).UTC().Format(time.RFC3339)
				}
				s.WriteString(strings.Join(f, ",") + "\n")
			}
			in = s.String()
		}
		got, err := ReadData(bytes.NewReader(toParquet(t, in, types, 150)), "x", opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%v: Parquet data differ from the CSV's", types)
		}
	}
	// a null state is a missing reading (CSV cannot say it)
	var pq bytes.Buffer
	type st struct {
		Series string  `parquet:"series"`
		Time   int32   `parquet:"time"`
		State  *string `parquet:"state,optional"`
	}
	x, y := "x", "y"
	w := parquet.NewGenericWriter[st](&pq)
	w.Write([]st{{"a", 1, &x}, {"a", 2, nil}, {"a", 3, &y}, {"b", 1, &y}})
	w.Close()
	d, err := ReadData(bytes.NewReader(pq.Bytes()), "n.parquet", DefaultCSV)
	if err != nil {
		t.Fatal(err)
	}
	// a null state is a reading of unknown value (docs/math.md §4.8), and
	// an optional state column says there may be some (§4.14)
	if !d.NullValues || d.MissingValues != 1 || !reflect.DeepEqual(d.Seqs, [][]int{{0, Unknown, 1}, {1}}) || !reflect.DeepEqual(d.Offsets, [][]int{nil, nil}) {
		t.Fatalf("null state: %+v", d)
	}
}

// Bad Parquet input is an error naming the file (and row), never a panic.
func TestParquetErrors(t *testing.T) {
	good := toParquet(t, "series,time,state\na,1,x\na,2,y\nb,1,x\n", map[string]string{"time": "int64"}, 0)
	var nullSeries bytes.Buffer
	type ns struct {
		Series *string `parquet:"series,optional"`
		Time   int64   `parquet:"time"`
		State  string  `parquet:"state"`
	}
	w := parquet.NewGenericWriter[ns](&nullSeries)
	a := "a"
	w.Write([]ns{{&a, 1, "x"}, {nil, 2, "x"}})
	w.Close()
	var nested bytes.Buffer
	type nest struct {
		Series string   `parquet:"series"`
		Time   int64    `parquet:"time"`
		State  []string `parquet:"state,list"`
	}
	w2 := parquet.NewGenericWriter[nest](&nested)
	w2.Write([]nest{{"a", 1, []string{"x"}}})
	w2.Close()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"d.parquet", []byte("series,time,state\na,1,x\n"), "d.parquet: not a Parquet file"},
		{"t.parquet", good[:len(good)-10], "t.parquet: not a readable Parquet file"},
		{"t.parquet", good[:40], "t.parquet: not a readable Parquet file"},
		{"n.parquet", nullSeries.Bytes(), `n.parquet:2: the series (column "series") is null`},
		{"l.parquet", nested.Bytes(), `l.parquet: column "state" is a group or repeated`},
		{"o.parquet", toParquet(t, "series,time,state\na,2,x\na,1,y\n", nil, 0), "o.parquet:2: time 1 of series \"a\" does not increase"},
		{"u.parquet", toParquet(t, "series,time,state\na,1,x\na,2,z\n", nil, 0), `u.parquet:2: state "z" is not declared`},
		{"s.parquet", toParquet(t, "series,time,state\na,1,x\na,1.5,y\na,2.25,x\n", map[string]string{"time": "double"}, 0), "s.parquet:3: time 2.25 is 1.5 steps"},
	}
	opts := DefaultCSV
	opts.States = []string{"x", "y"}
	for _, c := range cases {
		_, err := ReadData(bytes.NewReader(c.data), c.name, opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// BenchmarkReadParquet1M streams the 10⁶-row benchmark data from Parquet
// (series and state strings, integer times) into a release's summary: to
// compare with BenchmarkReadSummary1M (the same rows from CSV).
func BenchmarkReadParquet1M(b *testing.B) {
	pq := toParquet(b, string(benchCSV(1000, 1000)), map[string]string{"time": "int64"}, 0)
	opts := DefaultCSV
	opts.States = []string{"sleep", "sit", "walk", "run"}
	b.SetBytes(int64(len(pq)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ReadSummary(bytes.NewReader(pq), "bench.parquet", opts); err != nil {
			b.Fatal(err)
		}
	}
}
