package release

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/noise"
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

func TestReadDataRefusesHugeLines(t *testing.T) {
	in := "state\n" + strings.Repeat("x,", maxLine) + "\n"
	_, err := ReadData(strings.NewReader(in), "x.csv", DefaultCSV)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("huge line: %v", err)
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
	for _, m := range mechanism.Release {
		for _, rel := range []bool{false, true} {
			r, err := Histogram(d, class, false, Options{Epsilon: 1, Method: m, Query: map[bool]string{true: "relative"}[rel], Source: src})
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
			// L is 2/N rounded up (never below the exact quotient, at most
			// one ulp above it)
			exactL := new(big.Rat).SetFrac64(2, int64(d.Observations()))
			if !rel {
				exactL = big.NewRat(2, 1)
			}
			if new(big.Rat).SetFloat64(r.Lipschitz).Cmp(exactL) < 0 || r.Lipschitz > math.Nextafter(wantL, math.Inf(1)) ||
				r.PerBinScale != noise.ScaleFor(r.Sigma, r.Lipschitz) || r.PerBinScale < r.Sigma*wantL || r.NoiseScale < r.PerBinScale {
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

// The example's series p03 has a 30-minute gap: it stays one chain, and
// its σ accounts for the correlation across the gap.
func TestExampleGapStaysOneChain(t *testing.T) {
	d, err := ReadData(ExampleData(), "example", DefaultCSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Seqs) != 10 || d.Missing() != 30 {
		t.Fatalf("%d series, %d missing; want 10 and 30", len(d.Seqs), d.Missing())
	}
}

// One sticky series of 6,000 minutes with every 6th reading missing is one
// chain: its σ is the quilt search over the observed readings (≈ 303), not
// that of 1,000 independent pieces of length 5 (σ = 5).
func TestGappySeriesIsOneChain(t *testing.T) {
	var b strings.Builder
	b.WriteString("series,time,state\n")
	rng := rand.New(rand.NewPCG(3, 4))
	x := 0
	var times []int
	for m := 1; m <= 6000; m++ {
		if rng.Float64() < 0.01 {
			x = 1 - x
		}
		if m%6 == 0 {
			continue
		}
		times = append(times, m)
		fmt.Fprintf(&b, "p,%d,%d\n", 60*m, x) // seconds: the step is found as 60
	}
	opts := DefaultCSV
	opts.States = []string{"0", "1"}
	d, err := ReadData(strings.NewReader(b.String()), "sticky.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := markov.New(opts.States, [][]float64{{0.99, 0.01}, {0.01, 0.99}}, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	r, err := Histogram(d, class, false, Options{Epsilon: 1, Method: "exact"})
	if err != nil {
		t.Fatal(err)
	}
	ob, _ := mqm.At(times)
	want, err := mqm.ScaleAt(class, ob, 1, mqm.Exact)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sigma != want.Sigma || r.Sigma < 100 || r.Missing != 999 || r.TimeStep.Step != 60 {
		t.Fatalf("σ %v (want %v), %d missing, step %v", r.Sigma, want.Sigma, r.Missing, r.TimeStep.Step)
	}
	if len(r.Scales) != 1 || r.Scales[0].Span != 5999 || r.Scales[0].Missing != 999 {
		t.Fatalf("scales %+v", r.Scales[0])
	}
}

func TestHistogramRefusesUnsampleableNoise(t *testing.T) {
	d, _ := ReadData(ExampleData(), "example", DefaultCSV)
	class, _ := markov.ParseClass(ExampleClass(), "example class")
	d.Align(class.States, "example")
	if _, err := Histogram(d, class, false, Options{Epsilon: 1e-300, Method: "dp"}); err == nil || !strings.Contains(err.Error(), "beyond what can be sampled") {
		t.Fatalf("ε = 1e-300: %v", err)
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

func TestRunRequests(t *testing.T) {
	class, _ := markov.ParseClass(ExampleClass(), "example class")
	csv := "series,time,state\na,1,sit\na,2,walk\na,3,sit\n"
	for _, c := range []struct {
		name string
		req  Request
		want string
	}{
		{"class", Request{Class: class, Options: Options{Epsilon: 1, Method: mechanism.Exact}}, ""},
		{"fit with states", Request{Fit: true, Smoothing: 1, CSV: CSVOptions{StateCol: "state", SeriesCol: "series", TimeCol: "time", States: []string{"sit", "walk"}}, Options: Options{Epsilon: 1, Method: mechanism.Exact}}, ""},
		{"fit without states", Request{Fit: true, Options: Options{Epsilon: 1, Method: mechanism.Exact}}, "declared states"},
		{"class and fit", Request{Fit: true, Class: class}, "not both"},
		{"no class", Request{}, "no class"},
		{"states differ from the class", Request{Class: class, CSV: CSVOptions{States: []string{"sit"}}}, "differ"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.req.CSV.StateCol == "" {
				c.req.CSV = CSVOptions{StateCol: "state", SeriesCol: "series", TimeCol: "time", States: c.req.CSV.States}
			}
			r, cl, err := Run(strings.NewReader(csv), "x.csv", c.req)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want %q", err, c.want)
				}
				return
			}
			if err != nil || r == nil || cl == nil || len(r.Histogram) != len(cl.States) {
				t.Fatalf("%v %v", r, err)
			}
		})
	}
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

type countingSource struct{ n int }

func (c *countingSource) Uint64() uint64 { c.n++; return 0x9e3779b97f4a7c15 * uint64(c.n) }

// Prepare computes everything but the noise: a ledger can refuse the
// release before any randomness is used. Draw draws once.
func TestPrepareDrawsNoNoise(t *testing.T) {
	class, err := markov.ParseClass(ExampleClass(), "example")
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []time.Duration{0, 60 * time.Second} {
		src := &countingSource{}
		req := Request{Class: class, Options: Options{Epsilon: 1, Method: mechanism.Exact, Source: src}}
		req.CSV = DefaultCSV
		p, err := Prepare(ExampleData(), "example", req, width)
		if err != nil {
			t.Fatal(err)
		}
		if src.n != 0 || p.Record == nil || len(p.Record.Segments) == 0 || p.Class != class {
			t.Fatalf("width %v: %d draws before Draw, record %+v", width, src.n, p.Record)
		}
		out, err := p.Draw()
		if err != nil || src.n == 0 || out == nil {
			t.Fatalf("width %v: Draw: %v, %d draws", width, err, src.n)
		}
		if _, err := p.Draw(); err == nil {
			t.Fatalf("width %v: a second Draw drew fresh noise", width)
		}
	}
}
