package release

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

func TestNumericReadingsAndTimes(t *testing.T) {
	lv, err := reading.ParseLevels("0:4:4")
	if err != nil {
		t.Fatal(err)
	}
	in := "id,Date,Time,kw\nh,1/1/2007,00:00:00,0.5\nh,1/1/2007,00:01:00,?\nh,1/1/2007,00:02:00,3.5\nh,1/1/2007,00:03:00,9\nh,1/1/2007,00:04:00,-1\n"
	opts := reading.CSVOptions{SeriesCol: "id", TimeCol: "Date,Time", ValueCol: "kw", Levels: lv, TimeFormats: []string{"2/1/2006 15:04:05"}}
	d, err := reading.ReadData(strings.NewReader(in), "p.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	// the ? row is a reading of unknown value (docs/math.md §4.8): no gap
	if d.MissingValues != 1 || d.Clipped != 2 || d.Step != 60 || d.Missing() != 0 || len(d.Seqs[0]) != 5 {
		t.Fatalf("missing values %d, clipped %d, step %v, gaps %d, readings %v", d.MissingValues, d.Clipped, d.Step, d.Missing(), d.Seqs)
	}
	if want := []int{0, reading.Unknown, 3, 3, 0}; !slices.Equal(d.Seqs[0], want) {
		t.Fatalf("levels %v, want %v", d.Seqs[0], want)
	}
	// the mean query: L = (max − min level value)/N, N = 5 readings (one of unknown value)
	ch, _ := markov.New(lv.Names(), [][]float64{{0.7, 0.1, 0.1, 0.1}, {0.1, 0.7, 0.1, 0.1}, {0.1, 0.1, 0.7, 0.1}, {0.1, 0.1, 0.1, 0.7}}, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	r, err := Histogram(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, Query: "mean"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Mean == nil || math.Abs(r.Lipschitz-3.0/5) > 1e-12 || r.Histogram != nil {
		t.Fatalf("mean %v, L %v", r.Mean, r.Lipschitz)
	}
	for _, c := range []struct{ in, want string }{
		{"s,t,v\na,2007-01-01T00:00:00Z,1\na,2007-01-01T00:02:00Z,2\n", ""},
		{"s,t,v\na,5,1\na,3,2\n", "does not increase"},
		{"s,t,v\na,5,1\na,5,2\n", "repeated"},
		{"s,t,v\na,yesterday,1\n", "not a number of seconds"},
		{"s,t,v\na,1,x\n", "is not a number"},
	} {
		_, err := reading.ReadData(strings.NewReader(c.in), "x.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: lv})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
	// --sort orders rows by time
	if _, err := reading.ReadData(strings.NewReader("s,t,v\na,5,1\na,3,2\n"), "x.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", ValueCol: "v", Levels: lv, Sort: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := reading.ReadData(strings.NewReader("s,t,v\na,5,1\n"), "x.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", ValueCol: "v"}); err == nil || !strings.Contains(err.Error(), "public levels") {
		t.Fatalf("numeric without levels: %v", err)
	}
}

// Windows calibrated one by one (PerWindow): each window is a segment of
// its series' chain calibrated at its start (a fixed initial distribution
// has moved on), and the total comes from the composition rules; jointly
// (the default), every window has σ of the whole chain and the total is ε.
func TestWindowsCalibrateAtTheirStart(t *testing.T) {
	var b strings.Builder
	b.WriteString("s,t,state\n")
	for m := 0; m < 2*24*60; m += 60 { // hourly readings over two days
		st := "0"
		if (m/60)%5 == 0 {
			st = "1"
		}
		b.WriteString("a," + strconv.Itoa(m*60) + "," + st + "\n")
	}
	ch, _ := markov.New([]string{"0", "1"}, [][]float64{{0.8, 0.2}, {0.4, 0.6}}, markov.InitGiven, []float64{1, 0})
	class, _ := markov.NewClass(ch.States, ch)
	d, err := reading.ReadData(strings.NewReader(b.String()), "w.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", StateCol: "state", States: class.States})
	if err != nil {
		t.Fatal(err)
	}
	wr, err := releaseWindows(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, PerWindow: true}, 24*time.Hour, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(wr.Windows) != 2 || wr.Windows[1].Start != "1970-01-02T00:00:00Z" {
		t.Fatalf("%d windows, second starts %s", len(wr.Windows), wr.Windows[1].Start)
	}
	second, _ := mqm.ScaleAt(class, mqm.Consecutive(25, 24), 1, mqm.Exact)
	if wr.Windows[1].Sigma != second.Sigma {
		t.Fatalf("second day σ %v, calibrated at time 25: %v", wr.Windows[1].Sigma, second.Sigma)
	}
	if wr.Total.Rule == "" || wr.Total.Float() < 1 || wr.Total.Float() > 2+1e-9 {
		t.Fatalf("total %+v", wr.Total)
	}
	joint, err := releaseWindows(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact}, 24*time.Hour, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := mqm.ScaleAt(class, mqm.Consecutive(1, 48), 1, mqm.Exact)
	for _, w := range joint.Windows {
		c := w.Calibration
		if c == nil || w.Sigma != min(whole.Sigma, c.TPL) || c.MQM != whole.Sigma || c.Method != calibratedTPL || w.PerBinScale != 2*w.Sigma {
			t.Fatalf("joint window σ %v, per-bin %v, calibration %+v; the whole chain's σ is %v", w.Sigma, w.PerBinScale, c, whole.Sigma)
		}
	}
	if joint.Total.Rule != tplJointRule || joint.Total.Float() != 1 {
		t.Fatalf("joint total %+v", joint.Total)
	}
	if len(joint.Record.Segments) != 1 || joint.Record.Segments[0].First != 1 || joint.Record.Segments[0].Last != 48 {
		t.Fatalf("joint record %+v: want the whole series", joint.Record.Segments)
	}
}
