package noise_test

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/noise"
)

// Release adds σ·L-scaled snapped Laplace noise to every coordinate of a
// query with Lipschitz constant L; the scale is rounded up, never down.
func ExampleLaplace_Release() {
	lap := noise.NewLaplace(nil) // crypto/rand
	counts := []float64{120, 340, 95}
	out, err := lap.Release(counts, 10.12, 2)
	fmt.Println(len(out), err, noise.ScaleFor(10.12, 2) >= 20.24)
	// Output: 3 <nil> true
}
