package release

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// report runs a release with fixed noise and returns its JSON.
func report(t *testing.T, r io.Reader, name string, req Request) string {
	t.Helper()
	req.Source = fixed{rand.NewChaCha8([32]byte{7})}
	rep, _, err := Run(r, name, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The bundled example, converted to Parquet with its columns stored as
// strings, integers or timestamps, in row groups that cut series, read
// from a file, a stream or a gzip file, gives the same data and the same
// report (with the same noise draws) as the CSV.
func TestParquetSameAsCSV(t *testing.T) {
	raw, _ := io.ReadAll(ExampleData())
	// the same rows with RFC 3339 times
	var stamped strings.Builder
	for i, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Split(l, ",")
		if i > 0 {
			sec, _ := strconv.Atoi(f[1])
			f[1] = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Minute).Format(time.RFC3339)
		}
		stamped.WriteString(strings.Join(f, ",") + "\n")
	}
	class, err := markov.ParseClass(ExampleClass(), "example class")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		csv   string
		types map[string]string
		group int
	}{
		{"strings", string(raw), nil, 0},
		{"integer times, small groups", string(raw), map[string]string{"time": "int64"}, 97},
		{"double times", string(raw), map[string]string{"time": "double"}, 1000},
		{"timestamps", stamped.String(), map[string]string{"time": "timestamp"}, 333},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pq := toParquet(t, c.csv, c.types, c.group)
			if string(pq[:4]) != "PAR1" {
				t.Fatal("not Parquet")
			}
			want, err := reading.ReadData(strings.NewReader(c.csv), "x", reading.DefaultCSV)
			if err != nil {
				t.Fatal(err)
			}
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(pq)
			zw.Close()
			for how, r := range map[string]func() io.Reader{
				"file":   func() io.Reader { return bytes.NewReader(pq) },
				"stream": func() io.Reader { return onlyReader{bytes.NewReader(pq)} },
				"gzip":   func() io.Reader { return bytes.NewReader(gz.Bytes()) },
			} {
				got, err := reading.ReadData(r(), "x", reading.DefaultCSV)
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: Parquet data differ from the CSV's:\n%+v\n%+v", how, got, want)
				}
			}
			req := Request{Class: class, CSV: reading.DefaultCSV, Options: Options{Epsilon: 1, Method: "exact"}}
			a, b := report(t, strings.NewReader(c.csv), "x", req), report(t, bytes.NewReader(pq), "x", req)
			if a != b {
				t.Fatalf("reports differ:\nCSV     %s\nParquet %s", a, b)
			}
			// rows for a pipeline: the same, numbered by row (line − 1)
			var csvRows, pqRows []reading.Row
			opts := reading.DefaultCSV
			opts.States = class.States
			if _, err := reading.ReadRows(strings.NewReader(c.csv), "x", opts, func(r reading.Row) error { r.Line--; csvRows = append(csvRows, r); return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := reading.ReadRows(bytes.NewReader(pq), "x", opts, func(r reading.Row) error { pqRows = append(pqRows, r); return nil }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(csvRows, pqRows) {
				t.Fatalf("rows differ (%d CSV, %d Parquet)", len(csvRows), len(pqRows))
			}
		})
	}
}

// toParquet converts CSV text with WriteParquet.
func toParquet(t testing.TB, csvText string, types map[string]string, perGroup int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := reading.WriteParquet(&b, strings.NewReader(csvText), "in.csv", types, perGroup); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// onlyReader hides every method but Read (a stream, not a file).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
