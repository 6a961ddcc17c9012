package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/estimate"
	"github.com/pufferfish-privacy/pufferfish/internal/progress"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// noisyHist is one released count histogram as the product releases it:
// its true counts, the per-bin Laplace scale and Lipschitz constant of the
// release, its public number of readings and whether every reading has a
// value (reading.Summary.Complete: the estimate's sum is then n, else at
// most n).
type noisyHist struct {
	counts   []float64
	scale, l float64
	n        float64
	complete bool
}

// estimateCase is a set of histograms released together.
type estimateCase struct {
	name, what string
	hists      []noisyHist
}

// runEstimates measures what the consistent estimate (docs/math.md §4.14)
// gains over the raw noisy counts, as the product releases them: each
// histogram's noisy counts are drawn at the release's own per-bin scale,
// projected as the release projects them (package estimate), and both are
// compared with the true counts in L1 (and L2, where the projection is
// never farther when the truth lies in the set: counted, must be 0).
// Cases: the README's daily windows of the UCI house (51 levels, fitted
// class, ε = 0.5, joint windows; numeric readings: Σ ≤ n) and the UCI HAR
// activity labels at ε = 1 (one count histogram per person, and one of
// everyone; states: Σ = n).
func runEstimates(o Options, w *writer) error {
	reps := 1000
	if o.Fast {
		reps = 20
	}
	if o.Reps > 0 {
		reps = o.Reps
	}
	_, lap := rngs(o.Seed, "estimates")
	src := seeded{rand.New(rand.NewPCG(o.Seed, 35))} // the one draw that prints each report (its values are not used)
	houseLevels, what := "0:10:51", "one 51-level count histogram per day, ε = 0.5 for all (the README's release)"
	if o.Fast {
		// the fitted 51-level chain's leakage bound takes most of a
		// minute of CPU even on the test's small data; the smoke run
		// checks the projection, not the README's numbers
		houseLevels, what = "0:10:11", "one 11-level count histogram per day, ε = 0.5 for all"
	}
	uci, err := uciWindows(o.Data, houseLevels, src)
	if err != nil {
		return err
	}
	people, everyone, err := harHistograms(o.Data, src)
	if err != nil {
		return err
	}
	cases := []estimateCase{
		{"UCI house, daily windows", what, uci},
		{"UCI HAR, per person", "one 6-activity count histogram per person, ε = 1 each", people},
		{"UCI HAR, everyone", "one 6-activity count histogram of the 30 people, ε = 1", []noisyHist{everyone}},
	}
	bar := progress.New(o.Progress, "estimates", len(cases)*reps)
	var rows, trows [][]string
	var series []chart.Series
	for _, c := range cases {
		raw, est, neg, bins, farther := 0.0, 0.0, 0, 0, 0
		perRaw, perEst := make([]float64, len(c.hists)), make([]float64, len(c.hists))
		noisy := []float64{}
		for range reps {
			for hi, h := range c.hists {
				noisy = noisy[:0]
				for _, x := range h.counts {
					v, err := lap.Add(x, h.scale, h.l)
					if err != nil {
						return err
					}
					noisy = append(noisy, v)
					if v < 0 {
						neg++
					}
				}
				bins += len(noisy)
				var e []float64
				if h.complete {
					e, err = estimate.Simplex(noisy, h.n)
				} else {
					e, err = estimate.AtMost(noisy, h.n)
				}
				if err != nil {
					return err
				}
				r1, e1, r2, e2 := 0.0, 0.0, 0.0, 0.0
				for i, x := range h.counts {
					r1 += math.Abs(noisy[i] - x)
					e1 += math.Abs(e[i] - x)
					r2 += (noisy[i] - x) * (noisy[i] - x)
					e2 += (e[i] - x) * (e[i] - x)
				}
				if e2 > r2*(1+1e-9) {
					farther++
				}
				raw, est = raw+r1, est+e1
				perRaw[hi], perEst[hi] = perRaw[hi]+r1, perEst[hi]+e1
			}
			bar.Step()
		}
		m := float64(reps * len(c.hists))
		n, scale := 0.0, 0.0
		for _, h := range c.hists {
			n += h.n
			scale = max(scale, h.scale)
		}
		n /= float64(len(c.hists))
		trows = append(trows, []string{c.name, fmt.Sprint(len(c.hists)), fmt.Sprintf("%.0f", n), fmt.Sprintf("%.4g", scale),
			fmt.Sprintf("%.4g", raw/m), fmt.Sprintf("%.4g", est/m), fmt.Sprintf("%.3g×", raw/est),
			fmt.Sprintf("%.1f%%", 100*float64(neg)/float64(bins)), fmt.Sprint(farther)})
		rows = append(rows, []string{c.name, fmt.Sprint(len(c.hists)), fmt.Sprintf("%.1f", n), fmt.Sprint(scale), fmt.Sprint(reps),
			fmt.Sprint(raw / m), fmt.Sprint(est / m), fmt.Sprint(float64(neg) / float64(bins)), fmt.Sprint(farther)})
		if len(c.hists) > 1 {
			rs, es := chart.Series{Name: c.name + ", raw"}, chart.Series{Name: c.name + ", estimate"}
			for i := range c.hists {
				rs.X, rs.Y = append(rs.X, float64(i+1)), append(rs.Y, perRaw[i]/float64(reps))
				es.X, es.Y = append(es.X, float64(i+1)), append(es.Y, perEst[i]/float64(reps))
			}
			series = append(series, rs, es)
		}
	}
	if err := w.csv(".csv", []string{"case", "histograms", "mean_readings", "per_bin_scale", "draws", "raw_mean_l1", "estimate_mean_l1", "negative_raw_bins", "draws_estimate_farther_l2"}, rows); err != nil {
		return err
	}
	w.printf("## estimates: raw noisy counts against their consistent estimate, %d draws\n\n", reps)
	w.printf("Mean L1 error of one count histogram (over its histograms and %d draws of the release's own noise), raw noisy counts against the estimate the release prints beside them (the projection onto non-negative histograms with the public number of readings; docs/math.md §4.14).\n\n", reps)
	w.table([]string{"case", "histograms", "readings per histogram", "per-bin scale", "raw L1", "estimate L1", "raw / estimate", "negative raw bins", "draws with the estimate farther in L2"}, trows)
	for _, c := range cases {
		w.printf("- %s: %s.\n", c.name, c.what)
	}
	w.printf("\n")
	for _, ext := range []string{".png", ".svg"} {
		if err := chart.Lines(w.path(ext), fmt.Sprintf("mean L1 error per histogram over %d draws", reps), "histogram (day, or person)", "mean L1 error (log scale)", series, true); err != nil {
			return err
		}
	}
	w.printf("![estimates](%s.png)\n\n", w.name)
	return jointEstimates(o, w, uci, houseLevels, lap, reps)
}

