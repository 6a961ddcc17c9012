package puffbeam

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/release"
)

// chunk is rows of one series read from one file, held in columns: what
// the reader passes on instead of one element per row, so a series
// crosses the shuffle as a few elements of ≈ 12 bytes a row (encodeChunk)
// instead of one element a row carrying its series, file and time text.
// Every field of the rows is kept: the assembly's errors name a row's
// file, line and time as written, as puff release's do.
type chunk struct {
	File   string
	Times  []float64 // seconds
	States []int     // index into the declared states; −1 for a missing value
	Lines  []int
	Texts  []byte // the times as written, one after another
	Ends   []int  // row i's time as written is Texts[Ends[i-1]:Ends[i]]
}

func (c *chunk) add(r release.Row) {
	c.Times = append(c.Times, r.Time)
	c.States = append(c.States, r.State)
	c.Lines = append(c.Lines, r.Line)
	c.Texts = append(c.Texts, r.TimeText...)
	c.Ends = append(c.Ends, len(c.Texts))
}

// seriesRows is every row of a series, from its chunks, as the core's
// rows (release.SeriesStep and release.AssembleSeries read them).
func seriesRows(series string, chunks func(*chunk) bool) []release.Row {
	var rows []release.Row
	var c chunk
	for chunks(&c) {
		texts := string(c.Texts) // one string per chunk; the rows' times share it
		from := 0
		for i, t := range c.Times {
			rows = append(rows, release.Row{Series: series, Time: t, TimeText: texts[from:c.Ends[i]], State: c.States[i], File: c.File, Line: c.Lines[i]})
			from = c.Ends[i]
		}
		c = chunk{}
	}
	return rows
}

// encodeChunk is a chunk's coder: the file, the row count, then per row
// its time (8 bytes), state, line (the difference from the previous row's)
// and time text length as varints, then the texts.
func encodeChunk(c chunk) ([]byte, error) {
	n := len(c.Times)
	if len(c.States) != n || len(c.Lines) != n || len(c.Ends) != n {
		return nil, errors.New("puffbeam: a chunk's columns differ in length")
	}
	b := make([]byte, 0, 2*binary.MaxVarintLen64+len(c.File)+n*12+len(c.Texts))
	b = binary.AppendUvarint(b, uint64(len(c.File)))
	b = append(b, c.File...)
	b = binary.AppendUvarint(b, uint64(n))
	line, end := 0, 0
	for i := range n {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Times[i]))
		b = binary.AppendVarint(b, int64(c.States[i]))
		b = binary.AppendVarint(b, int64(c.Lines[i]-line))
		b = binary.AppendUvarint(b, uint64(c.Ends[i]-end))
		line, end = c.Lines[i], c.Ends[i]
	}
	return append(b, c.Texts...), nil
}

// decodeChunk reads what encodeChunk wrote; malformed bytes are an error.
func decodeChunk(b []byte) (chunk, error) {
	bad := func(what string) (chunk, error) {
		return chunk{}, fmt.Errorf("puffbeam: malformed chunk (%s)", what)
	}
	l, k := binary.Uvarint(b)
	if k <= 0 || l > uint64(len(b)-k) {
		return bad("file")
	}
	c := chunk{File: string(b[k : k+int(l)])}
	b = b[k+int(l):]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) { // every row takes more than a byte
		return bad("rows")
	}
	b = b[k:]
	c.Times, c.States, c.Lines, c.Ends = make([]float64, n), make([]int, n), make([]int, n), make([]int, n)
	line, end := int64(0), uint64(0)
	for i := range int(n) {
		if len(b) < 8 {
			return bad("time")
		}
		c.Times[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
		st, k := binary.Varint(b)
		if k <= 0 || st < -1 || st > math.MaxInt32 {
			return bad("state")
		}
		b = b[k:]
		dl, k := binary.Varint(b)
		if k <= 0 {
			return bad("line")
		}
		b = b[k:]
		dt, k := binary.Uvarint(b)
		if k <= 0 || dt > uint64(len(b)) {
			return bad("time text")
		}
		b = b[k:]
		line += dl
		end += dt
		c.States[i], c.Lines[i], c.Ends[i] = int(st), int(line), int(end)
	}
	if end != uint64(len(b)) {
		return bad("time texts")
	}
	c.Texts = append([]byte(nil), b...) // b may be the runner's buffer
	return c, nil
}
