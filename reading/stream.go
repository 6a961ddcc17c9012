package reading

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// Streaming: a release needs of the data only its summary (readings per
// state, observation patterns) and, for a ledger, each series' name and
// pattern. ReadSummary reads a long-format file keeping, per series, its
// times as runs of equal differences between rows on consecutive lines
// (a row whose value is missing is a reading of unknown value, placed like
// any other; docs/math.md §4.8): rows that come grouped by
// series in time order take a few runs per series, whatever their number,
// so memory grows with the number of series and gaps, not of rows. Only
// at the end, when the time step (the smallest difference over all
// series) is known, is each series placed on its grid, one at a time.

// SeriesPattern is one series as a ledger records it: its name and
// observation pattern.
type SeriesPattern struct {
	Series      string
	Observation mqm.Observation
}

// ReadSummary reads the data as ReadData does and returns its summary
// (Data.Summary of what ReadData returns) and each series' pattern (in
// ReadData's order), or ReadData's error. Without opts.Sort and
// opts.KeepTimes it streams (memory grows with the number of series and
// of irregular steps, not with the rows); with them, or for a
// one-state-per-line file, it reads the data whole.
func ReadSummary(r io.Reader, name string, opts CSVOptions) (*Summary, []SeriesPattern, error) {
	sum, pats, _, err := ReadSummaryTransitions(r, name, opts)
	return sum, pats, err
}

