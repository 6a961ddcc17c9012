package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/internal/progress"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/synth"
)

// runSynth measures how close synthetic traces (puff synth, docs/math.md
// §4.13) are to the real data: the HAR activity labels (6 states, 30
// subjects) and the UCI house (51 levels of Global_active_power, one
// series by the minute), each with its fitted class, at ε = 1 and 10, and
// at ε = ∞ (the chain of the true transition counts: the model's own
// error, no noise). Statistics: the total-variation distance between the
// state frequencies, the mean run length (consecutive rows in one state),
// the mean level (house) and the hour-of-day profile of the mean level
// (house: mean absolute difference over the 24 hours), averaged over the
// repetitions; every release goes through synth.Prepare and its draw with
// the experiment's seeded noise, every synthetic set through synth.Sample.
func runSynth(o Options, w *writer) error {
	reps := 10
	if o.Fast {
		reps = 1
	}
	if o.Reps > 0 {
		reps = o.Reps
	}
	type set struct {
		name string
		file string
		spec reading.Spec
	}
	house, levels := "UCI house (51 levels)", "0:10:51"
	if o.Fast {
		// the fitted 51-level chain's leakage bound takes a minute of
		// CPU per ε even on the test's small data; the smoke run's
		// numbers are not reported
		house, levels = "UCI house (11 levels)", "0:10:11"
	}
	sets := []set{
		{"HAR activities", fileHAR, reading.Spec{SeriesCol: "subject", StateCol: "activity"}},
		{house, filePower, reading.Spec{ValueCol: "Global_active_power", Levels: levels, TimeCol: "index", TimeUnit: 60}},
	}
	epss := []float64{1, 10, math.Inf(1)}
	bar := progress.New(o.Progress, "synth", len(sets)*len(epss)*reps)
	rng, _ := rngs(o.Seed, "synth")
	src := seeded{rand.New(rand.NewPCG(o.Seed, 0x73796e74))}
	header := []string{"data", "ε", "per-cell scale", "TV(state frequencies)", "mean run: real", "mean run: synthetic", "mean level: real", "mean level: synthetic", "hour profile: mean |Δ|"}
	var rows [][]string
	var profiles []chart.Series
	for _, ds := range sets {
		opts, err := ds.spec.CSV()
		if err != nil {
			return err
		}
		opts.KeepTimes = true
		r, name, err := release.OpenData(filepath.Join(o.Data, ds.file))
		if err != nil {
			return err
		}
		data, err := reading.ReadData(r, name, opts)
		r.Close()
		if err != nil {
			return err
		}
		class, err := release.FitClass(data, name, 0.01, markov.InitStationary, true)
		if err != nil {
			return err
		}
		real := measureTrace(data)
		if real.profile != nil {
			profiles = append(profiles, chart.Series{Name: "real", X: hours(), Y: real.profile})
		}
		for _, eps := range epss {
			var agg traceStats
			scale := 0.0
			for range reps {
				var chain [][]float64
				if math.IsInf(eps, 1) {
					chain = synth.Project(synth.Count(data))
				} else {
					p, rel, err := synth.Prepare(data, class, true, release.Options{Epsilon: eps, Method: mechanism.Exact, Source: src})
					if err != nil {
						return err
					}
					if _, err := p.Draw(); err != nil {
						return err
					}
					chain, scale = rel.Chain, rel.PerBinScale
				}
				syn, err := synth.Sample(chain, synth.Stationary(chain), data, rng)
				if err != nil {
					return err
				}
				s := measureTrace(syn)
				agg.tv += tv(real.freq, s.freq) / float64(reps)
				agg.run += s.run / float64(reps)
				agg.level += s.level / float64(reps)
				if real.profile != nil {
					agg.profileErr += meanAbsDiff(real.profile, s.profile) / float64(reps)
					if agg.profile == nil {
						agg.profile = s.profile // the first repetition's, for the chart
					}
				}
				bar.Step()
			}
			e, sc := fmt.Sprint(eps), f4(scale)
			if math.IsInf(eps, 1) {
				e, sc = "∞ (no noise)", "0"
			}
			row := []string{ds.name, e, sc, f4(agg.tv), f4(real.run), f4(agg.run), "—", "—", "—"}
			if real.profile != nil {
				row[6], row[7], row[8] = f4(real.level), f4(agg.level), f4(agg.profileErr)
				profiles = append(profiles, chart.Series{Name: "synthetic, ε = " + e, X: hours(), Y: agg.profile})
			}
			rows = append(rows, row)
		}
	}
	w.printf("## synth: synthetic traces from released transition counts\n\n")
	w.printf("`puff synth` on each data set with its fitted class (smoothing 0.01), %d repetitions (noise and sampling). "+
		"ε = ∞ is the chain of the true transition counts (no noise): the first-order chain's own error. "+
		"TV is the total-variation distance between the pooled state frequencies of the real and the synthetic series; "+
		"a run is a maximal stretch of consecutive rows in one state; the hour profile is the mean level (kW) per hour of the day.\n\n", reps)
	w.table(header, rows)
	if err := w.csv(".csv", []string{"data", "epsilon", "per_cell_scale", "tv_frequencies", "run_real", "run_synthetic", "level_real", "level_synthetic", "profile_mae"}, rows); err != nil {
		return err
	}
	if len(profiles) == 0 {
		profiles = []chart.Series{{Name: "none", X: []float64{0}, Y: []float64{0}}}
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := chart.Lines(w.path(ext), "UCI house: mean level by hour of day", "hour", "kW", profiles, false); err != nil {
			return err
		}
	}
	return nil
}

