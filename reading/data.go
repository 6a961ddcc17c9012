package reading

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// MaxSpan is the largest number of time steps one series may span (from
// its first to its last reading). The quilt search handles any span up to
// it; beyond it the time step is almost certainly wrong (--step).
const MaxSpan = 1 << 30

// maxFields is the largest number of fields a data row may have.
const maxFields = 1024

// CSVOptions says how to read a data file.
type CSVOptions struct {
	SeriesCol, TimeCol, StateCol string // column names in the header
	// Require* make a missing column an error instead of a default
	// (set for columns the user named explicitly).
	RequireSeries, RequireTime, RequireState bool
	// Delimiter separates fields (0: comma).
	Delimiter rune
	// States, when set, are the declared states in their declared order:
	// Data.States is exactly this list, and a reading of any other state
	// is an error naming its line. Without it states are listed in order
	// of first appearance, which depends on the data: callers that
	// release anything must declare them (a class's states, or --states).
	States []string
	// Step is the time resolution: readings of a series lie on a grid of
	// this step, and a difference of g+1 steps means g missing readings.
	// 0: the smallest positive difference between consecutive times of any
	// series.
	Step      float64
	KeepTimes bool // fill Data.TimeText with each reading's time as written

	// ValueCol names a column of numeric readings, discretised by Levels
	// (then the states are the level names and StateCol is not read).
	// A missing value (empty, ?, NA, NaN) is a reading of unknown value
	// (Unknown in Data.Seqs): its time is part of the observation
	// pattern, its value of no bin (docs/math.md §4.8).
	ValueCol string
	Levels   *Levels
	// TimeCol may name several columns, comma-separated ("Date,Time"),
	// joined with a space. Times are numbers (seconds, times TimeUnit) or
	// RFC 3339 timestamps, or match one of TimeFormats (Go layouts, tried
	// in order, in Location; UTC when nil).
	TimeFormats []string
	Location    *time.Location
	TimeUnit    float64 // seconds per unit of a numeric time (0: 1)
	// Sort orders each series by time instead of refusing times that go
	// backwards (repeated times are refused either way).
	Sort bool

	rows   func(Row) error // ReadRows: each data row, unassembled
	stream *streamState    // ReadSummary: each series kept as runs of steps
}

// DefaultCSV is the long format series,time,state.
var DefaultCSV = CSVOptions{SeriesCol: "series", TimeCol: "time", StateCol: "state"}

// Data is a set of independent series of categorical readings. Each series
// is one Markov chain; readings may be missing inside it (Offsets).
type Data struct {
	States []string // state names: the declared states, or first appearance
	// Seqs holds one sequence per series: its readings in time order, as
	// indices into States, or Unknown for a reading whose value is missing
	// (its time is observed; docs/math.md §4.8, "missing values").
	Seqs [][]int
	// Series names each series ("" for a plain file or a file without a
	// series column).
	Series []string
	// Offsets[s][j] is the time step of reading j of series s counted from
	// its first reading (Offsets[s][0] = 0); nil when the readings of
	// series s are consecutive. Missing steps are readings the chain runs
	// through but the data does not have.
	Offsets [][]int
	// Step is the time step used to place readings on the grid (0 when the
	// file has no time column and rows are consecutive); StepSource says
	// where it came from.
	Step       float64
	StepSource string
	// Times holds each reading's time in seconds when the file has a time
	// column (nil otherwise); TimeText the time as written, with KeepTimes.
	Times    [][]float64
	TimeText [][]string
	// Levels is the discretisation of numeric readings (nil for states);
	// Clipped counts values outside its bounds (put in the end levels) and
	// MissingValues the rows whose value was missing.
	Levels        *Levels
	Clipped       int
	MissingValues int
	// NullValues says the source can hold readings without a value
	// (numeric readings, an optional Parquet column): a property of the format
	// and options, set whether or not any value is missing, so it reveals
	// nothing. Without it every reading is in a bin and the counts sum
	// to the number of readings (docs/math.md §4.14).
	NullValues bool
	// Starts[s] is the chain time (1-based) of sequence s's first reading
	// when the sequence is a later part of its series' chain (a window);
	// nil: every sequence starts its chain.
	Starts []int
}