// ReadSummaryTransitions is ReadSummary with the transition counts
// between readings one step apart (counts[x][y]: from x to y), what
// markov.Fit counts on Data.Runs: a release that fits its class reads the
// data once.
func ReadSummaryTransitions(r io.Reader, name string, opts CSVOptions) (*Summary, []SeriesPattern, [][]float64, error) {
	if opts.Sort || opts.KeepTimes || opts.rows != nil || opts.States == nil && opts.Levels == nil {
		// undeclared states are found as rows come, and streaming counts
		// transitions in a matrix of the states known at the first row
		return summaryOfData(ReadData(r, name, opts))
	}
	st := &streamState{}
	opts.stream = st
	d, err := ReadData(r, name, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if !st.used { // a one-state-per-line file: read whole
		return summaryOfData(d, nil)
	}
	return st.finish(d, name, opts)
}

func summaryOfData(d *Data, err error) (*Summary, []SeriesPattern, [][]float64, error) {
	if err != nil {
		return nil, nil, nil, err
	}
	pats := make([]SeriesPattern, len(d.Seqs))
	for i := range d.Seqs {
		pats[i] = SeriesPattern{Series: d.Series[i], Observation: d.Observation(i)}
	}
	k := len(d.States)
	counts := make([][]float64, k)
	for i := range counts {
		counts[i] = make([]float64, k)
	}
	for _, run := range d.Runs() {
		for t := 1; t < len(run); t++ {
			counts[run[t-1]][run[t]]++
		}
	}
	return d.Summary(), pats, counts, nil
}

// streamState is what streaming keeps: every series so far.
type streamState struct {
	used    bool
	hasTime bool
	series  []*streamSeries
	index   map[string]int
	minDiff float64 // the smallest positive difference between consecutive rows of a series
	last    int     // the series of the previous row
	lastKey string
	// trans counts transitions between two readings in consecutive rows
	// of a series by the time between them (k×k, row-major): those one
	// step apart are the chain's transitions, once the step is known
	trans     map[float64][]int
	lastD     float64
	lastTrans []int
	k         int
}

// streamSeries is one series' rows: the first, then runs of rows on
// consecutive lines with equal time differences.
type streamSeries struct {
	name      string
	rows      int
	first     stepRun // the first row (n = 1, d unused)
	runs      []stepRun
	lastT     float64
	lastText  string
	lastLine  int
	readings  int         // rows, with Unknown values
	prev      int         // the state of the previous row (Unknown: missing)
	bad       error       // the first time that does not increase
	counts    map[int]int // readings of states ≥ 16 (state index → count)
	countsArr [16]int     // readings of states 0..15
}

// stepRun is n rows, each d seconds (or, without times, one row) after
// the previous row of its series, on consecutive lines from line.
type stepRun struct {
	d        float64
	n        int
	line     int
	text     string // the time of the run's first row as written
	prevLine int    // the line of the row before the run's first
}

func (ss *streamSeries) count(v int) {
	if v < len(ss.countsArr) {
		ss.countsArr[v]++
		return
	}
	if ss.counts == nil {
		ss.counts = map[int]int{}
	}
	ss.counts[v]++
}

// add is longReader.add when streaming.
func (st *streamState) add(lr *longReader, key string, v int, t float64, text string, line int) error {
	if st.index == nil {
		st.index = map[string]int{}
		st.minDiff = math.Inf(1)
		st.k = len(lr.d.States)
	}
	s, ok := st.last, st.lastKey == key && len(st.series) > 0
	if !ok {
		s, ok = st.index[key]
	}
	if !ok {
		// a copy: the key is part of the reader's block (csvfast.go),
		// which it would keep alive
		key = strings.Clone(key)
		s = len(st.series)
		st.index[key] = s
		st.series = append(st.series, &streamSeries{name: key, prev: Unknown})
	}
	if st.last != s && st.last < len(st.series) {
		// the series left keeps its last time as written: copied, so
		// that it does not keep the reader's block alive
		prev := st.series[st.last]
		prev.lastText = strings.Clone(prev.lastText)
	}
	st.last, st.lastKey = s, key
	ss := st.series[s]
	if ss.bad != nil {
		return nil // reported at the end, as ReadData does (series order)
	}
	ss.readings++
	if v != Unknown {
		ss.count(v)
	}
	if ss.rows == 0 {
		ss.first = stepRun{n: 1, line: line, text: strings.Clone(text)}
	} else {
		d := 1.0
		if lr.hasTime {
			if !(t > ss.lastT) {
				what := "does not increase"
				hint := " (give the sort option to order rows by time)"
				if t == ss.lastT {
					what, hint = "does not increase (repeated)", ""
				}
				ss.bad = fmt.Errorf("%s:%d: time %s of series %q %s (line %d has %s)%s", lr.name, line, text, key, what, ss.lastLine, ss.lastText, hint)
				return nil
			}
			d = t - ss.lastT
			st.minDiff = min(st.minDiff, d)
		}
		if v != Unknown && ss.prev != Unknown {
			if st.lastTrans == nil || st.lastD != d {
				if st.trans == nil {
					st.trans = map[float64][]int{}
				}
				tr, ok := st.trans[d]
				if !ok {
					tr = make([]int, st.k*st.k)
					st.trans[d] = tr
				}
				st.lastD, st.lastTrans = d, tr
			}
			st.lastTrans[ss.prev*st.k+v]++
		}
		if n := len(ss.runs); n > 0 {
			r := &ss.runs[n-1]
			if r.d == d && r.line+r.n == line {
				r.n++
				ss.lastT, ss.lastText, ss.lastLine, ss.prev = t, text, line, v
				ss.rows++
				return nil
			}
		}
		ss.runs = append(ss.runs, stepRun{d: d, n: 1, line: line, text: strings.Clone(text), prevLine: ss.lastLine})
	}
	ss.lastT, ss.lastText, ss.lastLine, ss.prev = t, text, line, v
	ss.rows++
	return nil
}

// finish places every series on the grid and summarises, as ReadData's
// finish and place then Data.Summary do.
func (st *streamState) finish(d *Data, name string, opts CSVOptions) (*Summary, []SeriesPattern, [][]float64, error) {
	if len(st.series) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no data rows after the header", name)
	}
	for _, ss := range st.series {
		if ss.bad != nil {
			return nil, nil, nil, ss.bad
		}
	}
	step := opts.Step
	if st.hasTime {
		d.StepSource = "given"
		if step == 0 {
			d.StepSource = "the smallest difference between consecutive times in the data"
			step = st.minDiff
			if math.IsInf(step, 1) {
				step = 1
			}
		}
		d.Step = step
	}
	sum := NewSummary(d.States, d.Levels)
	sum.Step, sum.StepSource, sum.Clipped, sum.MissingValues = d.Step, d.StepSource, d.Clipped, d.MissingValues
	sum.Complete = !d.NullValues
	var pats []SeriesPattern
	for _, ss := range st.series {
		if ss.readings == 0 {
			continue
		}
		ob, err := ss.place(name, step, st.hasTime)
		if err != nil {
			return nil, nil, nil, err
		}
		// Summary.AddSeries without the readings themselves
		for v, c := range ss.countsArr {
			if c > 0 {
				sum.Counts[v] += float64(c)
			}
		}
		for v, c := range ss.counts {
			sum.Counts[v] += float64(c)
		}
		k := PatternKey(ob)
		if p, ok := sum.Patterns[k]; ok {
			p.Series++
		} else {
			sum.Patterns[k] = &Pattern{Observation: ob, Series: 1}
		}
		if sum.Sequences == 0 || ob.Len < sum.MinLength {
			sum.MinLength = ob.Len
		}
		sum.MaxLength = max(sum.MaxLength, ob.Len)
		sum.Sequences++
		sum.Observations += ob.Len
		sum.Missing += ob.Gaps()
		pats = append(pats, SeriesPattern{Series: ss.name, Observation: ob})
	}
	if len(pats) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no data rows", name)
	}
	k := len(d.States)
	counts := make([][]float64, k)
	for i := range counts {
		counts[i] = make([]float64, k)
	}
	for diff, tr := range st.trans {
		if st.hasTime && math.Round(diff/step) != 1 {
			continue // readings further apart: no transition of the chain
		}
		for i, c := range tr {
			counts[i/k][i%k] += float64(c)
		}
	}
	return sum, pats, counts, nil
}

