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

func randomKernel(rng *rand.Rand, k int, sparse bool) [][]float64 {
	P := make([][]float64, k)
	for i := range P {
		P[i] = make([]float64, k)
		sum := 0.0
		for j := range P[i] {
			if sparse && j != i && rng.Float64() < 0.3 {
				continue
			}
			P[i][j] = 0.05 + rng.Float64()
			sum += P[i][j]
		}
		for j := range P[i] {
			P[i][j] /= sum
		}
	}
	return P
}

// Windows calibrated jointly (docs/math.md §4.8) are ε-Pufferfish all
// together: the exact loss of every window's histogram at the per-bin
// scales the release computed, by enumeration of every sequence, is at
// most ε — for stationary, fixed (with zeros) and "any" starts, missing
// readings, two and three states. Calibrating each window on its own
// (PerWindow) loses more than ε together, and never more than the total
// the composition rules report.
func TestJointWindowsByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 25))
	worstPer := 0.0
	for trial := range 24 {
		k := 2 + trial%2
		T := 7
		if k == 3 {
			T = 6
		}
		P := randomKernel(rng, k, trial%3 != 0 && trial%2 == 0)
		if trial%5 == 1 { // anti-correlated
			for i := range P {
				P[i] = make([]float64, k)
				P[i][(i+1)%k] = 0.85
				P[i][i] = 0.15
			}
		}
		var init markov.InitKind
		var q []float64
		var starts [][]float64
		switch trial % 3 {
		case 0:
			init = markov.InitStationary
		case 1:
			init = markov.InitGiven
			q = make([]float64, k)
			q[0] = 1
			starts = [][]float64{q}
		case 2:
			init = markov.InitAny
			starts = [][]float64{make([]float64, k), make([]float64, k)}
			starts[0][k-1] = 1
			for i := range starts[1] {
				starts[1][i] = 1 / float64(k)
			}
		}
		states := make([]string, k)
		for i := range states {
			states[i] = fmt.Sprint(i)
		}
		ch, err := markov.New(states, P, init, q)
		if err != nil {
			t.Fatal(err)
		}
		if init == markov.InitStationary {
			pi, _ := ch.Initial()
			starts = [][]float64{pi}
		}
		class, _ := markov.NewClass(states, ch)
		width := 2 + trial%2
		var missing []int
		if trial%4 == 3 {
			missing = []int{3}
		}
		var b strings.Builder
		b.WriteString("s,t,state\n")
		for i := range T {
			if len(missing) > 0 && missing[0] == i {
				continue
			}
			fmt.Fprintf(&b, "a,%d,%d\n", i*3600, rng.IntN(k))
		}
		d, err := reading.ReadData(strings.NewReader(b.String()), "w.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", StateCol: "state", States: states, Step: 3600})
		if err != nil {
			t.Fatal(err)
		}
		var widths []int
		for left := T; left > 0; left -= width {
			widths = append(widths, min(width, left))
		}
		for _, perWindow := range []bool{false, true} {
			wr, err := releaseWindows(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, PerWindow: perWindow}, time.Duration(width)*time.Hour, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			var scales []float64
			for _, w := range wr.Windows {
				scales = append(scales, w.PerBinScale)
			}
			for _, q0 := range starts {
				loss, at, a, a2, err := brute.Loss(brute.Chain{Q: q0, P: P, T: T}, brute.Windows(k, T, widths, missing, scales))
				if err != nil {
					t.Fatal(err)
				}
				if perWindow {
					worstPer = max(worstPer, loss)
					if loss > wr.Total.Float()+1e-9 {
						t.Errorf("trial %d per window: loss %.6g > reported total %.6g (%s)", trial, loss, wr.Total.Float(), wr.Total.Rule)
					}
					continue
				}
				if loss > 1+1e-9 {
					t.Errorf("trial %d (k %d, %v start %v, widths %v, missing %v): joint loss %.9g > ε = 1 at X_%d = %d vs %d; scales %v",
						trial, k, init, q0, widths, missing, loss, at+1, a, a2, scales)
				}
			}
		}
	}
	if worstPer <= 1 {
		t.Errorf("per-window calibration never lost more than ε together (worst %.4g): the check cannot tell the two apart", worstPer)
	}
}
