package reading

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// Parquet input. A Parquet file is read wherever a CSV file is (ReadData,
// ReadRows and so everything built on them), recognised by its magic bytes
// "PAR1" (a name ending in .parquet must have them). Its columns are the
// header: the same column options name them. Only the columns read are
// decoded, row group by row group and page by page, so memory does not
// grow with the file (what is kept of the rows is as for CSV).
//
// Columns may be strings, integers, floating-point numbers, booleans (as
// the states "true" and "false"), timestamps and dates; a null is a
// missing reading (in the state or value column) and an error in the
// series and time columns. A timestamp is the instant it stores (a
// timestamp not adjusted to UTC is a wall-clock time in the time zone
// option); numeric times are seconds (times the time unit), as in CSV.
// Errors name the file and the row (1-based, the first data row is 1).

const parquetMagic = "PAR1"

func isParquetName(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), ".parquet")
}

// readParquetStream reads a Parquet file that ReadData recognised after
// buffering the start of r in br. A Parquet file is read from its end (its
// footer): a file (io.ReaderAt and io.Seeker) is read in place; a stream
// (or a gzip-compressed file) is first copied to a temporary file.
func readParquetStream(r io.Reader, br *bufio.Reader, gzipped bool, name string, opts CSVOptions) (*Data, error) {
	if f, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	}); ok && !gzipped {
		cur, err := f.Seek(0, io.SeekCurrent)
		if err == nil {
			base := cur - int64(br.Buffered())
			end, err := f.Seek(0, io.SeekEnd)
			if err == nil && base >= 0 && end >= base {
				return readParquet(io.NewSectionReader(f, base, end-base), end-base, name, opts)
			}
		}
	}
	tmp, err := os.CreateTemp("", "puff-*.parquet")
	if err != nil {
		return nil, fmt.Errorf("%s: a Parquet stream is read from a temporary file: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return readParquet(tmp, n, name, opts)
}

// readParquet reads a Parquet file of size bytes as ReadData reads a CSV
// file with a header (the long format; the columns are the header).
func readParquet(r io.ReaderAt, size int64, name string, opts CSVOptions) (d *Data, err error) {
	defer func() {
		// the decoder's own checks of a corrupt file may panic
		if p := recover(); p != nil {
			d, err = nil, fmt.Errorf("%s: a corrupt Parquet file: %v", name, p)
		}
	}()
	if opts.Step < 0 || math.IsNaN(opts.Step) || math.IsInf(opts.Step, 0) {
		return nil, fmt.Errorf("time step %v: want a finite number > 0 (or 0 for the smallest difference in the data)", opts.Step)
	}
	if err := checkFooter(r, size); err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %v", name, err)
	}
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %v", name, err)
	}
	cols := f.Root().Columns()
	if len(cols) > maxFields {
		return nil, fmt.Errorf("%s: %d columns, at most %d are read", name, len(cols), maxFields)
	}
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.Name()
	}
	var idx map[string]int
	var intern func(string, int) (int, error)
	var hasState bool
	d, idx, intern, hasState, err = begin(header, name, opts)
	if err != nil {
		return nil, err
	}
	if !hasState {
		return nil, fmt.Errorf("%s: no column %q (columns: %s); name the columns with the series/time/state column options", name, opts.StateCol, strings.Join(header, ", "))
	}
	lr, err := d.newLong(name, header, idx, opts, intern)
	if err != nil {
		return nil, err
	}
	// an optional value column may hold nulls, readings of unknown value;
	// its schema says so, not its values (docs/math.md §4.14)
	d.NullValues = d.NullValues || cols[lr.vc].Optional()
	pr := parquetRows{lr: lr, f: f}
	// the columns read: the value, then the series, then the time(s)
	use := []int{lr.vc}
	if lr.hasSer {
		use = append(use, lr.serC)
	}
	use = append(use, lr.timeCs...)
	for _, i := range use {
		c := cols[i]
		if !c.Leaf() || c.Repeated() {
			return nil, fmt.Errorf("%s: column %q is a group or repeated: want a flat column of one value per row", name, c.Name())
		}
		pr.cols = append(pr.cols, pqColumn{name: c.Name(), index: c.Index(), kind: kindOf(c.Type())})
	}
	meta := f.Metadata()
	for g, rg := range f.RowGroups() {
		for _, c := range pr.cols {
			if g >= len(meta.RowGroups) || c.index >= len(meta.RowGroups[g].Columns) {
				return nil, fmt.Errorf("%s: a corrupt Parquet file: row group %d has no column %q", name, g+1, c.name)
			}
			if err := checkPages(r, size, &meta.RowGroups[g].Columns[c.index].MetaData); err != nil {
				return nil, fmt.Errorf("%s: a corrupt Parquet file: row group %d, column %q: %v", name, g+1, c.name, err)
			}
		}
		if err := pr.group(g, rg); err != nil {
			return nil, err
		}
	}
	return lr.finish()
}

