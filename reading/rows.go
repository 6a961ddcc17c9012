package reading

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// Row is one data row as read, before its series is assembled: what a
// pipeline moves around when a series' rows are spread over files.
type Row struct {
	Series   string
	Time     float64 // seconds
	TimeText string  // the time as written
	State    int     // index into the declared states; Unknown for a missing value
	File     string
	Line     int
}

// RowStats is what reading rows counted besides the rows.
type RowStats struct {
	Clipped       int // numeric values outside the levels' bounds
	MissingValues int
	NullValues    bool // the format can hold readings without a value (Data.NullValues)
}

// ReadRows reads a long-format file (named name in errors) as ReadData
// does, and passes every data row to emit instead of assembling series.
// The states must be declared (opts.States, or opts.Levels for numeric
// readings) and the file must have a time column: rows of one series may
// then come from several files in any order (AssembleSeries orders them).
func ReadRows(r io.Reader, name string, opts CSVOptions, emit func(Row) error) (RowStats, error) {
	if opts.States == nil && opts.Levels == nil {
		return RowStats{}, errors.New("reading rows needs the declared states (the histogram's bins)")
	}
	if emit == nil {
		return RowStats{}, errors.New("reading rows needs a row function")
	}
	timed := false
	opts.rows = func(r Row) error {
		if math.IsNaN(r.Time) {
			return fmt.Errorf("%s:%d: no time column %q: rows of a series spread over files are ordered by time", r.File, r.Line, opts.TimeCol)
		}
		timed = true
		return emit(r)
	}
	d, err := ReadData(r, name, opts)
	if err != nil {
		return RowStats{}, err
	}
	if !timed && len(d.Seqs) > 0 {
		return RowStats{}, fmt.Errorf("%s: a one-state-per-line file has no times: rows of a series spread over files are ordered by time", name)
	}
	return RowStats{Clipped: d.Clipped, MissingValues: d.MissingValues, NullValues: d.NullValues}, nil
}

// SeriesStep is the smallest positive time difference between the rows of
// one series (+Inf with fewer than two distinct times); the data's step is
// the smallest over its series, as ReadData's default.
func SeriesStep(rows []Row) float64 {
	ts := make([]float64, len(rows))
	for i, r := range rows {
		ts[i] = r.Time
	}
	slices.Sort(ts)
	step := math.Inf(1)
	for j := 1; j < len(ts); j++ {
		if d := ts[j] - ts[j-1]; d > 0 {
			step = min(step, d)
		}
	}
	return step
}

// AssembleSeries orders one series' rows by time (they may come from
// several files in any order; a repeated time is an error naming both
// rows) and places them on the grid of step, as ReadData does: it returns
// the readings (Unknown for a missing value), their times (seconds) and
// their observation pattern (the chain from time 1).
func AssembleSeries(rows []Row, step float64) ([]int, []float64, mqm.Observation, error) {
	if !(step > 0) || math.IsInf(step, 0) {
		return nil, nil, mqm.Observation{}, fmt.Errorf("time step %v: want a finite number > 0", step)
	}
	rs := make([]row, len(rows))
	for i, r := range rows {
		rs[i] = row{t: r.Time, text: r.TimeText, v: r.State, file: r.File, line: r.Line, order: i}
	}
	slices.SortStableFunc(rs, func(a, b row) int {
		if c := cmpFloat(a.t, b.t); c != 0 {
			return c
		}
		if a.file != b.file {
			return strings.Compare(a.file, b.file)
		}
		return a.line - b.line
	})
	series := ""
	if len(rows) > 0 {
		series = rows[0].Series
	}
	for j := 1; j < len(rs); j++ {
		if !(rs[j].t > rs[j-1].t) {
			return nil, nil, mqm.Observation{}, fmt.Errorf("%s:%d: time %s of series %q does not increase (repeated) (%s has %s)", rs[j].file, rs[j].line, rs[j].text, series, where(rs[j], rs[j-1]), rs[j-1].text)
		}
	}
	seq, off, err := placeOne(rs, step, true, series)
	if err != nil || len(seq) == 0 {
		return nil, nil, mqm.Observation{}, err
	}
	secs := make([]float64, len(rs))
	for i, r := range rs {
		secs[i] = r.t
	}
	if off == nil {
		return seq, secs, mqm.Consecutive(1, len(seq)), nil
	}
	times := make([]int, len(off))
	for j, o := range off {
		times[j] = o + 1
	}
	ob, err := mqm.At(times)
	return seq, secs, ob, err
}