// Unknown marks a reading whose value is missing in Data.Seqs and Row.
// It is still a reading: the observation pattern, the number of readings
// and σ count it, so they do not depend on which values are missing
// (docs/math.md §4.8, "missing values"); no bin counts it.
const Unknown = -1

// Observations is the total number of readings (with Unknown values).
func (d *Data) Observations() int {
	n := 0
	for _, s := range d.Seqs {
		n += len(s)
	}
	return n
}

// Missing is the total number of missing time steps inside the series.
func (d *Data) Missing() int {
	n := 0
	for s := range d.Seqs {
		n += d.Observation(s).Gaps()
	}
	return n
}

// Observation says at which chain times series s was observed (its first
// reading at time 1, or at Starts[s]).
func (d *Data) Observation(s int) mqm.Observation {
	start := 1
	if d.Starts != nil {
		start = d.Starts[s]
	}
	if d.Offsets == nil || d.Offsets[s] == nil {
		return mqm.Consecutive(start, len(d.Seqs[s]))
	}
	times := make([]int, len(d.Offsets[s]))
	for j, o := range d.Offsets[s] {
		times[j] = o + start
	}
	ob, err := mqm.At(times)
	if err != nil {
		panic(err) // ReadData guarantees strictly increasing offsets
	}
	return ob
}

// Runs returns the maximal runs of consecutive known readings (pieces
// between missing readings and Unknown values), for counting transitions:
// only known readings one step apart are a transition of P.
func (d *Data) Runs() [][]int {
	var runs [][]int
	for s, seq := range d.Seqs {
		var off []int
		if d.Offsets != nil {
			off = d.Offsets[s]
		}
		from := 0
		for j := 0; j <= len(seq); j++ {
			end := j == len(seq) || seq[j] == Unknown || (j > from && off != nil && off[j] != off[j-1]+1)
			if !end {
				continue
			}
			if j > from {
				runs = append(runs, seq[from:j])
			}
			from = j
			if j < len(seq) && seq[j] == Unknown {
				from = j + 1
			}
		}
	}
	return runs
}

