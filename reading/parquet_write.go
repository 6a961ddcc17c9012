package reading

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// parquetTypes are the column types WriteParquet can store.
var parquetTypes = []string{"string", "int64", "double", "timestamp"}

// WriteParquet converts a CSV file with a header (r, named name in errors)
// to a Parquet file with the same columns, in row groups of at most
// rowsPerGroup rows (0: 100,000). types gives a column's type by name
// (parquetTypes; "string" when not named): an int64 or double column holds
// numbers, a timestamp column RFC 3339 times (stored in nanoseconds, UTC);
// a missing field (empty, ?, NA, NaN) of a non-string column is a null.
// ReadData reads the result as it reads the CSV file: the same data.
func WriteParquet(w io.Writer, r io.Reader, name string, types map[string]string, rowsPerGroup int) error {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = 0
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return csvErr(name, err)
	}
	header = slices.Clone(header)
	group := parquet.Group{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		header[i] = h
		if _, dup := group[h]; dup || h == "" {
			return fmt.Errorf("%s:1: column %q: want distinct non-empty column names", name, h)
		}
		var n parquet.Node
		switch types[h] {
		case "", "string":
			n = parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
		case "int64":
			n = parquet.Optional(parquet.Int(64))
		case "double":
			n = parquet.Optional(parquet.Leaf(parquet.DoubleType))
		case "timestamp":
			n = parquet.Optional(parquet.Timestamp(parquet.Nanosecond))
		default:
			return fmt.Errorf("column %q: type %q: want one of %s", h, types[h], strings.Join(parquetTypes, ", "))
		}
		group[h] = n
	}
	for c := range types {
		if _, ok := group[c]; !ok {
			return fmt.Errorf("%s:1: no column %q to type (columns: %s)", name, c, strings.Join(header, ", "))
		}
	}
	schema := parquet.NewSchema("data", group)
	// the schema orders its columns by name: where each CSV column goes
	leaf := make([]int, len(header))
	for i, h := range header {
		l, ok := schema.Lookup(h)
		if !ok {
			return fmt.Errorf("column %q: not in the schema", h)
		}
		leaf[i] = l.ColumnIndex
	}
	if rowsPerGroup <= 0 {
		rowsPerGroup = 100_000
	}
	pw := parquet.NewWriter(w, schema, parquet.MaxRowsPerRowGroup(int64(rowsPerGroup)), parquet.Compression(&snappy.Codec{}))
	rows := make([]parquet.Row, 0, 1024)
	flush := func() error {
		if _, err := pw.WriteRows(rows); err != nil {
			return err
		}
		rows = rows[:0]
		return nil
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvErr(name, err)
		}
		line, _ := cr.FieldPos(0)
		row := make(parquet.Row, len(header))
		for i, f := range rec {
			typ := types[header[i]]
			if typ != "" && typ != "string" && isMissing(f) {
				row[leaf[i]] = parquet.NullValue().Level(0, 0, leaf[i])
				continue
			}
			var v parquet.Value
			switch typ {
			case "", "string":
				v = parquet.ByteArrayValue([]byte(f))
			case "int64":
				x, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
				if err != nil {
					return fmt.Errorf("%s:%d: column %q: %q is not an integer", name, line, header[i], f)
				}
				v = parquet.Int64Value(x)
			case "double":
				x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || math.IsInf(x, 0) {
					return fmt.Errorf("%s:%d: column %q: %q is not a finite number", name, line, header[i], f)
				}
				v = parquet.DoubleValue(x)
			case "timestamp":
				t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(f))
				if err != nil {
					return fmt.Errorf("%s:%d: column %q: %q is not an RFC 3339 time", name, line, header[i], f)
				}
				if t.Before(minNanoTime) || t.After(maxNanoTime) {
					// UnixNano would wrap: refuse, with the range
					return fmt.Errorf("%s:%d: column %q: %q is outside the range of a nanosecond timestamp (%s to %s): keep the column a string", name, line, header[i], f, minNanoTime.Format(time.RFC3339Nano), maxNanoTime.Format(time.RFC3339Nano))
				}
				v = parquet.Int64Value(t.UnixNano())
			}
			def := 1
			if typ == "" || typ == "string" {
				def = 0
			}
			row[leaf[i]] = v.Level(0, def, leaf[i])
		}
		rows = append(rows, row)
		if len(rows) == cap(rows) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return pw.Close()
}

// The instants a timestamp in int64 nanoseconds holds (WriteParquet's).
var (
	minNanoTime = time.Unix(0, math.MinInt64).UTC()
	maxNanoTime = time.Unix(0, math.MaxInt64).UTC()
)
