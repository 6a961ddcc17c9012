package release

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/brute"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// At the autumn DST change in America/New_York the wall-clock hour
// 01:00–02:00 repeats, so 30-minute windows receive two parts of one
// series an hour apart. Per-window calibration (--window-calibration
// per-window) treats the two parts as independent series; the exact loss
// of all windows together, by enumeration, against the reported total.
func TestDSTWindowsByBruteForce(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	states := []string{"0", "1"}
	P := [][]float64{{0.99, 0.01}, {0.01, 0.99}}
	ch, _ := markov.New(states, P, markov.InitStationary, nil)
	class, _ := markov.NewClass(states, ch)
	// 2026-11-01 05:00 UTC = 01:00 EDT; readings every 30 min for 2 h
	t0 := time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC).Unix()
	const T = 4
	var b strings.Builder
	b.WriteString("s,t,state\n")
	for i := range T {
		fmt.Fprintf(&b, "a,%d,%d\n", t0+int64(i)*1800, i%2)
	}
	d, err := reading.ReadData(strings.NewReader(b.String()), "w.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", StateCol: "state", States: states, Step: 1800})
	if err != nil {
		t.Fatal(err)
	}
	for _, per := range []bool{true, false} {
		wr, err := releaseWindows(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, PerWindow: per}, 30*time.Minute, ny)
		if err != nil {
			t.Fatal(err)
		}
		if len(wr.Windows) != 2 {
			t.Fatalf("%d windows, want 2 (01:00 and 01:30 wall clock, each twice)", len(wr.Windows))
		}
		pi, _ := ch.Initial()
		rels := []brute.Release{brute.Counts(2, []int{0, 2}, wr.Windows[0].PerBinScale), brute.Counts(2, []int{1, 3}, wr.Windows[1].PerBinScale)}
		loss, _, _, _, err := brute.Loss(brute.Chain{Q: pi, P: P, T: T}, rels)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("per-window %v: windows %s %s; exact loss %.4f, reported total %.4f (%s)", per, wr.Windows[0].Start, wr.Windows[1].Start, loss, wr.Total.Float(), wr.Total.Rule)
		if loss > wr.Total.Float()+1e-9 {
			t.Errorf("per-window %v: loss %.6g > reported total %.6g (%s)", per, loss, wr.Total.Float(), wr.Total.Rule)
		}
	}
}

// The same with 15-minute readings: each 30-minute window holds two parts
// of one series an hour apart. They are one piece of that series' chain
// (regression: per-window calibration took them for independent series
// and one window alone lost 1.912 at ε = 1, found by an audit).
func TestDSTWindowIsOnePieceOfTheSeries(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	states := []string{"0", "1"}
	P := [][]float64{{0.99, 0.01}, {0.01, 0.99}}
	ch, _ := markov.New(states, P, markov.InitStationary, nil)
	class, _ := markov.NewClass(states, ch)
	t0 := time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC).Unix() // 01:00 EDT
	const T = 8
	var b strings.Builder
	b.WriteString("s,t,state\n")
	for i := range T {
		fmt.Fprintf(&b, "a,%d,%d\n", t0+int64(i)*900, i%2)
	}
	d, err := reading.ReadData(strings.NewReader(b.String()), "w.csv", reading.CSVOptions{SeriesCol: "s", TimeCol: "t", StateCol: "state", States: states, Step: 900})
	if err != nil {
		t.Fatal(err)
	}
	wr, err := releaseWindows(d, class, false, Options{Epsilon: 1, Method: mechanism.Exact, PerWindow: true}, 30*time.Minute, ny)
	if err != nil {
		t.Fatal(err)
	}
	if len(wr.Windows) != 2 {
		t.Fatalf("%d windows, want 2", len(wr.Windows))
	}
	pi, _ := ch.Initial()
	for j, pos := range [][]int{{0, 1, 4, 5}, {2, 3, 6, 7}} {
		loss, _, _, _, err := brute.Loss(brute.Chain{Q: pi, P: P, T: T}, []brute.Release{brute.Counts(2, pos, wr.Windows[j].PerBinScale)})
		if err != nil {
			t.Fatal(err)
		}
		if loss > wr.Windows[j].Epsilon+1e-9 {
			t.Errorf("per-window window %s alone loses %.4f > its ε = %g: a window's two parts of one series (the wall clock repeats at the DST change) were calibrated as independent series", wr.Windows[j].Start, loss, wr.Windows[j].Epsilon)
		}
	}
}
