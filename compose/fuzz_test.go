package compose

import (
	"os"
	"strings"
	"testing"
)

// FuzzParseLog: no release log makes parsing or answering panic.
func FuzzParseLog(f *testing.F) {
	if b, err := os.ReadFile("testdata/releases.json"); err == nil {
		f.Add(string(b))
	}
	f.Add(`{"datasets": [{"name": "d", "length": 10, "class": {"states": ["0", "1"], "chains": [{"transition": [[0.9, 0.1], [0.2, 0.8]], "initial": [0.5, 0.5]}]}}],
	 "releases": [{"name": "a", "dataset": "d", "mechanism": "mqm-exact", "epsilon": 1, "start": 1, "end": 4},
	              {"name": "b", "dataset": "d", "mechanism": "mqm-exact", "epsilon": 1, "start": 7, "end": 10, "calibration": {"start": 7, "length": 4}}]}`)
	f.Add(`{"datasets": [{"name": "d", "length": 1000000000000000000}], "releases": [{"name": "a", "dataset": "d", "mechanism": "dp", "epsilon": 1}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLog(strings.NewReader(s), "testdata/fuzz.json", nil)
		if err != nil {
			return
		}
		for _, d := range l.Datasets() {
			_, _ = l.Guarantee(d)
		}
	})
}