// jointEstimates measures the joint estimate of the UCI house's daily
// windows and its hour-of-day count profile (estimate.Joint, docs/math.md
// §4.14 "Windows and profiles together") against each release's own
// estimate: the profile of the same readings is calibrated by the same
// joint σ and the same L = 2 (docs/math.md §4.15), so its per-bin scale is
// the windows'. At most 100 draws (each a projection of 205 histograms).
func jointEstimates(o Options, w *writer, uci []noisyHist, houseLevels string, lap *noise.Laplace, reps int) error {
	reps = min(reps, 100)
	f, err := os.Open(filepath.Join(o.Data, filePower))
	if err != nil {
		return err
	}
	defer f.Close()
	opts := reading.CSVOptions{TimeCol: "index", ValueCol: "Global_active_power", TimeUnit: 60}
	if opts.Levels, err = reading.ParseLevels(houseLevels); err != nil {
		return err
	}
	opts.States = opts.Levels.Names()
	data, _, err := release.Load(f, filePower, release.Request{CSV: opts, Fit: true, Smoothing: 0.01})
	if err != nil {
		return err
	}
	k := len(data.States)
	prof := make([]noisyHist, 24)
	for h := range prof {
		prof[h] = noisyHist{counts: make([]float64, k), scale: uci[0].scale, l: uci[0].l}
	}
	for s, ts := range data.Times {
		for j, t := range ts {
			h := int(release.WindowOf(t, time.Hour, time.UTC) % 24)
			prof[h].n++
			if v := data.Seqs[s][j]; v != reading.Unknown {
				prof[h].counts[v]++
			}
		}
	}
	draw := func(hs []noisyHist) ([]estimate.Histogram, error) {
		out := make([]estimate.Histogram, len(hs))
		for i, h := range hs {
			out[i] = estimate.Histogram{Variance: 2 * h.scale * h.scale, N: h.n, Exact: h.complete}
			for _, x := range h.counts {
				v, err := lap.Add(x, h.scale, h.l)
				if err != nil {
					return nil, err
				}
				out[i].Noisy = append(out[i].Noisy, v)
			}
		}
		return out, nil
	}
	l1 := func(est [][]float64, hs []noisyHist) float64 {
		e := 0.0
		for i, h := range hs {
			for j, x := range h.counts {
				e += math.Abs(est[i][j] - x)
			}
		}
		return e / float64(len(hs))
	}
	var sepW, sepP, jW, jP float64
	bar := progress.New(o.Progress, "estimates (joint)", reps)
	for range reps {
		a, err := draw(uci)
		if err != nil {
			return err
		}
		b, err := draw(prof)
		if err != nil {
			return err
		}
		own := func(hs []estimate.Histogram) ([][]float64, error) {
			out := make([][]float64, len(hs))
			for i, h := range hs {
				if out[i], err = estimate.AtMost(h.Noisy, h.N); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		sa, err := own(a)
		if err != nil {
			return err
		}
		sb, err := own(b)
		if err != nil {
			return err
		}
		jr, err := estimate.Joint(context.Background(), a, b)
		if err != nil {
			return err
		}
		if jr.Capped {
			return fmt.Errorf("the joint estimate stopped at its round cap (%d rounds), the totals agreeing to %.3g only", jr.Rounds, jr.Disagreement)
		}
		ja, jb := jr.A, jr.B
		sepW, sepP = sepW+l1(sa, uci), sepP+l1(sb, prof)
		jW, jP = jW+l1(ja, uci), jP+l1(jb, prof)
		bar.Step()
	}
	m := float64(reps)
	w.printf("### Windows and a profile together (docs/math.md §4.14), %d draws\n\n", reps)
	w.printf("The UCI house's 181 daily windows and its 24-cell hour-of-day count profile, each released at ε = 0.5 (per-bin scale %.4g both), mean L1 error of one histogram: each release's own estimate against the joint estimate of both (`puff consistent`, `estimate.Joint`).\n\n", uci[0].scale)
	w.table([]string{"histograms", "own estimate L1", "joint estimate L1", "own / joint"}, [][]string{
		{"daily window (181)", fmt.Sprintf("%.4g", sepW/m), fmt.Sprintf("%.4g", jW/m), fmt.Sprintf("%.3g×", sepW/jW)},
		{"hour-of-day cell (24)", fmt.Sprintf("%.4g", sepP/m), fmt.Sprintf("%.4g", jP/m), fmt.Sprintf("%.3g×", sepP/jP)},
	})
	return nil
}

// uciWindows is the README's release of the UCI house's daily windows
// (Global_active_power in 51 levels over [0, 10] kW, a chain fitted with
// smoothing 0.01, ε = 0.5, 24 h windows calibrated jointly), one noisyHist
// per window with the scale its report prints.
func uciWindows(dir, levels string, src noise.Source) ([]noisyHist, error) {
	f, err := os.Open(filepath.Join(dir, filePower))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opts := reading.CSVOptions{TimeCol: "index", ValueCol: "Global_active_power", TimeUnit: 60}
	if opts.Levels, err = reading.ParseLevels(levels); err != nil {
		return nil, err
	}
	opts.States = opts.Levels.Names()
	data, class, err := release.Load(f, filePower, release.Request{CSV: opts, Fit: true, Smoothing: 0.01})
	if err != nil {
		return nil, err
	}
	day := 24 * time.Hour
	p, err := release.PrepareData(data, class, true, release.Options{Epsilon: 0.5, Method: mechanism.Exact, Source: src}, day, time.UTC)
	if err != nil {
		return nil, err
	}
	out, err := p.Draw()
	if err != nil {
		return nil, err
	}
	wr := out.(*release.WindowedReport)
	counts := map[int64][]float64{}
	for s, ts := range data.Times {
		for j, t := range ts {
			k := release.WindowOf(t, day, time.UTC)
			if counts[k] == nil {
				counts[k] = make([]float64, len(data.States))
			}
			if v := data.Seqs[s][j]; v != reading.Unknown {
				counts[k][v]++
			}
		}
	}
	keys := make([]int64, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) != len(wr.Windows) {
		return nil, fmt.Errorf("%d windows of readings, %d released", len(keys), len(wr.Windows))
	}
	hists := make([]noisyHist, len(keys))
	for i, k := range keys {
		r := wr.Windows[i].Report
		hists[i] = noisyHist{counts: counts[k], scale: r.PerBinScale, l: r.Lipschitz, n: float64(r.Observations), complete: false}
	}
	return hists, nil
}

// harHistograms is the count histogram of every person of the UCI HAR
// labels released on its own, and of everyone together, ε = 1, MQMExact
// for the chain fitted on everyone (as runActivity fits it).
func harHistograms(dir string, src noise.Source) ([]noisyHist, noisyHist, error) {
	people, err := loadHAR(dir)
	if err != nil {
		return nil, noisyHist{}, err
	}
	var seqs [][]int
	for _, p := range people {
		seqs = append(seqs, p.seq)
	}
	ch, err := markov.Fit(activityNames, seqs, 0)
	if err != nil {
		if ch, err = markov.Fit(activityNames, seqs, 0.01); err != nil {
			return nil, noisyHist{}, err
		}
	}
	class, err := markov.NewClass(activityNames, ch)
	if err != nil {
		return nil, noisyHist{}, err
	}
	cache := release.NewScaleCache()
	hist := func(seqs [][]int, names []string) (noisyHist, error) {
		data := &reading.Data{States: activityNames, Seqs: seqs, Series: names}
		p, err := release.PrepareData(data, class, true, release.Options{Epsilon: 1, Method: mechanism.Exact, Source: src, Cache: cache}, 0, nil)
		if err != nil {
			return noisyHist{}, err
		}
		out, err := p.Draw()
		if err != nil {
			return noisyHist{}, err
		}
		r := out.(*release.Report)
		h := noisyHist{counts: make([]float64, len(activityNames)), scale: r.PerBinScale, l: r.Lipschitz, n: float64(r.Observations), complete: true}
		for _, s := range seqs {
			for _, a := range s {
				h.counts[a]++
			}
		}
		return h, nil
	}
	var per []noisyHist
	var names []string
	for _, p := range people {
		h, err := hist([][]int{p.seq}, []string{p.id})
		if err != nil {
			return nil, noisyHist{}, err
		}
		per = append(per, h)
		names = append(names, p.id)
	}
	all, err := hist(seqs, names)
	return per, all, err
}
