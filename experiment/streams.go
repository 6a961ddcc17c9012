package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pufferfish-privacy/pufferfish/baseline"
	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/internal/progress"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/tpl"
	"github.com/pufferfish-privacy/pufferfish/tpl/exact"
	"github.com/pufferfish-privacy/pufferfish/tpl/pairwise"
)

// streamChains are issue 28's three chains (stationary starts).
var streamChains = []struct {
	name string
	P    [][]float64
}{
	{"[[0.8,0.2],[0.1,0.9]]", [][]float64{{0.8, 0.2}, {0.1, 0.9}}},
	{"[[0.95,0.05],[0.05,0.95]]", [][]float64{{0.95, 0.05}, {0.05, 0.95}}},
	{"4 states, 0.7 diagonal", [][]float64{{.7, .1, .1, .1}, {.1, .7, .1, .1}, {.1, .1, .7, .1}, {.1, .1, .1, .7}}},
	// issue 33's chains: sticky, banded numeric levels, cyclic
	{"[[.8,.15,.05],[.1,.8,.1],[.05,.15,.8]]", [][]float64{{.8, .15, .05}, {.1, .8, .1}, {.05, .15, .8}}},
	{"banded 4 levels", normRows([][]float64{{0.6827, 0.2981, 0.0096, 0.0096}, {0.1538, 0.6827, 0.1538, 0.0096}, {0.0096, 0.1538, 0.6827, 0.1538}, {0.0096, 0.0096, 0.2981, 0.6827}})},
	{"cyclic [[.7,.25,.05],[.05,.7,.25],[.25,.05,.7]]", [][]float64{{.7, .25, .05}, {.05, .7, .25}, {.25, .05, .7}}},
}

func normRows(P [][]float64) [][]float64 {
	for _, r := range P {
		s := 0.0
		for _, x := range r {
			s += x
		}
		for j := range r {
			r[j] /= s
		}
	}
	return P
}

