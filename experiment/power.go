package experiment

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/internal/progress"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
)

// runPower is [SWC17] §5.3.2 on two real minute-level meters: UCI
// household power (Jan–Jun 2007, ≈ 260k minutes, missing minutes split the
// series) and the AMPds2 water meter (1,051,200 minutes), each discretised
// into 51 equal-width levels over [0, max] ([SWC17]: 51 levels of
// electricity power). One chain is fitted per meter (Θ = {it, stationary
// start}); the relative-frequency histogram is released for ε ∈ {0.2, 1, 5}
// and the L1 error averaged over repetitions ([SWC17] Table 3), with the
// time to compute each scale (Table 2, last column).
func runPower(o Options, w *writer) error {
	k := 51
	epss := []float64{0.2, 1, 5}
	reps := 100
	if o.Fast {
		k, reps = 11, 3
	}
	if o.Reps > 0 {
		reps = o.Reps
	}
	_, lap := rngs(o.Seed, "power")
	power, err := loadPower(o.Data)
	if err != nil {
		return err
	}
	water, err := loadWater(o.Data)
	if err != nil {
		return err
	}
	meters := []struct {
		name, unit string
		segs       [][]float64
	}{{"household power (UCI)", "kW", power}, {"water (AMPds2)", "L/min", water}}
	states := make([]string, k)
	for i := range states {
		states[i] = strconv.Itoa(i)
	}
	bar := progress.New(o.Progress, "power", len(meters)*len(epss)*4)
	var rows [][]string
	methods := []mechanism.Name{mechanism.GroupDP, mechanism.GK16, mechanism.Approx, mechanism.Exact}
	type result struct {
		err  float64
		ok   bool
		took time.Duration
	}
	res := map[[3]int]result{}
	var series []chart.Series
	for mi, meter := range meters {
		seqs, width := levels(meter.segs, k)
		var lengths []int
		N := 0
		counts := make([]int, k)
		for _, s := range seqs {
			lengths = append(lengths, len(s))
			N += len(s)
			for _, v := range s {
				counts[v]++
			}
		}
		// Additive smoothing 0.01 gives rarely or never visited levels a
		// defined row and makes the chain irreducible and aperiodic (needed
		// by MQMApprox); the same fit as BENCHMARKS.md's power chain.
		ch, err := markov.Fit(states, seqs, 0.01)
		if err != nil {
			return fmt.Errorf("%s: %w", meter.name, err)
		}
		class, err := markov.NewClass(states, ch)
		if err != nil {
			return err
		}
		w.printf("**%s**: %d segments, %d minutes, levels of width %.4g %s.\n\n", meter.name, len(seqs), N, width, meter.unit)
		for ei, eps := range epss {
			for xi, m := range methods {
				sigma, ok, took, err := scaleOf(class, lengths, eps, m)
				if err != nil {
					return err
				}
				r := result{ok: ok, took: took, err: math.NaN()}
				if ok {
					if r.err, err = meanHistError(lap, counts, N, sigma, reps); err != nil {
						return err
					}
				}
				res[[3]int{mi, ei, xi}] = r
				rows = append(rows, []string{meter.name, f4(eps), m.Title(), fmt.Sprint(ok), f4(sigma), f4(r.err), fmt.Sprintf("%.6f", took.Seconds())})
				bar.Step()
			}
		}
		for xi, m := range methods {
			s := chart.Series{Name: meter.name + ", " + m.Title()}
			for ei, eps := range epss {
				s.X, s.Y = append(s.X, eps), append(s.Y, res[[3]int{mi, ei, xi}].err)
			}
			series = append(series, s)
		}
	}
	if err := w.csv(".csv", []string{"meter", "epsilon", "method", "applicable", "sigma", "l1_error", "scale_seconds"}, rows); err != nil {
		return err
	}
	w.printf("L1 error of the released %d-bin relative-frequency histogram, %d repetitions ([SWC17] Table 3 for its electricity data: GroupDP 516.2 / 102.9 / 19.87, MQMApprox 0.3369 / 0.0614 / 0.0113, MQMExact 0.1298 / 0.0188 / 0.0022 at ε = 0.2 / 1 / 5; GK16 N/A):\n\n", k, reps)
	for mi, meter := range meters {
		var trows [][]string
		for xi, m := range methods {
			r := []string{m.Title()}
			for ei := range epss {
				c := res[[3]int{mi, ei, xi}]
				r = append(r, na(c.ok, c.err))
			}
			trows = append(trows, r)
		}
		w.printf("*%s*\n\n", meter.name)
		w.table([]string{"method", "ε = 0.2", "ε = 1", "ε = 5"}, trows)
	}
	w.printf("Time to compute the scale at ε = 1 (seconds; [SWC17] Table 2: MQMApprox 0.0567 s, MQMExact 282 s for its 51-state chain):\n\n")
	var trows [][]string
	for mi, meter := range meters {
		r := []string{meter.name}
		for xi := range methods {
			r = append(r, fmt.Sprintf("%.4f", res[[3]int{mi, 1, xi}].took.Seconds()))
		}
		trows = append(trows, r)
	}
	w.table([]string{"meter", "GroupDP", "GK16", "MQMApprox", "MQMExact"}, trows)
	for _, ext := range []string{".png", ".svg"} {
		if err := chart.Lines(w.path(ext), fmt.Sprintf("%d-level meters: L1 error of the private histogram", k), "ε", "L1 error", series, true); err != nil {
			return err
		}
	}
	w.printf("![power](%s.png)\n\n", w.name)
	return nil
}
