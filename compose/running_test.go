package compose

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/record"
)

func runningClass(t *testing.T, P [][]float64, init markov.InitKind) *markov.Class {
	t.Helper()
	ch, err := markov.New([]string{"a", "b"}, P, init, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := markov.NewClass(ch.States, ch)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// randomRecord draws a record: mixed mechanisms, series, segments that
// repeat, overlap or lie apart, quilts, σ, streams, and rarely a record
// the running state must hand back to Records (a [0, 0] segment, two
// entries of one name).
func randomRecord(rng *rand.Rand, hash string) *record.Release {
	kinds := []mechanism.Name{mechanism.Exact, mechanism.Exact, mechanism.Approx, mechanism.Approx, mechanism.DP, mechanism.GroupDP, mechanism.GK16}
	epss := []float64{0.1, 0.2, 0.25, 0.3, 0.5, 1, 0.01}
	r := &record.Release{Mechanism: kinds[rng.IntN(len(kinds))], Epsilon: epss[rng.IntN(len(epss))], Class: hash, Query: "counts"}
	if rng.IntN(3) > 0 {
		r.Sigma = []float64{0.5, 2, 10, 40}[rng.IntN(4)]
	}
	if rng.IntN(12) == 0 {
		r.Stream = true
		if rng.IntN(2) == 0 {
			r.Mechanism = mechanism.Exact
		} else {
			r.Mechanism = mechanism.Pufferfish
		}
		return r
	}
	series := []string{"", "x", "y", "z"}
	for range 1 + rng.IntN(3) {
		first := []int{1, 1, 5, 12, 20, 40}[rng.IntN(6)]
		last := first + []int{0, 3, 5, 9}[rng.IntN(4)]
		sg := record.Segment{Series: series[rng.IntN(len(series))], First: first, Last: last, Readings: last - first + 1}
		if rng.IntN(3) > 0 {
			sg.Quilt = &Quilt{A: 1 + rng.IntN(4), B: 1 + rng.IntN(4)}
		}
		if rng.IntN(150) == 0 {
			sg.First, sg.Last = 0, 0
		}
		r.Segments = append(r.Segments, sg)
	}
	if rng.IntN(150) == 0 {
		r.Segments = append(r.Segments, r.Segments[0])
	}
	return r
}

// TestRunningEqualsRecords: on random histories, the running state's
// verdict after every record is Records' over all records — the same
// exact rational, rule and theorem — and when the state cannot answer,
// Records has no rule either (or the state was handed to Records for
// good). Records is the oracle: it composes the records from scratch with
// the Ledger's rules. The state goes through JSON at every step, as a
// store keeps it.
func TestRunningEqualsRecords(t *testing.T) {
	classes := []*markov.Class{
		runningClass(t, [][]float64{{0.9, 0.1}, {0.3, 0.7}}, markov.InitStationary),
		runningClass(t, [][]float64{{0.6, 0.4}, {0.6, 0.4}}, markov.InitStationary), // independent records: the dp sweep
		runningClass(t, [][]float64{{0.8, 0.2}, {0.4, 0.6}}, markov.InitAny),
	}
	n := 300
	if testing.Short() {
		n = 60
	}
	rules := map[string]int{}
	fulls := 0
	for h := range n {
		rng := rand.New(rand.NewPCG(uint64(h), 24))
		class := classes[h%len(classes)]
		var recs []*record.Release
		var run Running
		store := map[string][]byte{} // chains, as JSON
		for range 1 + rng.IntN(14) {
			rec := randomRecord(rng, class.Hash())
			want, werr := Records(class, append(recs[:len(recs):len(recs)], rec))
			// the state, read back from JSON
			var next Running
			js, _ := json.Marshal(run)
			if err := json.Unmarshal(js, &next); err != nil {
				t.Fatal(err)
			}
			chains := map[string]*Chain{}
			for _, name := range Touches(rec) {
				if b, ok := store[name]; ok {
					var c Chain
					if err := json.Unmarshal(b, &c); err != nil {
						t.Fatal(err)
					}
					chains[name] = &c
				}
			}
			aerr := next.Add(class, rec, chains)
			if aerr != nil && !errors.Is(aerr, ErrFull) {
				t.Fatal(aerr)
			}
			if werr != nil {
				// the ledger refuses the record: nothing is kept
				continue
			}
			recs = append(recs, rec)
			if aerr != nil {
				run.Full, run.Records = true, run.Records+1
				fulls++
				continue
			}
			var bests []Best
			for name, b := range store {
				if chains[name] == nil {
					var c Chain
					json.Unmarshal(b, &c)
					c.Best.Chain = name
					bests = append(bests, c.Best)
				}
			}
			for name, c := range chains {
				b, _ := json.Marshal(c)
				store[name] = b
				c.Best.Chain = name
				bests = append(bests, c.Best)
			}
			run = next
			got, gerr := run.Verdict(class, bests)
			switch {
			case errors.Is(gerr, ErrFull) && !run.Full:
				t.Fatalf("history %d, %d records: the state gave up but Records answers %v by %s", h, len(recs), want.Epsilon, want.Rule)
			case gerr != nil && !errors.Is(gerr, ErrFull):
				t.Fatalf("history %d: %v", h, gerr)
			case gerr == nil:
				if got.Epsilon.Cmp(want.Epsilon) != 0 || got.Rule != want.Rule || got.Theorem != want.Theorem || got.Float() != want.Float() {
					t.Fatalf("history %d, %d records: running %v by %s (%s), Records %v by %s (%s)", h, len(recs), got.Epsilon, got.Rule, got.Theorem, want.Epsilon, want.Rule, want.Theorem)
				}
				rules[got.Rule]++
			}
		}
	}
	t.Logf("verdicts compared by rule: %v; histories handed to Records: %d", rules, fulls)
	for _, r := range []string{"single", "mqm-sequential", "mqm-parallel", "mqmapprox-far", "dp", "dp-group", LeakageRule} {
		if rules[r] == 0 && !testing.Short() {
			t.Errorf("no history ended with rule %s: the generator misses it", r)
		}
	}
}