// ReadData reads series from r (gzip-compressed input is detected by its
// magic bytes; a UTF-8 byte-order mark is skipped). Two layouts are
// accepted:
//
//   - long format with a header naming opts.StateCol and optionally
//     opts.SeriesCol and opts.TimeCol; rows of one series must have
//     strictly increasing times, which place the readings on a grid of
//     step opts.Step (default: the smallest positive difference);
//   - a plain file with one state per line (optionally a first line equal
//     to opts.StateCol), read as one series of consecutive readings.
//
// Errors name the file and line. Empty input, empty states, a column named
// with Require* that the header lacks, undeclared states and times off the
// grid are errors.
func ReadData(r io.Reader, name string, opts CSVOptions) (*Data, error) {
	if opts.Step < 0 || math.IsNaN(opts.Step) || math.IsInf(opts.Step, 0) {
		return nil, fmt.Errorf("time step %v: want a finite number > 0 (or 0 for the smallest difference in the data)", opts.Step)
	}
	br := bufio.NewReaderSize(r, 1<<16)
	gzipped := false
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: not a readable gzip file (it starts as one): %v", name, err)
		}
		defer gz.Close()
		br = bufio.NewReaderSize(gz, 1<<16)
		gzipped = true
	}
	if magic, _ := br.Peek(4); string(magic) == parquetMagic {
		return readParquetStream(r, br, gzipped, name, opts)
	} else if isParquetName(name) {
		return nil, fmt.Errorf("%s: not a Parquet file (it does not start with %q)", name, parquetMagic)
	}
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\ufeff")) {
		br.Discard(3)
	}
	delim := opts.Delimiter
	if delim == 0 {
		delim = ','
	}
	if delim == '"' || delim == '\r' || delim == '\n' || delim == utf8.RuneError || !utf8.ValidRune(delim) {
		return nil, fmt.Errorf("delimiter %q cannot separate CSV fields", delim)
	}
	cr := newRecordReader(br, name, delim, gzipped)
	first, _, err := cr.read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty data file", name)
	}
	if err != nil {
		return nil, err
	}
	if len(first) > maxFields {
		return nil, fmt.Errorf("%s:1: %d fields in the header, at most %d are read", name, len(first), maxFields)
	}
	header := slices.Clone(first)
	d, idx, intern, hasState, err := begin(header, name, opts)
	if err != nil {
		return nil, err
	}
	if !hasState {
		if len(header) != 1 {
			return nil, fmt.Errorf("%s:1: header %q has no column %q; name the columns with the series/time/state column options", name, strings.Join(header, string(delim)), opts.StateCol)
		}
		if other := otherDelimiter(header[0], delim); other != 0 {
			return nil, fmt.Errorf("%s:1: the header %q looks delimited by %q, not %q: give the delimiter option", name, header[0], other, delim)
		}
		// plain file: one state per line, the first line is data
		seq := []int{}
		v, err := intern(header[0], 1)
		if err != nil {
			return nil, err
		}
		seq = append(seq, v)
		for {
			rec, line, err := cr.read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if len(rec) != 1 {
				return nil, fmt.Errorf("%s:%d: %d fields in a one-state-per-line file (header has 1): is the delimiter right?", name, line, len(rec))
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
	lr, err := d.newLong(name, header, idx, opts, intern)
	if err != nil {
		return nil, err
	}
	for {
		rec, line, err := cr.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := lr.record(rec, line); err != nil {
			return nil, err
		}
	}
	return lr.finish()
}

// begin checks a long-format header (or a plain file's first line) against
// the options: it returns the data with its declared states, the column
// index by name, the state interning function and whether the file has a
// state (or value) column. Shared by CSV and Parquet.
func begin(header []string, name string, opts CSVOptions) (*Data, map[string]int, func(string, int) (int, error), bool, error) {
	idx := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if j, dup := idx[h]; dup && h != "" {
			// Which of the two would be read is arbitrary: a silent
			// wrong answer when it is a column the release reads.
			return nil, nil, nil, false, fmt.Errorf("%s:1: the header names column %q twice (columns %d and %d): rename one", name, h, j+1, i+1)
		}
		idx[h] = i
	}
	d := &Data{}
	states := map[string]int{}
	for i, s := range opts.States {
		if _, dup := states[s]; dup || strings.TrimSpace(s) == "" {
			return nil, nil, nil, false, fmt.Errorf("declared states %q: each must be a distinct non-empty name", strings.Join(opts.States, ","))
		}
		states[s] = i
	}
	d.States = slices.Clone(opts.States)
	lastRaw, lastV := "", -1 // the state of the previous row, as written
	intern := func(s string, line int) (int, error) {
		if lastV >= 0 && s == lastRaw {
			return lastV, nil // a chain mostly stays: no trim, no lookup
		}
		raw := s
		s = trimSpace(s)
		if s == "" {
			return 0, fmt.Errorf("%s:%d: empty state", name, line)
		}
		if v, ok := states[s]; ok {
			lastRaw, lastV = raw, v
			return v, nil
		}
		if opts.States != nil {
			return 0, fmt.Errorf("%s:%d: state %q is not declared (declared states: %s)", name, line, s, strings.Join(opts.States, ", "))
		}
		states[s] = len(d.States)
		d.States = append(d.States, s)
		return states[s], nil
	}
	_, hasState := idx[opts.StateCol]
	if opts.ValueCol != "" {
		hasState = true // numeric readings: long format, states are the levels
		if opts.Levels != nil {
			if opts.States != nil && !slices.Equal(opts.States, opts.Levels.Names()) {
				return nil, nil, nil, false, fmt.Errorf("numeric readings: the states are the level indices 0..%d, not %q", opts.Levels.N()-1, strings.Join(opts.States, ","))
			}
			d.States = opts.Levels.Names()
		}
	}
	d.NullValues = opts.ValueCol != "" // a numeric value may be missing
	for _, req := range []struct {
		on   bool
		col  string
		flag string
	}{{opts.RequireSeries, opts.SeriesCol, "series"}, {opts.RequireTime && !strings.Contains(opts.TimeCol, ","), opts.TimeCol, "time"}, {opts.RequireState && opts.ValueCol == "", opts.StateCol, "state"}} {
		if _, ok := idx[req.col]; req.on && !ok {
			return nil, nil, nil, false, fmt.Errorf("%s:1: the header has no %s column %q (columns: %s)", name, req.flag, req.col, strings.Join(header, ", "))
		}
	}
	return d, idx, intern, hasState, nil
}

// row is one data row of a series before placement.
type row struct {
	t     float64 // seconds (NaN without a time column)
	text  string  // the time as written
	v     int     // state index, or Unknown for a missing value
	file  string
	line  int
	order int // row index within the series
}

// longReader assembles the rows of a long-format file, whatever its
// format: the columns it reads and the rows of each series so far.
type longReader struct {
	d       *Data
	name    string
	opts    CSVOptions
	header  []string
	intern  func(string, int) (int, error)
	numeric bool
	col     string // the state (or value) column
	vc      int
	serC    int
	hasSer  bool
	timeCs  []int
	hasTime bool
	need    int
	unit    float64
	loc     *time.Location
	series  map[string]int
	rows    [][]row
	parts   []string
}

func (d *Data) newLong(name string, header []string, idx map[string]int, opts CSVOptions, intern func(string, int) (int, error)) (*longReader, error) {
	lr := &longReader{d: d, name: name, opts: opts, header: header, intern: intern, numeric: opts.ValueCol != "", col: opts.StateCol, series: map[string]int{}}
	if lr.numeric {
		lr.col = opts.ValueCol
		if opts.Levels == nil {
			return nil, fmt.Errorf("numeric readings (%q) need public levels (--levels LO:HI:N or --edges): levels computed from the data would reveal it", opts.ValueCol)
		}
		if _, ok := idx[lr.col]; !ok {
			return nil, fmt.Errorf("%s:1: the header has no value column %q (columns: %s)", name, lr.col, strings.Join(header, ", "))
		}
		d.Levels = opts.Levels
	}
	lr.vc = idx[lr.col]
	lr.serC, lr.hasSer = idx[opts.SeriesCol]
	for _, tc := range strings.Split(opts.TimeCol, ",") {
		c, ok := idx[strings.TrimSpace(tc)]
		if !ok {
			if strings.Contains(opts.TimeCol, ",") {
				return nil, fmt.Errorf("%s:1: the header has no time column %q (columns: %s)", name, strings.TrimSpace(tc), strings.Join(header, ", "))
			}
			lr.timeCs = nil
			break
		}
		lr.timeCs = append(lr.timeCs, c)
	}
	lr.hasTime = len(lr.timeCs) > 0
	if opts.stream != nil {
		opts.stream.used, opts.stream.hasTime = true, lr.hasTime
	}
	lr.parts = make([]string, len(lr.timeCs))
	lr.need = lr.vc
	if lr.hasSer {
		lr.need = max(lr.need, lr.serC)
	}
	for _, c := range lr.timeCs {
		lr.need = max(lr.need, c)
	}
	lr.unit = opts.TimeUnit
	if lr.unit == 0 {
		lr.unit = 1
	}
	if !(lr.unit > 0) || math.IsInf(lr.unit, 0) {
		return nil, fmt.Errorf("time unit %v: want a finite number of seconds > 0", opts.TimeUnit)
	}
	lr.loc = opts.Location
	if lr.loc == nil {
		lr.loc = time.UTC
	}
	return lr, nil
}

// record reads one CSV record.
func (lr *longReader) record(rec []string, line int) error {
	name := lr.name
	if len(rec) > maxFields {
		return fmt.Errorf("%s:%d: %d fields, at most %d are read", name, line, len(rec), maxFields)
	}
	if len(rec) <= lr.need {
		missing := lr.col
		switch {
		case len(rec) <= lr.vc:
		case lr.hasSer && len(rec) <= lr.serC:
			missing = lr.opts.SeriesCol
		default:
			missing = lr.opts.TimeCol
		}
		return fmt.Errorf("%s:%d: missing field %q (%d fields, header has %d)", name, line, missing, len(rec), len(lr.header))
	}
	if len(rec) > len(lr.header) {
		// a field the header does not name: the row's columns are not
		// what the header says (a stray delimiter, a shifted row)
		return fmt.Errorf("%s:%d: %d fields, header has %d: a field the header does not name (a stray delimiter?)", name, line, len(rec), len(lr.header))
	}
	v, err := lr.value(rec[lr.vc], line)
	if err != nil {
		return err
	}
	key := ""
	if lr.hasSer {
		key = rec[lr.serC]
	}
	t, text := math.NaN(), ""
	if lr.hasTime {
		for i, c := range lr.timeCs {
			lr.parts[i] = trimSpace(rec[c])
		}
		if len(lr.parts) == 1 {
			text = lr.parts[0]
		} else {
			text = strings.Join(lr.parts, " ")
		}
		if t, err = lr.time(text, line); err != nil {
			return err
		}
	}
	return lr.add(key, v, t, text, line)
}

// value reads a state (or a numeric value, as its level) as written; Unknown
// for a missing numeric value.
func (lr *longReader) value(s string, line int) (int, error) {
	if !lr.numeric {
		return lr.intern(s, line)
	}
	if isMissing(s) {
		lr.d.MissingValues++
		return Unknown, nil
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%s:%d: field %q: %q is not a number (missing readings are empty, ?, NA or NaN)", lr.name, line, lr.col, s)
	}
	return lr.level(x), nil
}

// level is the level of a number (NaN: missing, Unknown).
func (lr *longReader) level(x float64) int {
	if math.IsNaN(x) {
		lr.d.MissingValues++
		return Unknown
	}
	lv, out := lr.d.Levels.Level(x)
	if out {
		lr.d.Clipped++
	}
	return lv
}

// time reads a time as written, in seconds.
func (lr *longReader) time(text string, line int) (float64, error) {
	t, err := parseTime(text, lr.opts.TimeFormats, lr.loc, lr.unit)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: field %q: %q: %v", lr.name, line, lr.opts.TimeCol, text, err)
	}
	return t, nil
}