// pqKind is how a column's values are read.
type pqKind int

const (
	pqText      pqKind = iota // a string (or bytes)
	pqInt                     // an integer
	pqFloat                   // a floating-point number
	pqBool                    // a boolean
	pqTimestamp               // an instant (unit: scale to nanoseconds)
	pqLocalTime               // a timestamp not adjusted to UTC: wall clock
	pqDate                    // days since 1970-01-01
	pqDecimal                 // an integer scaled by 10^−scale
	pqOther                   // unsupported (named in the error)
)

type pqType struct {
	kind  pqKind
	scale int64 // nanoseconds per unit of a timestamp; decimal places of a decimal
	name  string
}

func kindOf(t parquet.Type) pqType {
	lt := t.LogicalType()
	if lt != nil {
		switch v := lt.Value.(type) {
		case *format.TimestampType:
			pt := pqType{kind: pqTimestamp, name: v.String()}
			if !v.IsAdjustedToUTC {
				pt.kind = pqLocalTime
			}
			switch v.Unit.Value.(type) {
			case *format.MilliSeconds:
				pt.scale = 1e6
			case *format.MicroSeconds:
				pt.scale = 1e3
			case *format.NanoSeconds:
				pt.scale = 1
			default:
				pt.kind = pqOther
			}
			return pt
		case *format.DateType:
			return pqType{kind: pqDate, name: "DATE"}
		case *format.DecimalType:
			if k := t.Kind(); k == parquet.Int32 || k == parquet.Int64 {
				return pqType{kind: pqDecimal, scale: int64(v.Scale), name: v.String()}
			}
			return pqType{kind: pqOther, name: v.String()}
		}
	}
	if ct := t.ConvertedType(); ct != nil && lt == nil {
		switch *ct {
		case deprecated.TimestampMillis:
			return pqType{kind: pqTimestamp, scale: 1e6, name: "TIMESTAMP_MILLIS"}
		case deprecated.TimestampMicros:
			return pqType{kind: pqTimestamp, scale: 1e3, name: "TIMESTAMP_MICROS"}
		case deprecated.Date:
			return pqType{kind: pqDate, name: "DATE"}
		}
	}
	switch t.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return pqType{kind: pqText, name: "string"}
	case parquet.Int32, parquet.Int64:
		return pqType{kind: pqInt, name: "integer"}
	case parquet.Float, parquet.Double:
		return pqType{kind: pqFloat, name: "floating"}
	case parquet.Boolean:
		return pqType{kind: pqBool, name: "boolean"}
	}
	return pqType{kind: pqOther, name: t.String()}
}

type pqColumn struct {
	name  string
	index int
	kind  pqType
}

// parquetRows reads a file's rows column by column.
type parquetRows struct {
	lr   *longReader
	f    *parquet.File
	cols []pqColumn // value, series?, times...
	row  int        // rows before the current row group
	// states maps a state column's text to its state; lastKey is the
	// previous row's series
	states  map[string]int
	lastKey string
	haveKey bool
}

// pqCursor reads one column chunk's values in batches.
type pqCursor struct {
	pages parquet.Pages
	page  parquet.Page
	vals  parquet.ValueReader
	buf   []parquet.Value
	n, i  int
}

func (c *pqCursor) next() (parquet.Value, error) {
	for c.i == c.n {
		if c.vals != nil {
			n, err := c.vals.ReadValues(c.buf)
			c.n, c.i = n, 0
			if n > 0 {
				break
			}
			if err != nil && err != io.EOF {
				return parquet.Value{}, err
			}
			c.vals = nil
			continue
		}
		p, err := c.pages.ReadPage()
		if err != nil {
			return parquet.Value{}, err // io.EOF: the column chunk ends
		}
		c.page, c.vals = p, p.Values()
	}
	v := c.buf[c.i]
	c.i++
	return v, nil
}

const pqBatch = 1024

