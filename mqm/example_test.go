package mqm_test

import (
	"fmt"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/noise"
)

// The README's library snippet (kept identical to it): σ_max for a 1-Lipschitz query on chains of
// 1,000 readings, and one private count-histogram bin (L = 2).
func ExampleScale() {
	classJSON := `{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"}]}`
	trueCounts := []float64{412, 588}
	class, _ := markov.ParseClass(strings.NewReader(classJSON), "class.json")
	r, _ := mqm.Scale(class, 1000, 1.0, mqm.Exact)    // σ_max, node, quilt
	lap := noise.NewLaplace(nil)                      // crypto/rand
	private, _ := lap.Release(trueCounts, r.Sigma, 2) // count histogram: L = 2, scale σ·L rounded up
	fmt.Println(len(private), r.Quilt)
	// Output: 2 {4 4}
}

// A series with missing readings is one chain: σ over the readings
// observed at the given times.
func ExampleScaleAt() {
	class, _ := markov.ParseClass(strings.NewReader(`{"chains": [{"transition": [[0.9, 0.1], [0.2, 0.8]], "initial": "stationary"}]}`), "c")
	full, _ := mqm.Scale(class, 200, 1, mqm.Exact)
	var times []int
	for t := 1; t <= 200; t++ {
		if t%10 != 0 { // every 10th reading missing
			times = append(times, t)
		}
	}
	ob, _ := mqm.At(times)
	gappy, _ := mqm.ScaleAt(class, ob, 1, mqm.Exact)
	fmt.Println(gappy.Sigma <= full.Sigma, ob.Gaps())
	// Output: true 19
}
