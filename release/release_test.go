package release

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

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
	}
	for in, want := range cases {
		_, err := ReadData(strings.NewReader(in), "x.csv", DefaultCSV)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("input %q: error %v, want it to contain %q", in, err, want)
		}
	}
}

func TestReadDataGapsSeriesAndPlain(t *testing.T) {
	in := "series,time,state\na,0,x\nb,0,y\na,1,y\na,5,x\nb,1,y\n"
	d, err := ReadData(strings.NewReader(in), "g.csv", CSVOptions{SeriesCol: "series", TimeCol: "time", StateCol: "state", Gap: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Seqs) != 3 || d.Observations() != 5 {
		t.Fatalf("got %d sequences %v", len(d.Seqs), d.Seqs)
	}
	p, err := ReadData(strings.NewReader("x\ny\ny\n"), "p.txt", DefaultCSV)
	if err != nil || len(p.Seqs) != 1 || len(p.Seqs[0]) != 3 {
		t.Fatalf("plain file: %v %v", p, err)
	}
	if err := p.Align([]string{"y"}, "p.txt"); err == nil || !strings.Contains(err.Error(), `state "x" is not in the class`) {
		t.Fatalf("align: %v", err)
	}
}

type fixed struct{ r *rand.ChaCha8 }

func (f fixed) Uint64() uint64 { return f.r.Uint64() }

func TestHistogramReport(t *testing.T) {
	d, err := ReadData(ExampleData(), "example", DefaultCSV)
	if err != nil {
		t.Fatal(err)
	}
	class, err := markov.ParseClass(ExampleClass(), "example class")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Align(class.States, "example"); err != nil {
		t.Fatal(err)
	}
	src := fixed{rand.NewChaCha8([32]byte{1})}
	for _, m := range Methods {
		for _, rel := range []bool{false, true} {
			r, err := Histogram(d, class, false, Options{Epsilon: 1, Method: m, Relative: rel, Source: src})
			if m == "gk16" {
				continue // may or may not apply; covered in baseline
			}
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			wantL := 2.0
			if rel {
				wantL = 2 / float64(d.Observations())
			}
			if r.Lipschitz != wantL || r.PerBinScale != r.Sigma*wantL || r.NoiseScale < r.PerBinScale {
				t.Fatalf("%s rel=%v: L=%v per-bin=%v σ=%v noise=%v", m, rel, r.Lipschitz, r.PerBinScale, r.Sigma, r.NoiseScale)
			}
			if len(r.Histogram) != 4 || r.Sequences != 10 {
				t.Fatalf("%s: %d bins, %d sequences", m, len(r.Histogram), r.Sequences)
			}
			// σ is the maximum over the distinct lengths' scales
			for _, s := range r.Scales {
				if *s.Sigma > r.Sigma {
					t.Fatalf("%s: σ %v below the scale for length %d (%v)", m, r.Sigma, s.Length, *s.Sigma)
				}
			}
		}
	}
}

// BenchmarkRelease1M reads a 1,000,000-row long-format CSV, fits a chain
// and releases the histogram with MQMExact: the end-to-end path of
// 'puff release --fit'.
func BenchmarkRelease1M(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	var buf bytes.Buffer
	buf.WriteString("series,time,state\n")
	P := [][]float64{{0.9, 0.08, 0.02}, {0.1, 0.8, 0.1}, {0.05, 0.15, 0.8}}
	for s := range 100 {
		seq := markov.SampleFrom(rng, []float64{1. / 3, 1. / 3, 1. / 3}, P, 10000)
		for t, x := range seq {
			fmt.Fprintf(&buf, "u%03d,%d,s%d\n", s, t, x)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d, err := ReadData(bytes.NewReader(data), "bench.csv", DefaultCSV)
		if err != nil {
			b.Fatal(err)
		}
		ch, err := markov.Fit(d.States, d.Seqs, 0)
		if err != nil {
			b.Fatal(err)
		}
		class, _ := markov.NewClass(ch.States, ch)
		if _, err := Histogram(d, class, true, Options{Epsilon: 1, Method: "exact"}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestExampleGapSplitsOneSeries(t *testing.T) {
	opts := DefaultCSV
	opts.Gap = 1
	d, err := ReadData(ExampleData(), "example", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Seqs) != 11 {
		t.Fatalf("--gap 1 gives %d sequences, want 11 (p03 has a 30-minute gap)", len(d.Seqs))
	}
}