// add adds one row: its series, state (Unknown: missing), time in seconds (NaN
// without a time column) and time as written.
func (lr *longReader) add(key string, v int, t float64, text string, line int) error {
	if !utf8.ValidString(key) {
		// a name goes into JSON (reports, compose logs, the ledger) as
		// UTF-8, where invalid bytes become U+FFFD: refused here, or a
		// log could not find the series it recorded
		return fmt.Errorf("%s:%d: series name %q is not UTF-8 text: convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)", lr.name, line, key)
	}
	if lr.opts.rows != nil {
		return lr.opts.rows(Row{Series: key, Time: t, TimeText: text, State: v, File: lr.name, Line: line})
	}
	if lr.opts.stream != nil {
		return lr.opts.stream.add(lr, key, v, t, text, line)
	}
	s, ok := lr.series[key]
	if !ok {
		s = len(lr.rows)
		lr.series[key] = s
		lr.rows = append(lr.rows, nil)
		lr.d.Series = append(lr.d.Series, key)
	}
	rs := lr.rows[s]
	if len(rs) == cap(rs) {
		// Double, where append grows large slices by 1.25: five
		// times the final size allocated and copied, which dominated
		// reading a long series.
		rs = append(make([]row, 0, 2*cap(rs)+64), rs...)
	}
	lr.rows[s] = append(rs, row{t: t, text: text, v: v, file: lr.name, line: line, order: len(rs)})
	return nil
}

