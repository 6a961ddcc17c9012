package puffbeam

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/pufferfish-privacy/pufferfish/reading"
)

// chunk is rows of one series read from one file, held in columns: what
// the reader passes on instead of one element per row, so a series
// crosses the shuffle as a few elements of a few bytes a row (encodeChunk)
// instead of one element a row carrying its series, file and time text.
// Every field of the rows is kept: the assembly's errors name a row's
// file, line and time as written, as puff release's do.
type chunk struct {
	File   string
	Unit   float64   // seconds per unit of a numeric time (0: 1)
	Times  []float64 // seconds
	States []int     // index into the declared states; −1 for a missing value
	Lines  []int
	// Plain[i]: row i's time is written as its plain number of units
	// (plainText), not held in Texts: regular data holds no text
	Plain []bool
	Texts []byte // the other rows' times as written, one after another
	Ends  []int  // row i's text ends at Ends[i] in Texts (a plain row's is empty)
}

func (c *chunk) add(r reading.Row) {
	var buf [32]byte
	plain := string(plainText(buf[:0], r.Time, c.Unit)) == r.TimeText
	if !plain {
		c.Texts = append(c.Texts, r.TimeText...)
	}
	c.Times = append(c.Times, r.Time)
	c.States = append(c.States, r.State)
	c.Lines = append(c.Lines, r.Line)
	c.Plain = append(c.Plain, plain)
	c.Ends = append(c.Ends, len(c.Texts))
}

// collect is every chunk of a series.
func collect(chunks func(*chunk) bool) []chunk {
	var cs []chunk
	var c chunk
	for chunks(&c) {
		cs = append(cs, c)
		c = chunk{}
	}
	return cs
}

// rowsOf is every row of a series, from its chunks, as the core's rows
// (reading.SeriesStep and reading.AssembleSeries read them). Without
// texts, a time written as its plain number of units has no text: the
// core reads the text only to name a bad row.
func rowsOf(series string, cs []chunk, texts bool) []reading.Row {
	n := 0
	for _, c := range cs {
		n += len(c.Times)
	}
	rows := make([]reading.Row, 0, n)
	for _, c := range cs {
		held := string(c.Texts) // one string per chunk; the rows' times share it
		from := 0
		for i, t := range c.Times {
			text := held[from:c.Ends[i]]
			if c.Plain[i] && texts {
				text = string(plainText(nil, t, c.Unit))
			}
			rows = append(rows, reading.Row{Series: series, Time: t, TimeText: text, State: c.States[i], File: c.File, Line: c.Lines[i]})
			from = c.Ends[i]
		}
	}
	return rows
}

// A chunk is encoded as its file, unit and row count, then its rows in
// runs, then their states. A run is rows whose times (when whole numbers
// of seconds) and lines step by the same amounts and whose time texts are
// all, or all not, their plain number of units (plainText, written back
// by rowsOf when the core needs the text): regular readings, one a minute
// on consecutive lines, are one run and cost a byte a row, their state.
// Every field comes back bit for bit.
const (
	runWhole = 1 << iota // times are whole seconds, each the previous plus the run's step
	runPlain             // time texts are the plain number of units
)

// plainText is a time's plain text: its number of units (a whole number
// in its digits, else the shortest decimal that reads back the same).
func plainText(dst []byte, t, unit float64) []byte {
	if unit == 0 {
		unit = 1
	}
	if i, ok := whole(t / unit); ok {
		return strconv.AppendInt(dst, i, 10)
	}
	return strconv.AppendFloat(dst, t/unit, 'f', -1, 64)
}

// whole says t is a whole number of seconds that an int64 holds and gives
// back bit for bit (not −0).
func whole(t float64) (int64, bool) {
	if !(math.Abs(t) <= 1<<53) {
		return 0, false
	}
	i := int64(t)
	return i, math.Float64bits(float64(i)) == math.Float64bits(t)
}

// rowShape is what a run's rows share.
type rowShape struct {
	flags    byte
	dt, line int64 // time step (runWhole) and line step from the previous row
}

