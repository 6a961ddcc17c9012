package release

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CSVOptions says how to read a data file.
type CSVOptions struct {
	SeriesCol, TimeCol, StateCol string  // column names in the header
	Gap                          float64 // split a series where the time step exceeds Gap (0: never)
	KeepTimes                    bool    // fill Data.Times (costs 8 bytes per entry)
}

// DefaultCSV is the long format series,time,state.
var DefaultCSV = CSVOptions{SeriesCol: "series", TimeCol: "time", StateCol: "state"}

// Data is a set of independent categorical sequences.
type Data struct {
	States []string // state names, in order of first appearance
	Seqs   [][]int  // indices into States
	// Series names the series each sequence came from ("" for a plain
	// file or a file without a series column); a series split at gaps
	// gives several sequences with the same name.
	Series []string
	// Times holds each entry's time when the file has a time column and
	// CSVOptions.KeepTimes is set (nil otherwise).
	Times [][]float64
}

// Observations is the total number of entries.
func (d *Data) Observations() int {
	n := 0
	for _, s := range d.Seqs {
		n += len(s)
	}
	return n
}

// ReadData reads sequences from r (gzip-compressed input is detected by its
// magic bytes). Two layouts are accepted:
//
//   - long format with a header naming opts.StateCol and optionally
//     opts.SeriesCol and opts.TimeCol; rows of one series must have
//     strictly increasing times, and a series is split where the time step
//     exceeds opts.Gap (when Gap > 0);
//   - a plain file with one state per line (optionally a first line equal
//     to opts.StateCol), read as one sequence.
//
// Errors name the file and line. Empty input and empty states are errors.
func ReadData(r io.Reader, name string, opts CSVOptions) (*Data, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer gz.Close()
		br = bufio.NewReaderSize(gz, 1<<16)
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	first, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty data file", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, csvErr(err))
	}
	header := slices.Clone(first)
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.TrimSpace(h)] = i
	}
	d := &Data{}
	states := map[string]int{}
	intern := func(s string, line int) (int, error) {
		s = strings.TrimSpace(s)
		if s == "" {
			return 0, fmt.Errorf("%s:%d: empty state", name, line)
		}
		if v, ok := states[s]; ok {
			return v, nil
		}
		states[s] = len(d.States)
		d.States = append(d.States, s)
		return states[s], nil
	}
	sc, hasState := idx[opts.StateCol]
	if !hasState {
		if len(header) != 1 {
			return nil, fmt.Errorf("%s:1: header %q has no column %q; name the columns with the series/time/state column options", name, strings.Join(header, ","), opts.StateCol)
		}
		// plain file: one state per line, the first line is data
		seq := []int{}
		v, err := intern(header[0], 1)
		if err != nil {
			return nil, err
		}
		seq = append(seq, v)
		for {
			rec, line, err := next(cr, name)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if len(rec) != 1 {
				return nil, fmt.Errorf("%s:%d: %d fields in a one-state-per-line file", name, line, len(rec))
			}
			v, err := intern(rec[0], line)
			if err != nil {
				return nil, err
			}
			seq = append(seq, v)
		}
		d.Seqs = [][]int{seq}
		d.Series = []string{""}
		return d, nil
	}
	serC, hasSeries := idx[opts.SeriesCol]
	timeC, hasTime := idx[opts.TimeCol]
	need := sc
	if hasSeries {
		need = max(need, serC)
	}
	if hasTime {
		need = max(need, timeC)
	}
	type open struct {
		seq   int // index into d.Seqs of the current segment
		last  float64
		lastL int
	}
	series := map[string]*open{}
	for {
		rec, line, err := next(cr, name)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) <= need {
			missing := opts.StateCol
			switch {
			case len(rec) <= sc:
			case hasSeries && len(rec) <= serC:
				missing = opts.SeriesCol
			default:
				missing = opts.TimeCol
			}
			return nil, fmt.Errorf("%s:%d: missing field %q (%d fields, header has %d)", name, line, missing, len(rec), len(header))
		}
		v, err := intern(rec[sc], line)
		if err != nil {
			return nil, err
		}
		key := ""
		if hasSeries {
			key = rec[serC]
		}
		t := math.NaN()
		if hasTime {
			t, err = strconv.ParseFloat(strings.TrimSpace(rec[timeC]), 64)
			if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
				return nil, fmt.Errorf("%s:%d: field %q: %q is not a finite number", name, line, opts.TimeCol, rec[timeC])
			}
		}
		o := series[key]
		switch {
		case o == nil:
			o = &open{seq: len(d.Seqs)}
			series[key] = o
			d.Seqs = append(d.Seqs, nil)
			d.Series = append(d.Series, key)
		case hasTime && !(t > o.last):
			return nil, fmt.Errorf("%s:%d: time %v of series %q does not increase (line %d has %v)", name, line, t, key, o.lastL, o.last)
		case hasTime && opts.Gap > 0 && t-o.last > opts.Gap:
			o.seq = len(d.Seqs)
			d.Seqs = append(d.Seqs, nil)
			d.Series = append(d.Series, key)
		}
		o.last, o.lastL = t, line
		d.Seqs[o.seq] = append(d.Seqs[o.seq], v)
		if hasTime && opts.KeepTimes {
			for len(d.Times) < len(d.Seqs) {
				d.Times = append(d.Times, nil)
			}
			d.Times[o.seq] = append(d.Times[o.seq], t)
		}
	}
	if len(d.Seqs) == 0 {
		return nil, fmt.Errorf("%s: no data rows after the header", name)
	}
	return d, nil
}

// next reads one record with its line number; errors other than io.EOF
// name the file and line.
func next(cr *csv.Reader, name string) ([]string, int, error) {
	rec, err := cr.Read()
	if err == io.EOF {
		return nil, 0, err
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", name, csvErr(err))
	}
	line, _ := cr.FieldPos(0)
	return rec, line, nil
}

func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}

// Align re-indexes the data onto the given state order (a class's states).
// A state in the data that the class does not know is an error.
func (d *Data) Align(states []string, name string) error {
	pos := map[string]int{}
	for i, s := range states {
		pos[s] = i
	}
	remap := make([]int, len(d.States))
	for i, s := range d.States {
		j, ok := pos[s]
		if !ok {
			return fmt.Errorf("%s: state %q is not in the class (class states: %s)", name, s, strings.Join(states, ", "))
		}
		remap[i] = j
	}
	for _, seq := range d.Seqs {
		for t, v := range seq {
			seq[t] = remap[v]
		}
	}
	d.States = slices.Clone(states)
	return nil
}
