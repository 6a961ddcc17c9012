package compose

import (
	"os"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
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

// FuzzUnappend: no log makes Unappend panic, and what it reads back
// appends again to a log with the same releases.
func FuzzUnappend(f *testing.F) {
	ch, _ := markov.New(nil, [][]float64{{0.9, 0.1}, {0.2, 0.8}}, markov.InitStationary, nil)
	cl, _ := markov.NewClass(ch.States, ch)
	lg, out, _, err := Append(nil, "d", cl, &record.Release{Mechanism: MQMExact, Epsilon: 0.5, EpsilonExact: "1/2", Class: cl.Hash(),
		Segments: []record.Segment{{Series: "p1", First: 1, Last: 10}, {Series: "p2", First: 3, Last: 8}}})
	if err != nil {
		f.Fatal(err)
	}
	_, out, _, err = Append(lg, "d", cl, &record.Release{Mechanism: MQMApprox, Epsilon: 0.25, Class: cl.Hash(),
		Segments: []record.Segment{{Series: "p1", First: 1, Last: 10, Quilt: &Quilt{A: 2, B: 2}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(out))
	f.Fuzz(func(t *testing.T, s string) {
		var lg Log
		if strictjson.Decode([]byte(s), "fuzz.json", &lg) != nil {
			return
		}
		rs, err := Unappend(&lg, "fuzz.json")
		if err != nil {
			return
		}
		var again *Log
		n := 0
		for _, r := range rs {
			for _, rec := range r.Records {
				n += len(rec.Segments)
				if again, _, _, err = Append(again, r.Dataset, r.Class, rec); err != nil {
					return // a record no rule composes: Append keeps none
				}
			}
		}
		if n != len(lg.Releases) || len(again.Releases) != n {
			t.Fatalf("%d entries in, %d segments read back, %d appended", len(lg.Releases), n, len(again.Releases))
		}
	})
}
