package experiment

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/plot/vg"

	"github.com/pufferfish-privacy/pufferfish/baseline"
	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/internal/progress"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// Region categories, in plot order.
const (
	gk16Fails = iota
	mqmLess
	gk16Less
)

var regionNames = []string{"GK16 does not apply", "MQM adds less noise", "GK16 adds less noise"}

// regionPoint is one (p0, p1) of the grid.
type regionPoint struct {
	p0, p1   float64
	norm     float64   // GK16 spectral norm
	gk16     []float64 // σ per ε (+Inf when inapplicable)
	mqmExact []float64
}

// runRegion is [SWC16] App. B.11 / Figure 3: for every (p0, p1) on a grid
// (p0 = P(0→0), p1 = P(1→1)), Θ = {that chain, every initial distribution},
// T = 100, which of GK16 and MQMExact adds less noise, and where GK16 does
// not apply.
func runRegion(o Options, w *writer) error {
	epss := []float64{1, 5, 10}
	T := 100
	var grid []float64
	for i := 1; i <= 99; i++ {
		grid = append(grid, float64(i)/100)
	}
	if o.Fast {
		grid = []float64{0.1, 0.3, 0.5, 0.7, 0.9}
	}
	var pts []*regionPoint
	for _, p0 := range grid {
		for _, p1 := range grid {
			pts = append(pts, &regionPoint{p0: p0, p1: p1})
		}
	}
	bar := progress.New(o.Progress, "region", len(pts))
	var mu sync.Mutex
	var firstErr error
	jobs := make(chan *regionPoint)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				err := p.compute(T, epss)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				bar.Step()
				mu.Unlock()
			}
		}()
	}
	for _, p := range pts {
		jobs <- p
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	var rows [][]string
	w.printf("## region: GK16 vs MQMExact over (p0, p1), T = %d, Θ = {one chain, every initial distribution}\n\n", T)
	w.printf("Share of the %d grid points in each region ([SWC16] Figure 3: white = GK16 fails, yellow = MQM less noise, blue = GK16 less noise):\n\n", len(pts))
	var trows [][]string
	for ei, eps := range epss {
		count := make([]int, 3)
		var xs, ys []float64
		var cats []int
		for _, p := range pts {
			c := p.category(ei)
			count[c]++
			xs, ys, cats = append(xs, p.p0), append(ys, p.p1), append(cats, c)
			rows = append(rows, []string{f4(p.p0), f4(p.p1), f4(eps), f4(p.norm), f4(p.gk16[ei]), f4(p.mqmExact[ei]), regionNames[c]})
		}
		trows = append(trows, []string{f4(eps), pct(count[gk16Fails], len(pts)), pct(count[mqmLess], len(pts)), pct(count[gk16Less], len(pts))})
		size := vg.Points(2.2)
		if o.Fast {
			size = vg.Points(12)
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := chart.Categories(w.path(fmt.Sprintf("_eps%g%s", eps, ext)), fmt.Sprintf("GK16 vs MQMExact, ε = %g, T = %d", eps, T), "p0 = P(0→0)", "p1 = P(1→1)", xs, ys, cats, regionNames, size); err != nil {
				return err
			}
		}
	}
	w.table([]string{"ε", "GK16 does not apply", "MQMExact less noise", "GK16 less noise"}, trows)
	for _, eps := range epss {
		w.printf("![region ε = %g](%s_eps%g.png)\n\n", eps, w.name, eps)
	}
	return w.csv(".csv", []string{"p0", "p1", "epsilon", "gk16_spectral_norm", "gk16_sigma", "mqm_exact_sigma", "region"}, rows)
}

func (p *regionPoint) compute(T int, epss []float64) error {
	ch, err := markov.New(nil, [][]float64{{p.p0, 1 - p.p0}, {1 - p.p1, p.p1}}, markov.InitAny, nil)
	if err != nil {
		return err
	}
	cl, err := markov.NewClass(ch.States, ch)
	if err != nil {
		return err
	}
	for _, eps := range epss {
		g, err := baseline.GK16(cl, T, eps)
		if err != nil {
			return err
		}
		p.norm = g.SpectralNorm
		p.gk16 = append(p.gk16, g.Sigma)
		r, err := mqm.Scale(cl, T, eps, mqm.Exact)
		if err != nil {
			return err
		}
		p.mqmExact = append(p.mqmExact, r.Sigma)
	}
	return nil
}

func (p *regionPoint) category(ei int) int {
	switch {
	case math.IsInf(p.gk16[ei], 1):
		return gk16Fails
	case p.mqmExact[ei] < p.gk16[ei]:
		return mqmLess
	}
	return gk16Less
}

func pct(a, n int) string { return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(n)) }