// traceStats are the statistics runSynth compares.
type traceStats struct {
	freq       []float64 // pooled state frequencies
	run        float64   // mean run length
	level      float64   // mean level value (numeric data)
	profile    []float64 // mean level value per hour of day (numeric data with times)
	tv         float64
	profileErr float64
}

func measureTrace(d *reading.Data) traceStats {
	k := len(d.States)
	var s traceStats
	s.freq = make([]float64, k)
	n, runs, known := 0.0, 0.0, 0.0
	var hourSum, hourN [24]float64
	for i, seq := range d.Seqs {
		prev := reading.Unknown
		for j, v := range seq {
			if v == reading.Unknown {
				prev = reading.Unknown
				continue
			}
			s.freq[v]++
			n++
			gap := d.Offsets != nil && d.Offsets[i] != nil && j > 0 && d.Offsets[i][j] != d.Offsets[i][j-1]+1
			if v != prev || gap {
				runs++
			}
			prev = v
			if d.Levels != nil {
				x := d.Levels.Values[v]
				s.level += x
				known++
				if d.Times != nil {
					h := int(math.Mod(math.Floor(d.Times[i][j]/3600), 24))
					hourSum[h] += x
					hourN[h]++
				}
			}
		}
	}
	for i := range s.freq {
		s.freq[i] /= n
	}
	s.run = n / runs
	if known > 0 {
		s.level /= known
	}
	if d.Levels != nil && d.Times != nil {
		s.profile = make([]float64, 24)
		for h := range s.profile {
			s.profile[h] = math.NaN()
			if hourN[h] > 0 {
				s.profile[h] = hourSum[h] / hourN[h]
			}
		}
	}
	return s
}

func tv(p, q []float64) float64 {
	d := 0.0
	for i := range p {
		d += math.Abs(p[i] - q[i])
	}
	return d / 2
}

func meanAbsDiff(a, b []float64) float64 {
	d, n := 0.0, 0.0
	for i := range a {
		if !math.IsNaN(a[i]) && !math.IsNaN(b[i]) {
			d += math.Abs(a[i] - b[i])
			n++
		}
	}
	return d / n
}

func hours() []float64 {
	h := make([]float64, 24)
	for i := range h {
		h[i] = float64(i)
	}
	return h
}
