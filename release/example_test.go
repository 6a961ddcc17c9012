package release_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// A private histogram of the built-in example with its audit report. Real
// releases leave Source nil (crypto/rand); a seeded source makes this
// example reproducible.
func ExampleHistogram() {
	class, _ := markov.ParseClass(release.ExampleClass(), "example class")
	opts := reading.DefaultCSV
	opts.States = class.States // the bins: declared, never read off the data
	data, _ := reading.ReadData(release.ExampleData(), "example", opts)
	r, err := release.Histogram(data, class, false, release.Options{Epsilon: 1, Method: mechanism.Exact,
		Source: rand.NewChaCha8([32]byte{1})})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d bins, σ = %.4f, L = %g, %d series with %d missing readings\n", len(r.Histogram), r.Sigma, r.Lipschitz, r.Sequences, r.Missing)
	fmt.Println(r.Guarantee)
	// Output:
	// 4 bins, σ = 48.5501, L = 2, 10 series with 30 missing readings
	// 1-Pufferfish privacy for the class (the temporal leakage bound for event-level DP releases of a chain, docs/math.md §8.6)
}
