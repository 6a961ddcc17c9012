package release

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// Rows spread over files in any order, assembled per series with the
// data's step, summarise to exactly what ReadData gives on the whole file:
// numeric readings with levels, gaps, missing values, series split across
// files.
func TestRowsAssembleAsReadData(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	header := "series,time,kw\n"
	var all []string
	for s := range 40 {
		tm := 0
		for range 5 + rng.IntN(60) {
			tm += 60 * (1 + rng.IntN(2)*rng.IntN(3)) // mostly one step, sometimes gaps
			v := fmt.Sprintf("%.2f", rng.Float64()*3)
			if rng.IntN(15) == 0 {
				v = "NA"
			}
			all = append(all, fmt.Sprintf("s%02d,%d,%s\n", s, tm, v))
		}
	}
	levels, err := reading.ParseLevels("0:2:4")
	if err != nil {
		t.Fatal(err)
	}
	opts := reading.CSVOptions{SeriesCol: "series", TimeCol: "time", ValueCol: "kw", Levels: levels, States: levels.Names()}
	whole, err := reading.ReadData(strings.NewReader(header+strings.Join(all, "")), "whole.csv", opts)
	if err != nil {
		t.Fatal(err)
	}
	// three files, rows shuffled
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	files := []string{header, header, header}
	for i, r := range all {
		files[i%3] += r
	}
	bySeries := map[string][]reading.Row{}
	var stats reading.RowStats
	for i, f := range files {
		st, err := reading.ReadRows(strings.NewReader(f), fmt.Sprintf("part%d.csv", i), opts, func(r reading.Row) error {
			bySeries[r.Series] = append(bySeries[r.Series], r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		stats.Clipped += st.Clipped
		stats.MissingValues += st.MissingValues
	}
	step := math.Inf(1)
	for _, rs := range bySeries {
		step = min(step, reading.SeriesStep(rs))
	}
	sum := reading.NewSummary(levels.Names(), levels)
	sum.Step, sum.StepSource = step, whole.StepSource
	sum.Clipped, sum.MissingValues = stats.Clipped, stats.MissingValues
	for _, rs := range bySeries {
		seq, _, ob, err := reading.AssembleSeries(rs, step)
		if err != nil {
			t.Fatal(err)
		}
		if err := sum.AddSeries(seq, ob); err != nil {
			t.Fatal(err)
		}
	}
	ch, _ := markov.New(levels.Names(), [][]float64{{0.7, 0.2, 0.05, 0.05}, {0.2, 0.6, 0.1, 0.1}, {0.1, 0.2, 0.6, 0.1}, {0.05, 0.05, 0.2, 0.7}}, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	o := Options{Epsilon: 1, Method: mechanism.Exact, Query: "mean"}
	a, err := PrepareSummary(sum, class, false, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := PrepareData(whole, class, false, o, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := a.Draw()
	rb, _ := b.Draw()
	if sa, sb := strip(t, ra), strip(t, rb); sa != sb {
		t.Fatalf("rows and whole file differ:\n%s\n%s", sa, sb)
	}
	// the ledger's record, series named: the same as from the whole file
	if err := a.RecordSeries(patternsOf(whole)); err != nil || !reflect.DeepEqual(a.Record, b.Record) {
		t.Fatalf("records differ (%v):\n%+v\n%+v", err, a.Record, b.Record)
	}
	if whole.Missing() == 0 || whole.MissingValues == 0 {
		t.Fatal("the data has no gaps or missing values: the test proves little")
	}
	// a repeated time across files names both rows
	_, _, _, err = reading.AssembleSeries([]reading.Row{{Series: "x", Time: 60, TimeText: "60", State: 0, File: "a.csv", Line: 2}, {Series: "x", Time: 60, TimeText: "60", State: 1, File: "b.csv", Line: 7}}, 60)
	if err == nil || !strings.Contains(err.Error(), "b.csv:7") || !strings.Contains(err.Error(), "a.csv:2") {
		t.Fatalf("repeated time: %v", err)
	}
	if _, err := reading.ReadRows(strings.NewReader("state\na\nb\n"), "plain.csv", reading.CSVOptions{StateCol: "state", States: []string{"a", "b"}}, func(reading.Row) error { return nil }); err == nil {
		t.Fatal("a file without times was read as rows")
	}
}

// Windows from rows (SplitWindows per series, a summary per window,
// signatures for the total) release exactly what releaseWindows does on the data.
func TestWindowSummariesAsWindows(t *testing.T) {
	class, err := markov.ParseClass(ExampleClass(), "example")
	if err != nil {
		t.Fatal(err)
	}
	opts := reading.DefaultCSV
	opts.States = class.States
	opts.TimeUnit = 60
	d, err := reading.ReadData(ExampleData(), "example", opts)
	if err != nil {
		t.Fatal(err)
	}
	bySeries := map[string][]reading.Row{}
	if _, err := reading.ReadRows(ExampleData(), "example", opts, func(r reading.Row) error {
		bySeries[r.Series] = append(bySeries[r.Series], r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	width := 2 * time.Hour
	wins := map[int64]*reading.Summary{}
	sigs := map[string]*Signature{}
	whole := reading.NewSummary(d.States, d.Levels)
	whole.Step, whole.StepSource = d.Step, d.StepSource
	for _, rs := range bySeries {
		seq, secs, ob, err := reading.AssembleSeries(rs, d.Step)
		if err != nil {
			t.Fatal(err)
		}
		whole.AddSeries(seq, ob)
		parts, err := SplitWindows(seq, secs, ob, width, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		var sig Signature
		for _, p := range parts {
			if wins[p.Window] == nil {
				wins[p.Window] = d.EmptySummary() // Complete from the format, as a pipeline's
			}
			wins[p.Window].AddSeries(p.Seq, p.Ob)
			sig.Parts = append(sig.Parts, SignaturePart{Window: p.Window, First: p.Ob.Start, Last: p.Ob.End(), Pattern: reading.PatternKey(p.Ob)})
		}
		key := fmt.Sprint(sig.Parts)
		if sigs[key] == nil {
			sigs[key] = &sig
		}
		sigs[key].Series++
	}
	var list []Signature
	for _, s := range sigs {
		list = append(list, *s)
	}
	for _, c := range []struct {
		m         mechanism.Name
		perWindow bool
	}{{mechanism.Exact, false}, {mechanism.Approx, false}, {mechanism.Exact, true}, {mechanism.Approx, true}} {
		m := c.m
		o := Options{Epsilon: 1, Method: m, PerWindow: c.perWindow}
		a, err := PrepareWindowSummaries(whole, wins, list, class, false, o, width, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		b, err := PrepareData(d, class, false, o, width, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		ra, _ := a.Draw()
		rb, _ := b.Draw()
		if sa, sb := stripWindows(t, ra), stripWindows(t, rb); sa != sb {
			t.Fatalf("%s: windows from rows and from data differ:\n%s\n%s", m, sa, sb)
		}
		err = a.RecordSeries(patternsOf(d))
		switch {
		case c.perWindow && err == nil:
			t.Fatalf("%s per window: recorded series by series", m)
		case !c.perWindow && (err != nil || !reflect.DeepEqual(a.Record, b.Record)):
			t.Fatalf("%s: records differ (%v):\n%+v\n%+v", m, err, a.Record, b.Record)
		}
	}
}

func stripWindows(t *testing.T, o Output) string {
	t.Helper()
	b, _ := json.Marshal(o)
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, w := range m["windows"].([]any) {
		delete(w.(map[string]any), "histogram")
	}
	out, _ := json.Marshal(m)
	return string(out)
}

// patternsOf is each series of d with readings, as ReadSummary names it.
func patternsOf(d *reading.Data) []reading.SeriesPattern {
	var pats []reading.SeriesPattern
	for i, sq := range d.Seqs {
		if len(sq) > 0 {
			pats = append(pats, reading.SeriesPattern{Series: d.Series[i], Observation: d.Observation(i)})
		}
	}
	return pats
}
