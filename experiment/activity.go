package experiment

import (
	"fmt"
	"math"
	"time"

	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/internal/progress"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
)

// realMethods are the rows of [SWC17] Tables 1 and 3.
var realMethods = []mechanism.Name{mechanism.DP, mechanism.GroupDP, mechanism.GK16, mechanism.Approx, mechanism.Exact}

// runActivity is [SWC17] §5.3.1 on the UCI HAR activity labels: 30
// people, 6 activities, one label per 1.28 s. Groups are the data set's own
// train (21 people) and test (9 people) splits, and everyone. For each group
// one chain is fitted on its people's transitions (Θ = {that chain with its
// stationary start}, [SWC17]'s choice for real data), then
//   - aggregate: one relative-frequency histogram over the group (every
//     person an independent chain: σ is the maximum over their lengths, L = 2/N
//     with N the group's observations), with DP as an extra row;
//   - individual: one histogram per person (L = 2/T_p), mean L1 error.
//
// ε = 1; errors are L1 distances between the released and true relative-
// frequency histograms, averaged over repetitions.
func runActivity(o Options, w *writer) error {
	people, err := loadHAR(o.Data)
	if err != nil {
		return err
	}
	reps, eps := 200, 1.0
	if o.Fast {
		reps = 5
	}
	if o.Reps > 0 {
		reps = o.Reps
	}
	_, lap := rngs(o.Seed, "activity")
	groups := []activityGroup{{"train", nil}, {"test", nil}, {"everyone", people}}
	for _, p := range people {
		if p.split == "train" {
			groups[0].members = append(groups[0].members, p)
		} else {
			groups[1].members = append(groups[1].members, p)
		}
	}
	run := &activityRun{lap: lap, reps: reps, eps: eps, res: map[[2]int]activityResult{}}
	run.bar = progress.New(o.Progress, "activity", len(groups)*len(realMethods))
	for gi, g := range groups {
		if len(g.members) == 0 {
			continue
		}
		if err := run.group(gi, g); err != nil {
			return err
		}
	}
	return run.write(w, groups)
}

// activityGroup is a group of people of runActivity.
type activityGroup struct {
	name    string
	members []person
}

// activityResult is one method on one group.
type activityResult struct {
	agg, indi float64
	ok        bool
	took      time.Duration
}

// activityRun is what runActivity gathers over the groups, in the order
// they are computed (the noise is drawn in that order).
type activityRun struct {
	lap   *noise.Laplace
	reps  int
	eps   float64
	bar   *progress.Bar
	res   map[[2]int]activityResult // by (group, method) index
	rows  [][]string                // of the CSV
	hists []chart.Series            // of the everyone group
	notes []string
}

// group fits the chain of group gi and runs every method on it.
func (run *activityRun) group(gi int, g activityGroup) error {
	var seqs [][]int
	var lengths []int
	N := 0
	counts := make([]int, len(activityNames))
	for _, p := range g.members {
		seqs = append(seqs, p.seq)
		lengths = append(lengths, len(p.seq))
		N += len(p.seq)
		for _, a := range p.seq {
			counts[a]++
		}
	}
	// [SWC17]'s empirical matrix (no smoothing); a group in which some
	// activity is never left gets smoothing 0.01, and the table says so.
	ch, err := markov.Fit(activityNames, seqs, 0)
	if err != nil {
		if ch, err = markov.Fit(activityNames, seqs, 0.01); err != nil {
			return fmt.Errorf("group %s: %w", g.name, err)
		}
		run.notes = append(run.notes, fmt.Sprintf("group %s: an activity is never left, so its chain uses additive smoothing 0.01", g.name))
	}
	class, err := markov.NewClass(activityNames, ch)
	if err != nil {
		return err
	}
	if gi == 2 {
		truth := chart.Series{Name: "true"}
		for a, c := range counts {
			truth.X, truth.Y = append(truth.X, float64(a+1)), append(truth.Y, float64(c)/float64(N))
		}
		run.hists = append(run.hists, truth)
	}
	for mi, m := range realMethods {
		sigma, ok, took, err := scaleOf(class, lengths, run.eps, m)
		if err != nil {
			return err
		}
		r := activityResult{ok: ok, took: took, agg: math.NaN(), indi: math.NaN()}
		if ok {
			if r.agg, err = meanHistError(run.lap, counts, N, sigma, run.reps); err != nil {
				return err
			}
			if m != mechanism.DP { // [SWC17] reports DP for the aggregate task only
				if r.indi, err = run.individual(class, g, m); err != nil {
					return err
				}
			}
			if gi == 2 && (m.MQM() || m == mechanism.GroupDP) {
				if err := run.histogram(m, counts, N, sigma); err != nil {
					return err
				}
			}
		}
		run.res[[2]int{gi, mi}] = r
		run.rows = append(run.rows, []string{g.name, fmt.Sprint(len(g.members)), fmt.Sprint(N), m.Title(), fmt.Sprint(ok), f4(sigma), f4(r.agg), f4(r.indi), fmt.Sprintf("%.6f", took.Seconds())})
		run.bar.Step()
	}
	return nil
}