// runStreams compares per-bin Laplace scales of per-step one-hot
// histograms (equivalently, by docs/math.md §8.6, windowed histograms of
// any widths) at total guarantee α: [CYXX18]'s constant allocation (their
// BPL + FPL − ε), the tpl calibration (docs/math.md §8), the Markov Quilt
// Mechanism's 2σ, event-level DP (2/α, NOT private under correlation),
// group DP (2T/α), and the exact limit b* by brute force (package
// tpl/exact, one window of width T) where T is small enough.
func runStreams(o Options, w *writer) error {
	alphas := []float64{0.5, 1, 2}
	Ts := []int{10, 100, 1000, 0} // 0: an unbounded stream
	if o.Fast {
		alphas, Ts = []float64{1}, []int{10, 0}
	}
	bar := progress.New(o.Progress, "streams", len(alphas)*len(Ts)*len(streamChains))
	w.printf("## streams: per-step and windowed histograms under temporal correlation\n\n")
	w.printf("Per-bin Laplace scale b of one-hot histograms per step at total guarantee α (stationary start), by method. " +
		"TPL: [CYXX18]'s constant per-step budget ε with max_t BPL_t + FPL_t − ε = α (their finite-T recursion; Thm 10 supremum for ∞), b = 2/ε. " +
		"tpl: this repository's scalar recursion (docs/math.md §8: the pair inside the maximum), which by §8.6 also covers windowed histograms of any widths. " +
		"pairwise: the pairwise certificate (docs/math.md §8.11, best of closed-form and LP plans; never above tpl). " +
		"MQM: 2σ of the exact Markov Quilt Mechanism for T readings. DP: 2/α, event-level only (under-protects correlated readings). " +
		"Group DP: 2T/α. b*: the exact least scale by brute force (all sequences, grid supremum, docs/math.md §8.8) for one window of width T, where computable.\n\n")
	header := []string{"chain", "α", "T", "TPL (constant)", "tpl", "pairwise", "MQM 2σ", "MQM / pairwise", "DP (unsafe)", "group DP", "b* exact"}
	var rows [][]string
	series := map[string]*chart.Series{}
	var names []string
	for _, c := range streamChains {
		ch, err := markov.New(nil, c.P, markov.InitStationary, nil)
		if err != nil {
			return err
		}
		cl, err := markov.NewClass(ch.States, ch)
		if err != nil {
			return err
		}
		pi, err := ch.Stationary()
		if err != nil {
			return err
		}
		for _, a := range alphas {
			for _, T := range Ts {
				cyxx, err := calibrateCYXX(ch, T, a)
				if err != nil {
					return err
				}
				b, _, err := tpl.Calibrate(cl, T, a, nil)
				if err != nil {
					return err
				}
				bp, _, err := pairwise.Calibrate(context.Background(), cl, T, a, nil)
				if err != nil {
					return err
				}
				mqm, group := math.NaN(), math.Inf(1)
				if T > 0 {
					s, err := release.ComputeScale(cl, T, a, mechanism.Exact)
					if err != nil {
						return err
					}
					if s.Sigma != nil {
						mqm = 2 * *s.Sigma
					}
					group = 2 * baseline.GroupDP(T, a)
				}
				bstar := "—"
				if T > 0 && T <= 10 && math.Pow(float64(len(c.P)), float64(T)) <= exact.MaxSequences {
					// where the enumeration's work allows (else "—")
					if v, err := exact.Scale([]exact.Series{{P: c.P, Q: pi}}, []int{T}, a, 2/a, bp*1.01); err == nil {
						bstar = fmt.Sprintf("%.2f", v)
					}
				}
				Tname, mq, ratio, gd := fmt.Sprint(T), fmt.Sprintf("%.2f", mqm), fmt.Sprintf("%.1f×", mqm/bp), fmt.Sprintf("%.4g", group)
				if T == 0 {
					Tname, mq, ratio, gd = "∞", "—", "—", "∞"
				}
				rows = append(rows, []string{c.name, fmt.Sprint(a), Tname,
					fmt.Sprintf("%.2f", cyxx), fmt.Sprintf("%.2f", b), fmt.Sprintf("%.2f", bp), mq, ratio,
					fmt.Sprintf("%.2f", 2/a), gd, bstar})
				if a == 1 && T > 0 {
					for _, m := range []struct {
						name string
						v    float64
					}{{"tpl", b}, {"pairwise", bp}, {"MQM 2σ", mqm}, {"group DP", group}} {
						key := c.name + ", " + m.name
						if series[key] == nil {
							series[key] = &chart.Series{Name: key}
							names = append(names, key)
						}
						series[key].X = append(series[key].X, float64(T))
						series[key].Y = append(series[key].Y, m.v)
					}
				}
				bar.Step()
			}
		}
	}
	w.table(header, rows)
	if err := w.csv(".csv", []string{"chain", "alpha", "T", "tpl_constant", "tpl", "pairwise", "mqm_2sigma", "ratio", "dp", "groupdp", "bstar"}, rows); err != nil {
		return err
	}
	var ss []chart.Series
	for _, n := range names {
		ss = append(ss, *series[n])
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := chart.Lines(w.path(ext), "per-bin Laplace scale at α = 1", "T", "per-bin scale b", ss, true); err != nil {
			return err
		}
	}
	if o.Fast {
		return nil
	}
	return fittedStreams(o, w)
}