// finish orders and places the series.
func (lr *longReader) finish() (*Data, error) {
	d, name, opts, rows := lr.d, lr.name, lr.opts, lr.rows
	if opts.rows != nil || opts.stream != nil {
		return d, nil
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows after the header", name)
	}
	if lr.hasTime {
		for s, rs := range rows {
			if opts.Sort {
				slices.SortStableFunc(rs, func(a, b row) int { return cmpFloat(a.t, b.t) })
			}
			for j := 1; j < len(rs); j++ {
				if !(rs[j].t > rs[j-1].t) {
					what := "does not increase"
					if rs[j].t == rs[j-1].t {
						what = "does not increase (repeated)"
					}
					hint := " (give the sort option to order rows by time)"
					if opts.Sort || rs[j].t == rs[j-1].t {
						hint = ""
					}
					return nil, fmt.Errorf("%s:%d: time %s of series %q %s (line %d has %s)%s", name, rs[j].line, rs[j].text, d.Series[s], what, rs[j-1].line, rs[j-1].text, hint)
				}
			}
		}
	}
	return d, d.place(rows, name, opts)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// parseTime reads a time in seconds: one of the layouts, a number (times
// unit), or RFC 3339; a time outside MinTime … MaxTime is an error with
// the range (times.go).
func parseTime(s string, layouts []string, loc *time.Location, unit float64) (float64, error) {
	for _, l := range layouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			if err := checkLocal(t, l, s, loc); err != nil {
				return 0, err
			}
			return unixSeconds(t)
		}
	}
	if len(layouts) > 0 {
		return 0, fmt.Errorf("matches none of the time formats %q", layouts)
	}
	if x, ok := smallInt(s); ok {
		return x * unit, checkSeconds(x * unit) // what ParseFloat gives, sooner
	}
	if x, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, errors.New("not a finite number")
		}
		return x * unit, checkSeconds(x * unit)
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return unixSeconds(t)
	}
	return 0, errors.New("not a number of seconds or an RFC 3339 timestamp (give a time format)")
}

