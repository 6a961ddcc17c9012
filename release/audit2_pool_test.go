package release

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// audit2: joint windows over two pooled series (one short, starting
// later, missing readings at window edges), uneven widths, counts and
// relative queries, adversarial chains; the exact loss of all windows by
// enumeration of the product chain (two independent series concatenated:
// the junction step's kernel has every row equal to the start law).
func TestAudit2PooledJointWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2026))
	worst := 0.0
	for trial := range 60 {
		k := 2 + trial%3/2 // mostly 2
		maxT := 8
		if k == 3 {
			maxT = 6
		}
		var P [][]float64
		switch trial % 6 {
		case 0: // anti-correlated
			P = [][]float64{{0.05, 0.95}, {0.95, 0.05}}
		case 1: // sticky
			P = [][]float64{{0.97, 0.03}, {0.02, 0.98}}
		case 2: // zeros
			P = [][]float64{{0.6, 0.4}, {1, 0}}
		case 3: // periodic / cyclic
			P = [][]float64{{0, 1}, {1, 0}}
		default:
			P = randomKernel(rng, 2, trial%2 == 0)
		}
		if k == 3 {
			switch trial % 4 {
			case 0:
				P = [][]float64{{0.02, 0.96, 0.02}, {0.02, 0.02, 0.96}, {0.96, 0.02, 0.02}}
			case 1:
				P = [][]float64{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}}
			default:
				P = randomKernel(rng, 3, true)
			}
		}
		states := make([]string, k)
		for i := range states {
			states[i] = fmt.Sprint(i)
		}
		init := []markov.InitKind{markov.InitStationary, markov.InitGiven, markov.InitAny}[trial%3]
		var q []float64
		var starts [][]float64
		if init == markov.InitGiven {
			q = make([]float64, k)
			q[trial%k] = 1
			starts = [][]float64{q}
		}
		ch, err := markov.New(states, P, init, q)
		if err != nil {
			t.Logf("trial %d: %v", trial, err)
			continue
		}
		switch init {
		case markov.InitStationary:
			pi, err := ch.Initial()
			if err != nil {
				continue
			}
			starts = [][]float64{pi}
		case markov.InitAny:
			for i := range k {
				e := make([]float64, k)
				e[i] = 1
				starts = append(starts, e)
			}
		}
		class, _ := markov.NewClass(states, ch)
		// series a: span TA, series b: span TB starting at hour sB
		TA := 2 + rng.IntN(maxT-3)
		TB := 1 + rng.IntN(maxT-TA)
		sB := rng.IntN(TA + 2)
		missA := -1
		if TA > 2 && trial%2 == 1 {
			missA = 1 + rng.IntN(TA-2)
		}
		width := 1 + rng.IntN(3)
		query := []string{"counts", "relative"}[trial%2]
		eps := []float64{1, 0.5, 2}[trial%3]
		var b strings.Builder
		b.WriteString("s,t,state\n")
		for i := range TA {
			if i == missA {
				continue
			}
			fmt.Fprintf(&b, "a,%d,%d\n", i*3600, rng.IntN(k))
		}
		for i := range TB {
			fmt.Fprintf(&b, "b,%d,%d\n", (sB+i)*3600, rng.IntN(k))
		}
		d, err := reading.ReadData(strings.NewReader(b.String()), "w.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", StateCol: "state", States: states, Step: 3600})
		if err != nil {
			t.Fatal(err)
		}
		wr, err := releaseWindows(d, class, false, Options{Epsilon: eps, Method: mechanism.Exact, Query: query}, time.Duration(width)*time.Hour, time.UTC)
		if err != nil {
			t.Logf("trial %d: %v", trial, err)
			continue
		}
		// positions: a at 0..TA-1 (hour i), b at TA..TA+TB-1 (hour sB+i)
		T := TA + TB
		hour := make([]int, T)
		obs := make([]bool, T)
		for i := range TA {
			hour[i], obs[i] = i, i != missA
		}
		for i := range TB {
			hour[TA+i], obs[TA+i] = sB+i, true
		}
		byWin := map[int][]int{}
		var keys []int
		for p := range T {
			if !obs[p] {
				continue
			}
			w := hour[p] / width
			if _, ok := byWin[w]; !ok {
				keys = append(keys, w)
			}
			byWin[w] = append(byWin[w], p)
		}
		// sort keys
		for i := range keys {
			for j := i + 1; j < len(keys); j++ {
				if keys[j] < keys[i] {
					keys[i], keys[j] = keys[j], keys[i]
				}
			}
		}
		if len(keys) != len(wr.Windows) {
			t.Fatalf("trial %d: %d windows, want %d", trial, len(wr.Windows), len(keys))
		}
		var rels []brute.Release
		var scales []float64
		for j, w := range keys {
			s := wr.Windows[j].PerBinScale
			if query == "relative" {
				s *= float64(len(byWin[w]))
			}
			scales = append(scales, s)
			rels = append(rels, brute.Counts(k, byWin[w], s))
		}
		for _, q0 := range starts {
			steps := make([][][]float64, T-1)
			for s := range steps {
				steps[s] = P
			}
			junction := make([][]float64, k)
			for i := range junction {
				junction[i] = q0
			}
			steps[TA-1] = junction
			loss, at, a, a2, err := brute.Loss(brute.Chain{Q: q0, P: P, Steps: steps, T: T}, rels)
			if err != nil {
				t.Logf("trial %d: %v", trial, err)
				continue
			}
			worst = max(worst, loss/eps)
			if loss > eps+1e-9 {
				t.Errorf("trial %d k=%d P=%v %v start %v query %s ε=%g: a span %d (missing %d), b at %d len %d, width %dh, calibration %s σ=%g: loss %.6g > ε at pos %d (%d vs %d), scales %v",
					trial, k, P, init, q0, query, eps, TA, missA, sB, TB, width, wr.Windows[0].Calibration.Method, wr.Windows[0].usedSigma(), loss, at, a, a2, scales)
			}
		}
	}
	t.Logf("worst loss/ε %.4f", worst)
}
