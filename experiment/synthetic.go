package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"time"

	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/internal/progress"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// scaleOf computes σ for a 1-Lipschitz query on chains of every given
// length (the maximum over them: a pooled release must cover the worst
// chain) and the time it took. ok is false when the method does not apply.
func scaleOf(class *markov.Class, lengths []int, eps float64, method mechanism.Name) (sigma float64, ok bool, took time.Duration, err error) {
	start := time.Now()
	ls := slices.Clone(lengths)
	slices.Sort(ls)
	ls = slices.Compact(ls)
	ok = true
	for _, T := range ls {
		s, err := release.ComputeScale(class, T, eps, method)
		if err != nil {
			return 0, false, 0, err
		}
		if !s.Applicable {
			return math.Inf(1), false, time.Since(start), nil
		}
		sigma = max(sigma, *s.Sigma)
	}
	return sigma, ok, time.Since(start), nil
}

// runSynthetic is [SWC17] §5.2 / [SWC16] §5: binary chains, Θ = every chain
// with p0, p1 in [ℓ, 1−ℓ] (a grid) and every initial distribution, T = 100;
// data drawn with p0, p1 uniform on [ℓ, 1−ℓ] and q uniform on the simplex;
// the released statistic is S = the number of 1s (1-Lipschitz).
func runSynthetic(o Options, w *writer) error {
	ells := []float64{0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45}
	epss := []float64{0.2, 1, 5}
	methods := []mechanism.Name{mechanism.GroupDP, mechanism.GK16, mechanism.Approx, mechanism.Exact}
	step, reps, T := 0.01, 500, 100
	if o.Fast {
		ells, step, reps = []float64{0.2, 0.4}, 0.1, 20
	}
	if o.Reps > 0 {
		reps = o.Reps
	}
	rng, lap := rngs(o.Seed, "synthetic")
	bar := progress.New(o.Progress, "synthetic", len(ells)*len(epss))
	type cell struct {
		sigma, err float64
		ok         bool
		took       time.Duration
	}
	res := map[[3]int]cell{} // ℓ, ε, method
	var rows [][]string
	for li, ell := range ells {
		class, err := markov.BinaryInterval(ell, 1-ell, step, markov.InitAny)
		if err != nil {
			return err
		}
		for ei, eps := range epss {
			for mi, m := range methods {
				sigma, ok, took, err := scaleOf(class, []int{T}, eps, m)
				if err != nil {
					return err
				}
				c := cell{sigma: sigma, ok: ok, took: took, err: math.NaN()}
				if ok {
					sum := 0.0
					for range reps {
						S := float64(countOnes(sampleBinary(rng, ell, T)))
						out, err := lap.Release([]float64{S}, sigma, 1)
						if err != nil {
							return err
						}
						sum += math.Abs(out[0]-S) / float64(T)
					}
					c.err = sum / float64(reps)
				}
				res[[3]int{li, ei, mi}] = c
				rows = append(rows, []string{f4(ell), f4(eps), m.Title(), fmt.Sprint(ok), f4(sigma), f4(c.err), fmt.Sprintf("%.6f", took.Seconds())})
			}
			bar.Step()
		}
	}
	if err := w.csv(".csv", []string{"ell", "epsilon", "method", "applicable", "sigma", "mean_abs_error_over_T", "scale_seconds"}, rows); err != nil {
		return err
	}
	w.printf("## synthetic: binary chains, T = %d, Θ = p0, p1 ∈ [ℓ, 1−ℓ] (grid step %g) × every initial distribution, %d repetitions\n\n", T, step, reps)
	w.printf("Mean |S' − S| / T for S = the number of 1s (N/A: GK16 does not apply, spectral norm ≥ 1).\n\n")
	for ei, eps := range epss {
		w.printf("**ε = %g**\n\n", eps)
		var trows [][]string
		series := make([]chart.Series, len(methods))
		for mi, m := range methods {
			series[mi].Name = m.Title()
		}
		for li, ell := range ells {
			r := []string{f4(ell)}
			for mi := range methods {
				c := res[[3]int{li, ei, mi}]
				if c.ok {
					r = append(r, f4(c.err))
				} else {
					r = append(r, "N/A")
				}
				series[mi].X = append(series[mi].X, ell)
				series[mi].Y = append(series[mi].Y, c.err)
			}
			trows = append(trows, r)
		}
		w.table([]string{"ℓ", "GroupDP", "GK16", "MQMApprox", "MQMExact"}, trows)
		for _, ext := range []string{".png", ".svg"} {
			p := w.path(fmt.Sprintf("_eps%g%s", eps, ext))
			if err := chart.Lines(p, fmt.Sprintf("synthetic, ε = %g, T = %d", eps, T), "ℓ (Θ: p0, p1 in [ℓ, 1−ℓ])", "mean |S' − S| / T", series, true); err != nil {
				return err
			}
		}
		w.printf("![synthetic ε = %g](%s)\n\n", eps, filepath.Base(fmt.Sprintf("%s_eps%g.png", w.name, eps)))
	}
	// Table 2, column 1: scale-computation time averaged over the ℓ grid.
	w.printf("**Time to compute the scale** (mean over ℓ and ε, seconds; [SWC17] Table 2 column 1 reports MQMApprox 0.0064 s, MQMExact 1.5186 s on its machine):\n\n")
	var trow []string
	for mi := range methods {
		var sum time.Duration
		n := 0
		for li := range ells {
			for ei := range epss {
				sum += res[[3]int{li, ei, mi}].took
				n++
			}
		}
		trow = append(trow, fmt.Sprintf("%.4f", sum.Seconds()/float64(n)))
	}
	w.table([]string{"GroupDP", "GK16", "MQMApprox", "MQMExact"}, [][]string{trow})
	return nil
}

// sampleBinary draws a chain as [SWC17] §5.2 does: p0, p1 uniform on
// [ℓ, 1−ℓ], the initial distribution uniform on the simplex.
func sampleBinary(rng *rand.Rand, ell float64, T int) []int {
	p0 := ell + (1-2*ell)*rng.Float64()
	p1 := ell + (1-2*ell)*rng.Float64()
	q0 := rng.Float64() // uniform on the 1-simplex
	return markov.SampleFrom(rng, []float64{q0, 1 - q0}, [][]float64{{p0, 1 - p0}, {1 - p1, p1}}, T)
}

func countOnes(x []int) int {
	c := 0
	for _, v := range x {
		c += v
	}
	return c
}

// histError releases a relative-frequency histogram of the given counts
// (N observations) with per-bin scale σ·L, L = 2/N, and returns the L1
// error Σ_b |ĥ_b − h_b|.
func histError(lap *noise.Laplace, counts []int, N int, sigma float64) (float64, error) {
	h := make([]float64, len(counts))
	for i, c := range counts {
		h[i] = float64(c) / float64(N)
	}
	out, err := lap.Release(h, sigma, 2/float64(N))
	if err != nil {
		return 0, err
	}
	e := 0.0
	for i := range h {
		e += math.Abs(out[i] - h[i])
	}
	return e, nil
}
