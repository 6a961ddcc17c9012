package release

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// A summary built series by series and merged in any grouping releases
// exactly what the data does: the same σ, scales and sizes (only the noise
// differs).
func TestSummaryReleasesAsTheData(t *testing.T) {
	class, err := markov.ParseClass(ExampleClass(), "example")
	if err != nil {
		t.Fatal(err)
	}
	opts := reading.DefaultCSV
	opts.States = class.States
	d, err := reading.ReadData(ExampleData(), "example", opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// as a pipeline builds them: Complete from the format
	parts := []*reading.Summary{d.EmptySummary(), d.EmptySummary(), d.EmptySummary()}
	for i, sq := range d.Seqs {
		if err := parts[rng.IntN(len(parts))].AddSeries(sq, d.Observation(i)); err != nil {
			t.Fatal(err)
		}
	}
	sum := parts[0]
	for _, p := range parts[1:] {
		if err := sum.Merge(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []mechanism.Name{mechanism.Exact, mechanism.Approx, mechanism.GroupDP} {
		o := Options{Epsilon: 0.7, Method: m}
		a, err := PrepareSummary(sum, class, false, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := PrepareData(d, class, false, o, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		ra, _ := a.Draw()
		rb, _ := b.Draw()
		ja, jb := strip(t, ra), strip(t, rb)
		if ja != jb {
			t.Fatalf("%s: summary and data reports differ:\n%s\n%s", m, ja, jb)
		}
	}
	if err := sum.Merge(reading.NewSummary([]string{"x"}, nil)); err == nil {
		t.Fatal("merged summaries of different states")
	}
}

// strip is a report's JSON without its noisy values.
func strip(t *testing.T, o Output) string {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "histogram")
	delete(m, "mean")
	delete(m, "mean_estimate")
	out, _ := json.Marshal(m)
	return strings.TrimSpace(string(out))
}
