package release

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/query"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// Every report says the σ its noise is drawn with: sigma × lipschitz =
// per_bin_scale in whole-series, windowed, profile and stream releases,
// and running-total nodes, with the leakage bound's σ where it is smaller
// than MQM's (kept in calibration.mqm_sigma), as on this sticky chain.
func TestSigmaIsTheNoises(t *testing.T) {
	ch, err := markov.New([]string{"0", "1"}, [][]float64{{0.95, 0.05}, {0.05, 0.95}}, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	class, _ := markov.NewClass(ch.States, ch)
	var b strings.Builder
	b.WriteString("s,t,state\n")
	for _, s := range []string{"a", "b"} {
		for i := range 48 {
			fmt.Fprintf(&b, "%s,%d,%d\n", s, i*3600, (i/5)%2)
		}
	}
	d, err := reading.ReadData(strings.NewReader(b.String()), "x.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", StateCol: "state", States: class.States})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, r *Report) {
		t.Helper()
		c := r.Calibration
		if c == nil || c.Method != calibratedTPL || r.Sigma != c.TPL || !(r.Sigma < c.MQM) || r.PerBinScale != noise.ScaleFor(r.Sigma, r.Lipschitz) {
			t.Errorf("%s: σ %v × L %v, per-bin %v, calibration %+v", what, r.Sigma, r.Lipschitz, r.PerBinScale, c)
		}
	}
	for _, q := range []string{"counts", "relative"} {
		opts := Options{Epsilon: 1, Method: mechanism.Exact, Query: q}
		r, err := Histogram(d, class, false, opts)
		if err != nil {
			t.Fatal(err)
		}
		check("whole series, "+q, r)
		wr, err := releaseWindows(d, class, false, opts, 24*time.Hour, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wr.Windows {
			check("window "+w.Start+", "+q, w.Report)
		}
		prof, _ := query.ParseProfile("hour-of-day")
		pr, draw, err := planProfile(d, class, false, opts, prof, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if err := draw(); err != nil {
			t.Fatal(err)
		}
		check("profile cell "+pr.Cells[0].Cell+", "+q, pr.Cells[0].Report)
	}
	// streams: the base every window and tree node shares
	scale, err := ComputeScale(class, 200, 1, mechanism.Exact)
	if err != nil {
		t.Fatal(err)
	}
	leak, err := StreamLeakage(context.Background(), class, 1, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	base := StreamBase(class, Options{Epsilon: 1, Method: mechanism.Exact}, scale, leak)
	sum := d.Summary()
	w, err := ReleaseWindow(base, sum, class, Options{Epsilon: 1, Method: mechanism.Exact}, 0, 24*time.Hour, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	check("stream window", w.Report)
	node, err := ReleaseNode(base, sum, class, Options{Epsilon: 1, Method: mechanism.Exact}, 3)
	if err != nil {
		t.Fatal(err)
	}
	check("running-total node", node)
}

// When MQM sets the noise, the calibration still says why a leakage bound
// was not computed or was stopped (a work limit, a fixed start): the
// report is not silent about a fallback. When the leakage bound sets it,
// sigma is its σ and the ledger records a generic Pufferfish release.
func TestCalibrationSaysWhyABoundWasSkipped(t *testing.T) {
	skipped := "the pairwise leakage bound is not computed: about 3e+09 multiply-adds (≈ 3 s here), over --max-leakage-work 1e+06"
	r := &Report{Method: mechanism.Exact, Epsilon: 0.5, Sigma: 5}
	choose(r, Leakage{Sigma: 8, Scalar: 8, Bound: "scalar", Why: skipped})
	if c := r.Calibration; c.Method != calibratedMQM || r.Sigma != 5 || c.MQM != 5 || c.TPL != 8 || !strings.Contains(c.Why, skipped) || r.recordedMechanism() != mechanism.Exact {
		t.Fatalf("MQM smaller: σ %v, calibration %+v", r.Sigma, c)
	}
	r = &Report{Method: mechanism.Exact, Epsilon: 0.5, Sigma: 10}
	choose(r, Leakage{Sigma: 4, Scalar: 4, Bound: "scalar", Why: skipped})
	if c := r.Calibration; c.Method != calibratedTPL || r.Sigma != 4 || c.MQM != 10 || c.TPL != 4 || !strings.Contains(c.Why, skipped) || r.recordedMechanism() != mechanism.Pufferfish || r.usedSigma() != 4 {
		t.Fatalf("leakage smaller: σ %v, calibration %+v", r.Sigma, c)
	}
}