// individual is the mean over the group's people of the mean L1 error of
// one histogram per person under method m.
func (run *activityRun) individual(class *markov.Class, g activityGroup, m mechanism.Name) (float64, error) {
	sum := 0.0
	for _, p := range g.members {
		s, _, _, err := scaleOf(class, []int{len(p.seq)}, run.eps, m)
		if err != nil {
			return 0, err
		}
		pc := make([]int, len(activityNames))
		for _, a := range p.seq {
			pc[a]++
		}
		e, err := meanHistError(run.lap, pc, len(p.seq), s, run.reps)
		if err != nil {
			return 0, err
		}
		sum += e
	}
	return sum / float64(len(g.members)), nil
}

// histogram adds one private release of the relative-frequency histogram
// under method m to the plot.
func (run *activityRun) histogram(m mechanism.Name, counts []int, N int, sigma float64) error {
	s := chart.Series{Name: m.Title()}
	h := make([]float64, len(counts))
	for a, c := range counts {
		h[a] = float64(c) / float64(N)
	}
	out, err := run.lap.Release(h, sigma, 2/float64(N))
	if err != nil {
		return err
	}
	for a := range counts {
		s.X, s.Y = append(s.X, float64(a+1)), append(s.Y, out[a])
	}
	run.hists = append(run.hists, s)
	return nil
}

// write writes the CSV, the Markdown tables and the histogram plot.
func (run *activityRun) write(w *writer, groups []activityGroup) error {
	eps, res := run.eps, run.res
	if err := w.csv(".csv", []string{"group", "people", "observations", "method", "applicable", "sigma", "aggregate_l1_error", "individual_mean_l1_error", "scale_seconds"}, run.rows); err != nil {
		return err
	}
	w.printf("## activity: UCI HAR labels (30 people, 6 activities, 1.28 s steps), ε = %g, %d repetitions\n\n", eps, run.reps)
	w.printf("L1 error of the released relative-frequency histogram (Agg: one histogram per group; Indi: mean over the group's people). One chain fitted per group, stationary start.\n\n")
	header := []string{"method"}
	for _, g := range groups {
		header = append(header, g.name+" Agg", g.name+" Indi")
	}
	var trows [][]string
	for mi, m := range realMethods {
		r := []string{m.Title()}
		for gi := range groups {
			c := res[[2]int{gi, mi}]
			r = append(r, na(c.ok, c.agg), na(c.ok && m != mechanism.DP, c.indi))
		}
		trows = append(trows, r)
	}
	w.table(header, trows)
	for _, n := range run.notes {
		w.printf("Note: %s.\n\n", n)
	}
	w.printf("Time to compute the scale (seconds, the group's aggregate task; [SWC17] Table 2 columns 2–4 report MQMApprox 0.0028–0.0567 s and MQMExact 0.63–282 s on its machine):\n\n")
	trows = nil
	for mi, m := range realMethods {
		r := []string{m.Title()}
		for gi := range groups {
			r = append(r, fmt.Sprintf("%.4f", res[[2]int{gi, mi}].took.Seconds()))
		}
		trows = append(trows, r)
	}
	w.table([]string{"method", "train", "test", "everyone"}, trows)
	for _, ext := range []string{".png", ".svg"} {
		if err := chart.Lines(w.path("_histogram"+ext), fmt.Sprintf("everyone, ε = %g: one private release per mechanism", eps), "activity (1 walking, 2 upstairs, 3 downstairs, 4 sitting, 5 standing, 6 laying)", "relative frequency", run.hists, false); err != nil {
			return err
		}
	}
	w.printf("![activity histograms](%s_histogram.png)\n\n", w.name)
	return nil
}

// meanHistError averages histError over reps releases.
func meanHistError(lap *noise.Laplace, counts []int, N int, sigma float64, reps int) (float64, error) {
	sum := 0.0
	for range reps {
		e, err := histError(lap, counts, N, sigma)
		if err != nil {
			return 0, err
		}
		sum += e
	}
	return sum / float64(reps), nil
}

func na(ok bool, v float64) string {
	if !ok {
		return "N/A"
	}
	return f4(v)
}