func (pr *parquetRows) group(g int, rg parquet.RowGroup) error {
	name := pr.lr.name
	chunks := rg.ColumnChunks()
	cur := make([]*pqCursor, len(pr.cols))
	for i, c := range pr.cols {
		pages := chunks[c.index].Pages()
		defer pages.Close()
		cur[i] = &pqCursor{pages: pages, buf: make([]parquet.Value, pqBatch)}
	}
	n := int(rg.NumRows())
	vals := make([]parquet.Value, len(pr.cols))
	for j := 0; j < n; j++ {
		line := pr.row + j + 1
		for i, c := range cur {
			v, err := c.next()
			if err != nil {
				if err == io.EOF {
					err = fmt.Errorf("row group %d has %d rows and column %q fewer values", g+1, n, pr.cols[i].name)
				}
				return fmt.Errorf("%s:%d: column %q: %w", name, line, pr.cols[i].name, err)
			}
			vals[i] = v
		}
		if err := pr.add(vals, line); err != nil {
			return err
		}
	}
	pr.row += n
	for i, c := range cur {
		if _, err := c.next(); err != io.EOF {
			return fmt.Errorf("%s: row group %d: column %q has more values than the group's %d rows", name, g+1, pr.cols[i].name, n)
		}
	}
	return nil
}

// add reads one row's values (value, series?, times...).
func (pr *parquetRows) add(vals []parquet.Value, line int) error {
	lr := pr.lr
	vc := pr.cols[0]
	v := -1
	val := vals[0]
	switch {
	case val.IsNull():
		lr.d.MissingValues++
	case lr.numeric:
		switch vc.kind.kind {
		case pqText:
			var err error
			if v, err = lr.value(string(val.ByteArray()), line); err != nil {
				return err
			}
		case pqInt, pqFloat, pqDecimal:
			x, _ := pqNumber(val, vc.kind)
			if math.IsInf(x, 0) {
				return fmt.Errorf("%s:%d: field %q: %v is not a finite number", lr.name, line, lr.col, x)
			}
			v = lr.level(x)
		default:
			return fmt.Errorf("%s: value column %q is %s: want numbers (or strings of numbers)", lr.name, lr.col, vc.kind.name)
		}
	case vc.kind.kind == pqText:
		// the states met so far, looked up without a string per row
		b := val.ByteArray()
		var ok bool
		if v, ok = pr.states[string(b)]; !ok {
			var err error
			if v, err = lr.intern(string(b), line); err != nil {
				return err
			}
			if pr.states == nil {
				pr.states = map[string]int{}
			}
			pr.states[string(b)] = v
		}
	default:
		s, err := pr.text(val, vc)
		if err != nil {
			return err
		}
		if v, err = lr.intern(s, line); err != nil {
			return err
		}
	}
	rest := vals[1:]
	key := ""
	if lr.hasSer {
		sv, c := rest[0], pr.cols[1]
		rest = rest[1:]
		if sv.IsNull() {
			return fmt.Errorf("%s:%d: the series (column %q) is null", lr.name, line, c.name)
		}
		if c.kind.kind == pqText && string(sv.ByteArray()) == pr.lastKey && pr.haveKey {
			key = pr.lastKey // the same series as the previous row: no new string
		} else {
			var err error
			if key, err = pr.text(sv, c); err != nil {
				return err
			}
			pr.lastKey, pr.haveKey = key, true
		}
	}
	t, text := math.NaN(), ""
	if lr.hasTime {
		tcols := pr.cols[len(pr.cols)-len(rest):]
		for i, tv := range rest {
			if tv.IsNull() {
				return fmt.Errorf("%s:%d: the time (column %q) is null", lr.name, line, tcols[i].name)
			}
		}
		if len(rest) == 1 {
			var err error
			if t, text, err = pr.time(rest[0], tcols[0], line); err != nil {
				return err
			}
		} else {
			for i, tv := range rest {
				s, err := pr.text(tv, tcols[i])
				if err != nil {
					return err
				}
				lr.parts[i] = strings.TrimSpace(s)
			}
			text = strings.Join(lr.parts, " ")
			var err error
			if t, err = lr.time(text, line); err != nil {
				return err
			}
		}
	}
	return lr.add(key, v, t, text, line)
}

