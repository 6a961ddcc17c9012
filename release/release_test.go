package release

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

type fixed struct{ r *rand.ChaCha8 }

func (f fixed) Uint64() uint64 { return f.r.Uint64() }

func TestHistogramReport(t *testing.T) {
	d, err := reading.ReadData(ExampleData(), "example", reading.DefaultCSV)
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
			// MQM's σ is the maximum over the distinct lengths' scales;
			// the noise's is no larger
			mqmSigma := r.Sigma
			if c := r.Calibration; c != nil && (m == "exact" || m == "approx") {
				mqmSigma = c.MQM
			}
			if r.Sigma > mqmSigma {
				t.Fatalf("%s: σ %v above MQM's %v", m, r.Sigma, mqmSigma)
			}
			for _, s := range r.Scales {
				if *s.Sigma > mqmSigma {
					t.Fatalf("%s: MQM's σ %v below the scale for length %d (%v)", m, mqmSigma, s.Length, *s.Sigma)
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
		d, err := reading.ReadData(bytes.NewReader(data), "bench.csv", reading.DefaultCSV)
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
	d, err := reading.ReadData(ExampleData(), "example", reading.DefaultCSV)
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
	opts := reading.DefaultCSV
	opts.States = []string{"0", "1"}
	d, err := reading.ReadData(strings.NewReader(b.String()), "sticky.csv", opts)
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
	if c := r.Calibration; c == nil || c.MQM != want.Sigma || c.MQM < 100 || r.Sigma > c.MQM || r.Missing != 999 || r.TimeStep.Step != 60 {
		t.Fatalf("σ %v, calibration %+v (want MQM's %v), %d missing, step %v", r.Sigma, c, want.Sigma, r.Missing, r.TimeStep.Step)
	}
	if len(r.Scales) != 1 || r.Scales[0].Span != 5999 || r.Scales[0].Missing != 999 {
		t.Fatalf("scales %+v", r.Scales[0])
	}
}

func TestHistogramRefusesUnsampleableNoise(t *testing.T) {
	d, _ := reading.ReadData(ExampleData(), "example", reading.DefaultCSV)
	class, _ := markov.ParseClass(ExampleClass(), "example class")
	d.Align(class.States, "example")
	if _, err := Histogram(d, class, false, Options{Epsilon: 1e-300, Method: "dp"}); err == nil || !strings.Contains(err.Error(), "beyond what can be sampled") {
		t.Fatalf("ε = 1e-300: %v", err)
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
		{"fit with states", Request{Fit: true, Smoothing: 1, CSV: reading.CSVOptions{StateCol: "state", SeriesCol: "series", TimeCol: "time", States: []string{"sit", "walk"}}, Options: Options{Epsilon: 1, Method: mechanism.Exact}}, ""},
		{"fit without states", Request{Fit: true, Options: Options{Epsilon: 1, Method: mechanism.Exact}}, "declared states"},
		{"class and fit", Request{Fit: true, Class: class}, "not both"},
		{"no class", Request{}, "no class"},
		{"states differ from the class", Request{Class: class, CSV: reading.CSVOptions{States: []string{"sit"}}}, "differ"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.req.CSV.StateCol == "" {
				c.req.CSV = reading.CSVOptions{StateCol: "state", SeriesCol: "series", TimeCol: "time", States: c.req.CSV.States}
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
		req.CSV = reading.DefaultCSV
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
