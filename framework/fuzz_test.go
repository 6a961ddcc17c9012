package framework

import (
	"os"
	"strings"
	"testing"
)

// FuzzParse: no framework file makes Parse or ParseNetworks panic.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/flu.json", "testdata/flu_adversary.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add(`{"records": 2, "domain": [0, 1], "thetas": [{"joint": [[[0,0], 0.5], [[1,1], 0.5]]}]}`)
	f.Add(`{"domain": [0, 1], "thetas": [{"network": [{"name": "A", "cpt": [[0.5, 0.5]]}, {"name": "B", "parents": ["A"], "cpt": [[0.9, 0.1], [0.2, 0.8]]}]}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _ = Parse(strings.NewReader(s), "fuzz.json")
		_, _, _ = ParseNetworks(strings.NewReader(s), "fuzz.json")
	})
}
