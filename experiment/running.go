package experiment

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/internal/progress"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/stream"
)

// runRunning compares the two ways a stream can publish the count
// histogram since its start (docs/math.md §4.12): a running stream (puff
// stream init --running, the binary tree grown by doubling) against the
// sum of the windows a plain stream releases, at the same ε and σ, on
// three meters of the chain [[0.8,0.2],[0.1,0.9]] read hourly with hourly
// windows. Both streams run through package stream (Declare, Append) with
// the experiment's seeded noise; the error of a total is its noisy value
// minus the true cumulative count, its per-bin variance over the
// repetitions and both bins is given in units of one window's variance
// V₁ = 2(2σ)², beside the formula of §4.12.
func runRunning(o Options, w *writer) error {
	T, reps := 8192, 50
	if o.Fast {
		T, reps = 64, 3
	}
	if o.Reps > 0 {
		reps = o.Reps
	}
	const eps, meters = 0.5, 3
	rng, _ := rngs(o.Seed, "running")
	ch, err := markov.New([]string{"off", "on"}, [][]float64{{0.8, 0.2}, {0.1, 0.9}}, markov.InitStationary, nil)
	if err != nil {
		return err
	}
	class, err := markov.NewClass(ch.States, ch)
	if err != nil {
		return err
	}
	// the readings: each meter's chain, one reading an hour
	truth := make([][2]float64, T) // per window, per state
	var files []string
	var b strings.Builder
	pi, _ := ch.Stationary()
	state := make([]int, meters)
	for m := range state {
		state[m] = draw(rng, pi)
	}
	chunk := min(T, 2000)
	b.WriteString("meter,time,state\n")
	for t := range T + 1 { // window T+1's readings close window T
		for m := range state {
			if t > 0 {
				state[m] = draw(rng, ch.P[state[m]])
			}
			fmt.Fprintf(&b, "m%d,%d,%s\n", m, t*3600, ch.States[state[m]])
			if t < T {
				truth[t][state[m]]++
			}
		}
		if (t+1)%chunk == 0 || t == T {
			files = append(files, b.String())
			b.Reset()
			b.WriteString("meter,time,state\n")
		}
	}
	spec := reading.Spec{SeriesCol: "meter", TimeCol: "time", StateCol: "state", Step: 3600}
	declare := func(running bool, seed uint64) (*stream.Settings, error) {
		s, err := stream.Declare(spec, "1h", eps, mechanism.Exact, "counts", class)
		if err != nil {
			return nil, err
		}
		if running {
			if err := s.SetRunning(); err != nil {
				return nil, err
			}
		}
		s.Source = seeded{rand.New(rand.NewPCG(o.Seed, 0x72756e00+seed))}
		return s, nil
	}
	plain, err := declare(false, 1)
	if err != nil {
		return err
	}
	tree, err := declare(true, 2)
	if err != nil {
		return err
	}
	bar := progress.New(o.Progress, "running", reps)
	sqTree, sqSum := make([]float64, T), make([]float64, T)
	formula := make([]float64, T)
	var v1 float64
	for range reps {
		for si, s := range []*stream.Settings{plain, tree} {
			st := s.NewState()
			var wins []stream.Window
			for i, f := range files {
				next, rel, err := s.Append(st, strings.NewReader(f), fmt.Sprint("part", i), nil)
				if err != nil {
					return err
				}
				st = next
				for _, r := range rel {
					wins = append(wins, r.Window)
				}
			}
			if len(wins) != T {
				return fmt.Errorf("%d windows released, want %d", len(wins), T)
			}
			var cum [2]float64
			var sum [2]float64
			for t, win := range wins {
				for j := range 2 {
					cum[j] += truth[t][j]
					if si == 0 {
						sum[j] += win.Histogram[j].Value
						sqSum[t] += (sum[j] - cum[j]) * (sum[j] - cum[j]) / 2
					} else {
						e := win.Running.Total[j].Value - cum[j]
						sqTree[t] += e * e / 2
					}
				}
				if si == 0 && t == 0 {
					v1 = 2 * win.NoiseScale * win.NoiseScale
				}
				if si == 1 {
					formula[t] = win.Running.Variance
				}
			}
		}
		bar.Step()
	}
	w.printf("## running: cumulative histograms of a stream, binary tree against the sum of windows\n\n")
	w.printf("Chain [[0.8,0.2],[0.1,0.9]] (stationary), %d meters read hourly, hourly windows, ε = %g for the whole stream "+
		"(σ = %.6g, the leakage bound's; one window's per-bin variance V₁ = 2(2σ)² = %.6g), %d repetitions. "+
		"**sum**: the sum of the windows a plain stream released; **tree**: a `--running` stream's total (docs/math.md §4.12). "+
		"Variances per bin, in units of V₁: *formula* is Σ_{k≤K} k² + ν(u)·h² (h = ⌊log₂ t⌋ + 1, u = t − 2^K + 1), "+
		"*measured* the mean squared error over the repetitions and both bins.\n\n",
		meters, eps, release.UsedSigma(plainBase(plain, class)), v1, reps)
	header := []string{"t", "h", "ν(u)", "tree formula", "tree measured", "sum (= t)", "sum measured", "(4/3)h³", "h²", "tree sd / window sd"}
	var rows [][]string
	var xs, yTree, ySum, yH2 []float64
	for t := 1; t <= T; t++ {
		// each epoch's first window (u = 1) and its worst (u = 2^K − 1)
		if !(t&(t-1) == 0 || (t+2)&(t+1) == 0 && t > 2 || t == 365 || t == 1000 || t == T) {
			continue
		}
		K := bits.Len(uint(t)) - 1
		h := K + 1
		u := t - 1<<K + 1
		f, mt, ms := formula[t-1]/v1, sqTree[t-1]/float64(reps)/v1, sqSum[t-1]/float64(reps)/v1
		rows = append(rows, []string{fmt.Sprint(t), fmt.Sprint(h), fmt.Sprint(bits.OnesCount(uint(u))), f4(f), f4(mt), fmt.Sprint(t), f4(ms),
			f4(4.0 / 3 * float64(h*h*h)), fmt.Sprint(h * h), f4(math.Sqrt(f))})
		xs, yTree, ySum, yH2 = append(xs, float64(t)), append(yTree, mt), append(ySum, ms), append(yH2, float64(h*h))
	}
	w.table(header, rows)
	if err := w.csv(".csv", []string{"t", "h", "nu", "tree_formula", "tree_measured", "sum_formula", "sum_measured", "four_thirds_h3", "h2", "tree_sd_ratio"}, rows); err != nil {
		return err
	}
	ss := []chart.Series{{Name: "tree (measured)", X: xs, Y: yTree}, {Name: "sum of windows (measured)", X: xs, Y: ySum}, {Name: "h²", X: xs, Y: yH2}}
	for _, ext := range []string{".png", ".svg"} {
		if err := chart.Lines(w.path(ext), "per-bin variance of the running total / one window's", "windows t", "variance / V₁", ss, true); err != nil {
			return err
		}
	}
	return nil
}

// plainBase is the calibration a stream's windows share.
func plainBase(s *stream.Settings, class *markov.Class) *release.Report {
	return release.StreamBase(class.AnyStart(), release.Options{Epsilon: s.Epsilon, Method: s.Method, Query: s.Query}, s.Scale, s.Leakage())
}

// draw samples an index from the law p.
func draw(rng interface{ Float64() float64 }, p []float64) int {
	u := rng.Float64()
	for i, x := range p {
		if u < x {
			return i
		}
		u -= x
	}
	return len(p) - 1
}