// smallInt reads a decimal integer of at most 15 digits (exactly a
// float64, as strconv.ParseFloat reads it).
func smallInt(s string) (float64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 15 {
		return 0, false
	}
	n := int64(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		if n == 0 {
			return math.Copysign(0, -1), true
		}
		n = -n
	}
	return float64(n), true
}

// checkLocal refuses a local time (layout without a zone) that the
// daylight-saving rules of loc make ambiguous (it occurs twice when the
// clocks go back) or nonexistent (skipped when they go forward): time.Date
// would silently pick one of the two, or shift it by the gap. Only times
// within a day of a zone change are checked closely.
func checkLocal(t time.Time, layout, s string, loc *time.Location) error {
	if loc == time.UTC || strings.Contains(layout, "Z07") || strings.Contains(layout, "-07") || strings.Contains(layout, "MST") {
		return nil // UTC, or the time says its offset
	}
	start, end := t.ZoneBounds()
	const near = 24 * time.Hour
	if (start.IsZero() || t.Sub(start) > near) && (end.IsZero() || end.Sub(t) > near) {
		return nil
	}
	w, err := time.Parse(layout, s) // the wall clock as written
	if err != nil {
		return nil
	}
	wall := w.Unix()
	var found []time.Time
	for _, probe := range []int64{wall - 86400, wall + 86400} {
		_, off := time.Unix(probe, 0).In(loc).Zone()
		c := time.Unix(wall-int64(off), int64(w.Nanosecond())).In(loc)
		if _, o := c.Zone(); o != off {
			continue
		}
		if cw := time.Date(c.Year(), c.Month(), c.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), time.UTC); !cw.Equal(w) {
			continue
		}
		if len(found) == 0 || !found[0].Equal(c) {
			found = append(found, c)
		}
	}
	fix := "write the time with its UTC offset (a time format with -07:00, or RFC 3339) or in UTC"
	switch len(found) {
	case 0:
		return fmt.Errorf("this local time does not exist in %s (the clocks skip it when daylight saving starts): %s", loc, fix)
	case 1:
		return nil
	}
	a, b := found[0].Format("15:04:05 -07:00"), found[1].Format("15:04:05 -07:00")
	return fmt.Errorf("this local time occurs twice in %s (%s and %s: the clocks go back when daylight saving ends), so it does not say which: %s", loc, a, b, fix)
}

