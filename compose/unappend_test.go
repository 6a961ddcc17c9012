package compose

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// Unappend gives back exactly the records Append was given (what a log
// keeps of them: mechanism, ε as typed, Θ, segments with their quilts),
// dataset by dataset in order, on random histories of several datasets.
func TestUnappendInvertsAppend(t *testing.T) {
	ch, _ := markov.New(nil, [][]float64{{0.9, 0.1}, {0.2, 0.8}}, markov.InitStationary, nil)
	cl, _ := markov.NewClass(ch.States, ch)
	rng := rand.New(rand.NewPCG(3, 4))
	kinds := []Kind{MQMExact, MQMApprox, DP}
	for h := range 40 {
		var lg *Log
		want := map[string][]*record.Release{}
		var order []string
		for range 1 + rng.IntN(6) {
			ds := []string{"a", "b", "c"}[rng.IntN(3)]
			rec := &record.Release{Mechanism: kinds[rng.IntN(3)], Epsilon: []float64{0.5, 1.0 / 3, 0.1}[rng.IntN(3)], Class: cl.Hash()}
			if rec.Epsilon == 1.0/3 {
				rec.EpsilonExact = "1/3"
			}
			for _, s := range []string{"", "p1", "p2/x"}[:1+rng.IntN(3)] {
				first := 1 + rng.IntN(20)
				sg := record.Segment{Series: s, First: first, Last: first + rng.IntN(30)}
				if rec.Mechanism == MQMApprox && rng.IntN(2) == 0 {
					sg.Quilt = &Quilt{A: 1 + rng.IntN(3), B: 1 + rng.IntN(3)}
				}
				rec.Segments = append(rec.Segments, sg)
			}
			var try *Log // Append edits its log: try on a copy
			if lg != nil {
				try = &Log{Datasets: slices.Clone(lg.Datasets), Releases: slices.Clone(lg.Releases)}
			}
			next, _, _, err := Append(try, ds, cl, rec)
			if errors.Is(err, ErrNoRule) {
				continue // Append keeps no record that composes with no rule
			}
			if err != nil {
				t.Fatal(err)
			}
			lg = next
			if want[ds] == nil {
				order = append(order, ds)
			}
			want[ds] = append(want[ds], rec)
		}
		got, err := Unappend(lg, "the log")
		if err != nil {
			t.Fatalf("history %d: %v", h, err)
		}
		if len(got) != len(order) {
			t.Fatalf("history %d: %d datasets, want %d", h, len(got), len(order))
		}
		for i, g := range got {
			if g.Dataset != order[i] || g.Class.Hash() != cl.Hash() || !reflect.DeepEqual(g.Records, want[order[i]]) {
				t.Fatalf("history %d: dataset %q: got %+v, want %q %+v", h, g.Dataset, g.Records, order[i], want[order[i]])
			}
		}
	}
}

// A log not written by Append is refused with the entry named.
func TestUnappendRefusesOtherLogs(t *testing.T) {
	ch, _ := markov.New(nil, [][]float64{{0.9, 0.1}, {0.2, 0.8}}, markov.InitStationary, nil)
	cl, _ := markov.NewClass(ch.States, ch)
	rec := &record.Release{Mechanism: MQMExact, Epsilon: 0.5, Class: cl.Hash(), Segments: []record.Segment{{First: 1, Last: 10}}}
	good, _, _, err := Append(nil, "d", cl, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Log)
		want string
	}{
		{func(l *Log) { l.Releases[0].Name = "mine" }, `releases[0] "mine": not written by puff release --log`},
		{func(l *Log) { l.Releases[0].End = 9 }, "not written by puff release --log"},
		{func(l *Log) { l.Dependence = []LogDependence{{Releases: []string{"x", "y"}, Delta: 0.1}} }, "dependence"},
		{func(l *Log) { l.Datasets[0].Class = []byte(`"class.json"`) }, "no inline class"},
		{func(l *Log) { l.Releases[0].Theta = "sha256:00" }, "calibrated for Θ"},
		{func(l *Log) { l.Releases = nil }, "records no releases"},
	} {
		l := *good
		l.Datasets = append([]LogDataset(nil), good.Datasets...)
		l.Releases = append([]Release(nil), good.Releases...)
		c.edit(&l)
		if _, err := Unappend(&l, "the log"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
}
