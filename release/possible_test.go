package release

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// A class under which the data is impossible is refused (issue 39): the
// issue's class [[1,0],[0.5,0.5]] on examples/stream/day1.csv, where off
// → on happens, as a single release (read as a stream) and in windows
// (read whole, naming the reading); the bundled class passes; a fixed
// start with probability 0 on a series' first state is refused.
func TestImpossibleDataRefused(t *testing.T) {
	const file = "../examples/stream/day1.csv"
	csv := reading.CSVOptions{SeriesCol: "meter", TimeCol: "time", StateCol: "state"}
	run := func(classJSON string, width time.Duration) error {
		t.Helper()
		class, err := markov.ParseClass(strings.NewReader(classJSON), "c.json")
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = Prepare(f, "day1.csv", Request{CSV: csv, Class: class, Options: Options{Epsilon: 1, Method: mechanism.Exact}}, width)
		return err
	}
	bad := `{"states": ["off", "on"], "chains": [{"transition": [[1, 0], [0.5, 0.5]], "initial": "any"}]}`
	for _, width := range []time.Duration{0, 6 * time.Hour} {
		err := run(bad, width)
		if err == nil || !strings.Contains(err.Error(), "day1.csv: ") || !strings.Contains(err.Error(), "impossible under the class") {
			t.Fatalf("width %v: %v", width, err)
		}
		if width > 0 && !strings.Contains(err.Error(), `of series "m`) {
			t.Errorf("the error names no reading: %v", err)
		}
		for _, private := range []string{`"off"`, `"on"`, " off", " on "} {
			if strings.Contains(err.Error(), private) {
				t.Errorf("the error names a state: %v", err)
			}
		}
	}
	good, err := os.ReadFile("../examples/stream/class.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := run(string(good), 0); err != nil {
		t.Fatal(err)
	}
	if err := run(string(good), 6*time.Hour); err != nil {
		t.Fatal(err)
	}
	// the series start "on" (day1.csv's first rows): a start on "off" only
	// is impossible, one on "on" possible
	for q, want := range map[string]bool{"[1, 0]": true, "[0, 1]": false} {
		c := `{"states": ["off", "on"], "chains": [{"transition": [[0.8, 0.2], [0.1, 0.9]], "initial": ` + q + `}]}`
		err := run(c, 0)
		if want != (err != nil) || err != nil && !strings.Contains(err.Error(), "reading 1 of series") {
			t.Errorf("start %s: %v", q, err)
		}
	}
}

// Over missing steps the rule is P^g: a periodic chain (a → b → a) makes
// a, a one step apart impossible, two steps apart (one missing) possible;
// a missing value constrains nothing.
func TestImpossibleOverGaps(t *testing.T) {
	class, err := markov.ParseClass(strings.NewReader(`{"states": ["a", "b"], "chains": [{"transition": [[0, 1], [1, 0]], "initial": "any"}]}`), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Epsilon: 1, Method: mechanism.Approx}
	for _, c := range []struct {
		seq  []int
		offs []int
		ok   bool
	}{
		{[]int{0, 1, 0}, nil, true},
		{[]int{0, 0}, nil, false},
		{[]int{0, 0}, []int{0, 2}, true},
		{[]int{0, 1}, []int{0, 2}, false},
		{[]int{0, reading.Unknown, 0}, nil, true},
		{[]int{0, reading.Unknown, 1}, nil, false},
	} {
		d := &reading.Data{States: class.States, Seqs: [][]int{c.seq}, Series: []string{"s"}, Offsets: [][]int{c.offs}}
		err := checkPossible(d, class, opts)
		if c.ok != (err == nil) {
			t.Errorf("%v at %v: %v", c.seq, c.offs, err)
		}
	}
}