// fittedStreams is the unbounded-stream comparison on the chains fitted to
// the bundled real data (UCI HAR activities, 6 states; UCI household power
// and AMPds2 water, 51 equal-width levels over [0, max] with additive
// smoothing 0.01, as runPower), at α = 0.5: the scalar recursion, the
// pairwise bound with closed-form plans and with the LPs (Newton's
// method, docs/math.md §8.11), MQM's 2σ for 10⁶ readings, and the least
// scale an explicit output sequence allows (pairwise.LowerBound, the
// limit's lower end), with the time each bound took.
func fittedStreams(o Options, w *writer) error {
	har, err := loadHAR(o.Data)
	if err != nil {
		return err
	}
	var harSeqs [][]int
	for _, p := range har {
		harSeqs = append(harSeqs, p.seq)
	}
	power, err := loadPower(o.Data)
	if err != nil {
		return err
	}
	water, err := loadWater(o.Data)
	if err != nil {
		return err
	}
	powerSeqs, _ := levels(power, 51)
	waterSeqs, _ := levels(water, 51)
	chains := []struct {
		name   string
		states int
		seqs   [][]int
		smooth float64
	}{
		{"HAR activities (6 states)", 6, harSeqs, 0},
		{"UCI house (51 levels)", 51, powerSeqs, 0.01},
		{"AMPds2 water (51 levels)", 51, waterSeqs, 0.01},
	}
	const alpha = 0.5
	bar := progress.New(o.Progress, "streams (fitted chains)", len(chains))
	w.printf("\nFitted chains, unbounded stationary stream, α = %g: per-bin scale b (time to compute). "+
		"*limit ≥* is the least scale at which an explicit output sequence loses α (pairwise.LowerBound): no calibration of per-step releases can go below it.\n\n", alpha)
	header := []string{"chain", "tpl", "pairwise, closed form", "pairwise, LP", "MQM 2σ (T = 10⁶)", "limit ≥", "pairwise / limit", "MQM / pairwise"}
	var rows [][]string
	timed := func(f func() (float64, error)) (float64, string, error) {
		t0 := time.Now()
		v, err := f()
		return v, fmt.Sprintf("%.3g s", time.Since(t0).Seconds()), err
	}
	fmtB := func(v float64, took string) string {
		if math.IsInf(v, 1) || v == 0 {
			return "— (" + took + ")"
		}
		return fmt.Sprintf("%.2f (%s)", v, took)
	}
	ctx := context.Background()
	for _, c := range chains {
		states := make([]string, c.states)
		for i := range states {
			states[i] = fmt.Sprint(i)
		}
		ch, err := markov.Fit(states, c.seqs, c.smooth)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if ch, err = markov.New(states, ch.P, markov.InitStationary, nil); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		cl, err := markov.NewClass(states, ch)
		if err != nil {
			return err
		}
		bs, ts, err := timed(func() (float64, error) {
			b, _, err := tpl.Calibrate(cl, 0, alpha, nil)
			if errors.Is(err, tpl.ErrNoScale) {
				return math.Inf(1), nil
			}
			return b, err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		pair := func(cf bool) func() (float64, error) {
			return func() (float64, error) {
				b, _, err := pairwise.Calibrate(ctx, cl, 0, alpha, &pairwise.Options{ClosedForm: cf})
				if errors.Is(err, tpl.ErrNoScale) {
					return math.Inf(1), nil
				}
				return b, err
			}
		}
		bcf, tcf, err := timed(pair(true))
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		blp, tlp, err := timed(pair(false))
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		mqm, tm, err := timed(func() (float64, error) {
			s, err := release.ComputeScale(cl, 1_000_000, alpha, mechanism.Exact)
			if err != nil || s.Sigma == nil {
				return math.Inf(1), err
			}
			return 2 * *s.Sigma, nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		lo, tl, err := timed(func() (float64, error) { return pairwise.LowerBound(ctx, ch.P, alpha, 2) })
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		best := min(bs, bcf, blp)
		rows = append(rows, []string{c.name, fmtB(bs, ts), fmtB(bcf, tcf), fmtB(blp, tlp), fmtB(mqm, tm), fmtB(lo, tl),
			fmt.Sprintf("%.3f", best/lo), fmt.Sprintf("%.1f×", mqm/best)})
		bar.Step()
	}
	w.table(header, rows)
	return w.csv("-fitted.csv", []string{"chain", "tpl", "pairwise_closed_form", "pairwise_lp", "mqm_2sigma", "limit_lower", "pairwise_over_limit", "mqm_over_pairwise"}, rows)
}

// calibrateCYXX is the constant per-step budget of [CYXX18] (their total
// BPL + FPL − ε: the finite-T recursion, or the Thm 10 supremum for T = 0)
// turned into a per-bin scale 2/ε, by bisection on ε (rounded down, so the
// scale is rounded up).
func calibrateCYXX(ch *markov.Chain, T int, alpha float64) (float64, error) {
	loss := func(e float64) (float64, error) {
		if T == 0 {
			return tpl.LeakageCYXX(ch, []float64{e}, true)
		}
		eps := make([]float64, T)
		for i := range eps {
			eps[i] = e
		}
		return tpl.LeakageCYXX(ch, eps, false)
	}
	lo, hi := 0.0, alpha
	for hi-lo > 1e-12*alpha {
		mid := (lo + hi) / 2
		l, err := loss(mid)
		if err != nil {
			return 0, err
		}
		if l <= alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 2 / lo, nil
}