// encodeChunk is a chunk's coder (beam.RegisterCoder); decodeChunk reads
// it back.
func encodeChunk(c chunk) ([]byte, error) {
	n := len(c.Times)
	if len(c.States) != n || len(c.Lines) != n || len(c.Plain) != n || len(c.Ends) != n {
		return nil, errors.New("puffbeam: a chunk's columns differ in length")
	}
	b := make([]byte, 0, 3*binary.MaxVarintLen64+len(c.File)+2*n)
	b = binary.AppendUvarint(b, uint64(len(c.File)))
	b = append(b, c.File...)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Unit))
	b = binary.AppendUvarint(b, uint64(n))
	var prevT int64 // the previous whole time
	prevLine := 0
	shape := func(i int) rowShape {
		var sh rowShape
		if t, ok := whole(c.Times[i]); ok {
			sh.flags |= runWhole
			sh.dt = t - prevT
		}
		if c.Plain[i] {
			sh.flags |= runPlain
		}
		sh.line = int64(c.Lines[i] - prevLine)
		return sh
	}
	for i := 0; i < n; {
		sh := shape(i)
		// the run: rows i..j−1 of that shape
		j := i
		for j < n {
			if j > i && shape(j) != sh {
				break
			}
			if t, ok := whole(c.Times[j]); ok {
				prevT = t
			}
			prevLine = c.Lines[j]
			j++
		}
		b = binary.AppendUvarint(b, uint64(j-i))
		b = append(b, sh.flags)
		b = binary.AppendVarint(b, sh.line)
		if sh.flags&runWhole != 0 {
			b = binary.AppendVarint(b, sh.dt)
		}
		for k := i; k < j; k++ {
			if sh.flags&runWhole == 0 {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Times[k]))
			}
			if sh.flags&runPlain == 0 {
				text := c.Texts[endBefore(c.Ends, k):c.Ends[k]]
				b = binary.AppendUvarint(b, uint64(len(text)))
				b = append(b, text...)
			}
		}
		i = j
	}
	for _, v := range c.States {
		b = binary.AppendVarint(b, int64(v))
	}
	return b, nil
}

// endBefore is where row k's time text starts.
func endBefore(ends []int, k int) int {
	if k == 0 {
		return 0
	}
	return ends[k-1]
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
	if len(b) < 8 {
		return bad("unit")
	}
	c.Unit = math.Float64frombits(binary.LittleEndian.Uint64(b))
	b = b[8:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) { // every row's state takes a byte
		return bad("rows")
	}
	b = b[k:]
	c.Times, c.States, c.Lines, c.Plain, c.Ends = make([]float64, n), make([]int, n), make([]int, n), make([]bool, n), make([]int, n)
	var prevT, line int64
	for i := 0; i < int(n); {
		run, k := binary.Uvarint(b)
		if k <= 0 || run == 0 || run > n-uint64(i) || len(b) < k+1 {
			return bad("run")
		}
		flags := b[k]
		b = b[k+1:]
		if flags&^(runWhole|runPlain) != 0 {
			return bad("run kind")
		}
		dl, k := binary.Varint(b)
		if k <= 0 {
			return bad("line")
		}
		b = b[k:]
		var dt int64
		if flags&runWhole != 0 {
			if dt, k = binary.Varint(b); k <= 0 {
				return bad("time step")
			}
			b = b[k:]
		}
		for range run {
			if flags&runWhole != 0 {
				prevT += dt
				if prevT > 1<<53 || prevT < -(1<<53) {
					return bad("time")
				}
				c.Times[i] = float64(prevT)
			} else {
				if len(b) < 8 {
					return bad("time")
				}
				c.Times[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
				b = b[8:]
				if t, ok := whole(c.Times[i]); ok {
					prevT = t
				}
			}
			line += dl
			if line > math.MaxInt || line < math.MinInt {
				return bad("line")
			}
			c.Lines[i] = int(line)
			if flags&runPlain != 0 {
				c.Plain[i] = true
			} else {
				tl, k := binary.Uvarint(b)
				if k <= 0 || tl > uint64(len(b)-k) {
					return bad("time text")
				}
				c.Texts = append(c.Texts, b[k:k+int(tl)]...)
				b = b[k+int(tl):]
			}
			c.Ends[i] = len(c.Texts)
			i++
		}
	}
	for i := range c.States {
		v, k := binary.Varint(b)
		if k <= 0 || v < -1 || v > math.MaxInt32 {
			return bad("state")
		}
		c.States[i] = int(v)
		b = b[k:]
	}
	if len(b) != 0 {
		return bad("trailing bytes")
	}
	return c, nil
}
