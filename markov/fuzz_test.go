package markov

import (
	"math"
	"os"
	"strings"
	"testing"
)

// FuzzParseClass: no input makes ParseClass panic or hang, every class it
// accepts has chains whose rows are probability distributions, and the
// fast decoder agrees with strictjson wherever it decodes.
func FuzzParseClass(f *testing.F) {
	for _, p := range []string{"../examples/class.json", "../release/example/activity_class.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add(`{"binary_interval": {"lo": 0.1, "hi": 0.9, "step": 0.1}}`)
	f.Add(`{"states": ["a"], "chains": [{"transition": [[1]], "initial": [1]}]}`)
	f.Add(`{"chains": [{"transition": [[0.5, 0.5], [0, 1]], "initial": "any"}]} x`)
	f.Fuzz(func(t *testing.T, s string) {
		checkFast(t, s) // the fast decoder accepts only what strictjson decodes, identically
		c, err := ParseClass(strings.NewReader(s), "fuzz.json")
		if err != nil {
			return
		}
		for _, ch := range c.Chains {
			for _, row := range ch.P {
				sum := 0.0
				for _, v := range row {
					if v < 0 || v > 1 || math.IsNaN(v) {
						t.Fatalf("accepted entry %v", v)
					}
					sum += v
				}
				if math.Abs(sum-1) > 1e-6 {
					t.Fatalf("accepted row summing to %v", sum)
				}
			}
		}
	})
}