// pqNumber is a numeric value as a float64 (ok false for other kinds).
func pqNumber(v parquet.Value, t pqType) (float64, bool) {
	var x float64
	switch v.Kind() {
	case parquet.Int32:
		x = float64(v.Int32())
	case parquet.Int64:
		x = float64(v.Int64())
	case parquet.Float:
		x = float64(v.Float())
	case parquet.Double:
		x = v.Double()
	default:
		return 0, false
	}
	if t.kind == pqDecimal {
		// the decimal as written, parsed as a CSV number would be
		s := strconv.FormatInt(pqInt64(v), 10)
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		for int64(len(s)) <= t.scale {
			s = "0" + s
		}
		s = s[:int64(len(s))-t.scale] + "." + s[int64(len(s))-t.scale:]
		if neg {
			s = "-" + s
		}
		x, _ = strconv.ParseFloat(s, 64)
	}
	return x, true
}

func pqInt64(v parquet.Value) int64 {
	if v.Kind() == parquet.Int32 {
		return int64(v.Int32())
	}
	return v.Int64()
}

// text is a value as CSV would write it (a state or a series name).
func (pr *parquetRows) text(v parquet.Value, c pqColumn) (string, error) {
	switch c.kind.kind {
	case pqText:
		return string(v.ByteArray()), nil
	case pqInt:
		return strconv.FormatInt(pqInt64(v), 10), nil
	case pqBool:
		return strconv.FormatBool(v.Boolean()), nil
	case pqFloat:
		x, _ := pqNumber(v, c.kind)
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case pqDecimal:
		x, _ := pqNumber(v, c.kind)
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case pqDate:
		return time.Unix(int64(v.Int32())*86400, 0).UTC().Format(time.DateOnly), nil
	case pqTimestamp:
		return unitTime(pqInt64(v), c.kind.scale).UTC().Format(time.RFC3339Nano), nil
	case pqLocalTime:
		return unitTime(pqInt64(v), c.kind.scale).UTC().Format("2006-01-02 15:04:05.999999999"), nil
	}
	return "", fmt.Errorf("%s: column %q is %s: want strings, integers, floating-point numbers, booleans, timestamps or dates", pr.lr.name, c.name, c.kind.name)
}

// time reads a time column's value: an instant, a date, a number of
// seconds (times the time unit) or a string as in CSV.
func (pr *parquetRows) time(v parquet.Value, c pqColumn, line int) (float64, string, error) {
	lr := pr.lr
	switch c.kind.kind {
	case pqTimestamp:
		t := unitTime(pqInt64(v), c.kind.scale)
		x, err := unixSeconds(t)
		if err != nil {
			return 0, "", fmt.Errorf("%s:%d: field %q: timestamp %d (%s): %v", lr.name, line, c.name, pqInt64(v), c.kind.name, err)
		}
		return x, t.UTC().Format(time.RFC3339Nano), nil
	case pqLocalTime, pqDate:
		// a wall-clock time: in the time zone option, as a CSV time without an offset
		s, err := pr.text(v, c)
		if err != nil {
			return 0, "", err
		}
		layout := "2006-01-02 15:04:05.999999999"
		if c.kind.kind == pqDate {
			layout = time.DateOnly
		}
		t, err := time.ParseInLocation(layout, s, lr.loc)
		if err == nil {
			err = checkLocal(t, layout, s, lr.loc)
		}
		if err != nil {
			return 0, "", fmt.Errorf("%s:%d: field %q: %q: %v", lr.name, line, c.name, s, err)
		}
		x, err := unixSeconds(t)
		if err != nil {
			return 0, "", fmt.Errorf("%s:%d: field %q: %q: %v", lr.name, line, c.name, s, err)
		}
		return x, s, nil
	case pqInt, pqFloat, pqDecimal:
		x, _ := pqNumber(v, c.kind)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, "", fmt.Errorf("%s:%d: field %q: %v: not a finite number", lr.name, line, c.name, x)
		}
		s, _ := pr.text(v, c)
		if len(lr.opts.TimeFormats) > 0 {
			t, err := lr.time(s, line)
			return t, s, err
		}
		if err := checkSeconds(x * lr.unit); err != nil {
			return 0, "", fmt.Errorf("%s:%d: field %q: %s: %v", lr.name, line, c.name, s, err)
		}
		return x * lr.unit, s, nil
	case pqText:
		s := strings.TrimSpace(string(v.ByteArray()))
		t, err := lr.time(s, line)
		return t, s, err
	}
	_, err := pr.text(v, c)
	if err == nil {
		err = errors.New("unsupported time column")
	}
	return 0, "", err
}