// place is placeOne on the runs: the same checks, in the same order, and
// the observation pattern of the rows (the chain from time 1 at the first).
func (ss *streamSeries) place(name string, step float64, hasTime bool) (mqm.Observation, error) {
	// pass 1: check the grid and find the last row's position
	pos := 0
	for _, r := range ss.runs {
		g := 1.0
		if hasTime {
			g = r.d / step
		}
		rr := math.Round(g)
		if rr < 1 || math.Abs(g-rr) > 1e-6*rr {
			return mqm.Observation{}, fmt.Errorf("%s:%d: time %s is %.6g steps of %v after the previous reading of series %q (line %d): readings must lie on a grid of that step; set the time step option", name, r.line, r.text, g, step, ss.name, r.prevLine)
		}
		if rr > MaxGap {
			return mqm.Observation{}, gapError(name, r.line, r.text, g, step, ss.name, fmt.Sprintf("line %d", r.prevLine))
		}
		// the first row k of the run with pos + k·rr + rr ≥ MaxSpan
		if float64(pos)+float64(r.n)*rr >= MaxSpan {
			k := max(0, int(math.Ceil((MaxSpan-rr-float64(pos))/rr)))
			return mqm.Observation{}, fmt.Errorf("%s:%d: series %q spans more than %d steps of %v; is the time step right?", name, r.line+k, ss.name, MaxSpan, step)
		}
		pos += int(rr) * r.n
	}
	n := ss.readings
	if pos == n-1 {
		return mqm.Consecutive(1, n), nil
	}
	// pass 2: the rows' times
	times := make([]int, 0, n)
	times = append(times, 1)
	pos = 0
	for _, r := range ss.runs {
		ir := 1
		if hasTime {
			ir = int(math.Round(r.d / step))
		}
		for range r.n {
			pos += ir
			times = append(times, pos+1)
		}
	}
	return mqm.At(times)
}