// place puts every series on its grid and keeps the observed readings.
// With times, the grid step is Step or the smallest positive difference
// between consecutive rows of any series, and each difference must be a
// whole number of steps; without, rows are consecutive steps. A row with a
// missing value is a reading of Unknown value. A series' chain starts at
// its first row.
func (d *Data) place(rows [][]row, name string, opts CSVOptions) error {
	hasTime := len(rows) > 0 && len(rows[0]) > 0 && !math.IsNaN(rows[0][0].t)
	step := opts.Step
	if hasTime {
		d.StepSource = "given"
		if step == 0 {
			d.StepSource = "the smallest difference between consecutive times in the data"
			step = math.Inf(1)
			for _, rs := range rows {
				for j := 1; j < len(rs); j++ {
					step = min(step, rs[j].t-rs[j-1].t)
				}
			}
			if math.IsInf(step, 1) {
				step = 1 // no series has two rows: nothing to place
			}
		}
		d.Step = step
	}
	d.Seqs = make([][]int, len(rows))
	d.Offsets = make([][]int, len(rows))
	if hasTime {
		d.Times = make([][]float64, len(rows))
		if opts.KeepTimes {
			d.TimeText = make([][]string, len(rows))
		}
	}
	for s, rs := range rows {
		seq, off, err := placeOne(rs, step, hasTime, d.Series[s])
		if err != nil {
			return err
		}
		d.Seqs[s], d.Offsets[s] = seq, off
		if hasTime {
			d.Times[s] = make([]float64, 0, len(seq))
		}
		for _, r := range rs {
			if !hasTime {
				continue
			}
			d.Times[s] = append(d.Times[s], r.t)
			if opts.KeepTimes {
				d.TimeText[s] = append(d.TimeText[s], r.text)
			}
		}
	}
	// drop series without any row (a series named only by files that
	// hold none of its rows); a series whose values are all missing is
	// kept: its rows are readings (docs/math.md §4.8)
	keep := 0
	for s := range d.Seqs {
		if len(d.Seqs[s]) == 0 {
			continue
		}
		d.Seqs[keep], d.Offsets[keep], d.Series[keep] = d.Seqs[s], d.Offsets[s], d.Series[s]
		if d.Times != nil {
			d.Times[keep] = d.Times[s]
		}
		if d.TimeText != nil {
			d.TimeText[keep] = d.TimeText[s]
		}
		keep++
	}
	d.Seqs, d.Offsets, d.Series = d.Seqs[:keep], d.Offsets[:keep], d.Series[:keep]
	if d.Times != nil {
		d.Times = d.Times[:keep]
	}
	if d.TimeText != nil {
		d.TimeText = d.TimeText[:keep]
	}
	if keep == 0 {
		return fmt.Errorf("%s: no data rows", name)
	}
	return nil
}

// placeOne puts one series' rows (in time order) on the grid of step and
// returns its readings (Unknown for a missing value) and their offsets
// from the first reading (nil when consecutive). Without times, rows are
// consecutive steps.
func placeOne(rs []row, step float64, hasTime bool, series string) ([]int, []int, error) {
	pos := make([]int, len(rs))
	for j := 1; j < len(rs); j++ {
		g := 1.0
		if hasTime {
			g = (rs[j].t - rs[j-1].t) / step
		}
		r := math.Round(g)
		if r < 1 || math.Abs(g-r) > 1e-6*r {
			return nil, nil, fmt.Errorf("%s:%d: time %s is %.6g steps of %v after the previous reading of series %q (%s): readings must lie on a grid of that step; set the time step option", rs[j].file, rs[j].line, rs[j].text, g, step, series, where(rs[j], rs[j-1]))
		}
		if r > MaxGap {
			return nil, nil, gapError(rs[j].file, rs[j].line, rs[j].text, g, step, series, where(rs[j], rs[j-1]))
		}
		if float64(pos[j-1])+r >= MaxSpan {
			return nil, nil, fmt.Errorf("%s:%d: series %q spans more than %d steps of %v; is the time step right?", rs[j].file, rs[j].line, series, MaxSpan, step)
		}
		pos[j] = pos[j-1] + int(r)
	}
	seq, off := make([]int, 0, len(rs)), make([]int, 0, len(rs))
	for j, r := range rs {
		seq = append(seq, r.v)
		off = append(off, pos[j])
	}
	if len(off) == 0 {
		return nil, nil, nil
	}
	first := off[0]
	for j := range off {
		off[j] -= first
	}
	if off[len(off)-1] == len(off)-1 {
		off = nil // consecutive
	}
	return seq, off, nil
}

