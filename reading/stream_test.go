package reading

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// randomCSV writes series with gaps, missing values, repeated or
// backward times, off-grid times, grouped or interleaved rows, with or
// without series and time columns.
func randomCSV(rng *rand.Rand, numeric bool) (string, CSVOptions) {
	hasSeries, hasTime := rng.IntN(4) > 0, rng.IntN(5) > 0
	var cols []string
	if hasSeries {
		cols = append(cols, "series")
	}
	if hasTime {
		cols = append(cols, "time")
	}
	vcol := "state"
	if numeric {
		vcol = "v"
	}
	cols = append(cols, vcol)
	nSeries := 1 + rng.IntN(5)
	if !hasSeries {
		nSeries = 1
	}
	type rowT struct {
		s    int
		text string
	}
	var perSeries [][]string
	unit := []float64{1, 60, 0.5, 0.1}[rng.IntN(4)]
	for s := range nSeries {
		t := float64(rng.IntN(5)) * unit
		var rows []string
		for range rng.IntN(12) + (s % 2) {
			step := 1.0
			switch x := rng.IntN(30); {
			case x < 4:
				step = float64(2 + rng.IntN(3)) // a gap
			case x == 4:
				step = 0 // repeated
			case x == 5:
				step = -1 // backwards
			case x == 6:
				step = 1.5 // off the grid
			}
			t += step * unit
			val := []string{"a", "b", "c"}[rng.IntN(3)]
			if numeric {
				val = fmt.Sprint(float64(rng.IntN(50)) / 10)
				if rng.IntN(6) == 0 {
					val = "NA"
				}
			}
			var f []string
			if hasSeries {
				f = append(f, fmt.Sprintf("s%d", s))
			}
			if hasTime {
				f = append(f, fmt.Sprint(t))
			}
			rows = append(rows, strings.Join(append(f, val), ","))
		}
		perSeries = append(perSeries, rows)
	}
	var out []string
	if rng.IntN(2) == 0 { // grouped
		for _, rs := range perSeries {
			out = append(out, rs...)
		}
	} else { // interleaved, each series in its order
		next := make([]int, nSeries)
		for {
			var open []int
			for s := range nSeries {
				if next[s] < len(perSeries[s]) {
					open = append(open, s)
				}
			}
			if len(open) == 0 {
				break
			}
			s := open[rng.IntN(len(open))]
			out = append(out, perSeries[s][next[s]])
			next[s]++
		}
	}
	opts := DefaultCSV
	opts.States = []string{"a", "b", "c"}
	if numeric {
		lv, _ := ParseLevels("0:4:3")
		opts = CSVOptions{SeriesCol: "series", TimeCol: "time", ValueCol: "v", Levels: lv}
	}
	if rng.IntN(4) == 0 {
		opts.Step = unit
	}
	return strings.Join(cols, ",") + "\n" + strings.Join(out, "\n") + "\n", opts
}

// ReadSummary (streaming) returns exactly what ReadData then Data.Summary
// return, and the same error, on random files with every kind of gap,
// missing value and error.
func TestReadSummaryEqualsReadData(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	kinds := map[string]int{}
	for i := range 4000 {
		in, opts := randomCSV(rng, i%3 == 0)
		want, wantPats, wantCounts, wantErr := summaryOfData(ReadData(strings.NewReader(in), "r.csv", opts))
		got, gotPats, gotCounts, gotErr := ReadSummaryTransitions(strings.NewReader(in), "r.csv", opts)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%q:\nstreaming error %v\nReadData error  %v", in, gotErr, wantErr)
		}
		if wantErr != nil {
			kinds[strings.SplitN(wantErr.Error(), ": ", 2)[1][:12]]++
			continue
		}
		kinds["ok"]++
		if want.Missing > 0 {
			kinds["ok with gaps"]++
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotPats, wantPats) || !reflect.DeepEqual(gotCounts, wantCounts) {
			t.Fatalf("%q:\nstreaming %+v %+v\nReadData  %+v %+v", in, got, gotPats, want, wantPats)
		}
	}
	// the cases must have been exercised
	if kinds["ok with gaps"] < 100 || kinds["ok"] < 1000 || len(kinds) < 5 {
		t.Fatalf("cases exercised: %v", kinds)
	}
}

// Grouped rows in time order keep a few runs per series, not the rows.
func TestReadSummaryKeepsRunsNotRows(t *testing.T) {
	var b strings.Builder
	b.WriteString("series,time,state\n")
	for s := range 3 {
		for j := range 10000 {
			if j == 5000 {
				continue // one gap
			}
			fmt.Fprintf(&b, "s%d,%d,%s\n", s, j*60, []string{"a", "b"}[j%2])
		}
	}
	opts := DefaultCSV
	opts.States = []string{"a", "b"}
	st := &streamState{}
	opts.stream = st
	if _, err := ReadData(strings.NewReader(b.String()), "g.csv", opts); err != nil {
		t.Fatal(err)
	}
	for _, ss := range st.series {
		if len(ss.runs) > 3 {
			t.Fatalf("series %s: %d runs for 9,999 rows with one gap", ss.name, len(ss.runs))
		}
	}
}

// benchCSV is n series × per readings of 4 states, grouped by series in
// time order, with a header (the shape of issue 27's benchmark).
func benchCSV(n, per int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	states := []string{"sleep", "sit", "walk", "run"}
	var b strings.Builder
	b.WriteString("series,time,state\n")
	for s := range n {
		x := 0
		for t := range per {
			if rng.IntN(10) == 0 {
				x = rng.IntN(4)
			}
			fmt.Fprintf(&b, "u%04d,%d,%s\n", s, t, states[x])
		}
	}
	return []byte(b.String())
}

// BenchmarkReadSummary1M streams a 10⁶-row CSV (1,000 series × 1,000
// readings, 4 states, header) into a release's summary.
func BenchmarkReadSummary1M(b *testing.B) {
	data := benchCSV(1000, 1000)
	opts := DefaultCSV
	opts.States = []string{"sleep", "sit", "walk", "run"}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ReadSummary(bytes.NewReader(data), "bench.csv", opts); err != nil {
			b.Fatal(err)
		}
	}
}
