package markov_test

import (
	"fmt"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// A class file: one chain with its stationary start. Errors name the file
// and the entry.
func ExampleParseClass() {
	class, err := markov.ParseClass(strings.NewReader(`{"states": ["rest", "active"],
	  "chains": [{"transition": [[0.9, 0.1], [0.3, 0.7]], "initial": "stationary"}]}`), "class.json")
	fmt.Println(class.States, len(class.Chains), err)
	_, err = markov.ParseClass(strings.NewReader(`{"chains": [{"transition": [[0.9, 0.2], [0.3, 0.7]]}]}`), "bad.json")
	fmt.Println(err)
	// Output:
	// [rest active] 1 <nil>
	// class bad.json: chains[0]: transition row 0 (state "0"): sums to 1.1, want 1 (tolerance 1e-09)
}