// where names the previous row of a series: its line, and its file when
// that differs (rows of one series may come from several files).
func where(r, prev row) string {
	if prev.file != r.file {
		return fmt.Sprintf("%s:%d", prev.file, prev.line)
	}
	return fmt.Sprintf("line %d", prev.line)
}

// otherDelimiter returns a common delimiter other than delim found in a
// one-field header, or 0.
func otherDelimiter(h string, delim rune) rune {
	for _, c := range []rune{';', '\t', '|', ','} {
		if c != delim && strings.ContainsRune(h, c) {
			return c
		}
	}
	return 0
}

// maxLine is the longest line ReadData accepts, in bytes.
const maxLine = 1 << 20

// inputError is an error that already names the file.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }

func csvErr(name string, err error) error {
	var ie inputError
	if errors.As(err, &ie) {
		return ie.error
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.As(pe.Err, &ie) {
			return ie.error
		}
		return fmt.Errorf("%s: line %d: %w", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
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
			if v != Unknown {
				seq[t] = remap[v]
			}
		}
	}
	d.States = slices.Clone(states)
	return nil
}

// WriteCSV writes the data in long format (series, time, state), with the
// given column names: each reading's time as read (Data.Times), or else its
// position on the series' grid (1-based, gaps kept).
func (d *Data) WriteCSV(w io.Writer, seriesCol, timeCol, stateCol string) error {
	out := csv.NewWriter(w)
	out.Write([]string{seriesCol, timeCol, stateCol})
	for s, seq := range d.Seqs {
		for t, v := range seq {
			var tm string
			switch {
			case d.TimeText != nil:
				tm = d.TimeText[s][t]
			case d.Times != nil:
				tm = strconv.FormatFloat(d.Times[s][t], 'g', -1, 64)
			case d.Offsets != nil && d.Offsets[s] != nil:
				tm = strconv.Itoa(d.Offsets[s][t] + 1)
			default:
				tm = strconv.Itoa(t + 1)
			}
			state := "NA"
			if v != Unknown {
				state = d.States[v]
			}
			out.Write([]string{d.Series[s], tm, state})
		}
	}
	out.Flush()
	return out.Error()
}

// trimSpace is strings.TrimSpace, at once for a field that starts and ends
// with a printable ASCII character (most fields): any space TrimSpace
// removes, Unicode ones included, starts with a byte ≤ ' ' or ≥ 0x80.
func trimSpace(s string) string {
	if n := len(s); n > 0 && s[0] > ' ' && s[0] < 0x80 && s[n-1] > ' ' && s[n-1] < 0x80 {
		return s
	}
	return strings.TrimSpace(s)
}

// MaxGap is the most time steps between two consecutive readings of a
// series. The quilt search prices a gap in time and memory in proportion
// to its steps (measured: about 3 µs and 400 bytes a step; 2¹⁸ steps 0.7 s
// and 120 MB, 2²⁰ steps 2.9 s and 436 MB, year 1 to 2024 in hours 42 s
// and 5 GB), so a longer gap is refused before any work: a gap of more
// than two years of minutes is almost always a wrong time step or a wrong
// time (MaxSpan bounds the whole series).
const MaxGap = 1 << 20

// gapError is a reading more than MaxGap steps after the previous one.
func gapError(name string, line int, text string, g, step float64, series, prev string) error {
	return fmt.Errorf("%s:%d: time %s is %.0f steps of %v after the previous reading of series %q (%s), more than %d: the calibration's cost grows with a gap's steps (a gap of %d steps took 2.9 s and 436 MB); is the time step right?", name, line, text, g, step, series, prev, MaxGap, MaxGap)
}
