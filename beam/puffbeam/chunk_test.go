package puffbeam

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/reading"
)

// randomRows is n rows of one series as a reader would pass them: stretches
// of regular readings (whole seconds a step apart on consecutive lines,
// written as their number of units) and irregular rows (fractional,
// huge, negative or −0 times, times written otherwise, lines out of
// order, missing values).
func randomRows(rng *rand.Rand, n int, unit float64) []reading.Row {
	rows := make([]reading.Row, n)
	t, line := float64(rng.IntN(1<<20))*60, 2+rng.IntN(100)
	for i := range rows {
		t += 60
		line++
		text := string(plainText(nil, t, unit))
		switch rng.IntN(12) {
		case 0:
			t = rng.NormFloat64() * 1e12
			text = fmt.Sprintf("%.3f", t)
		case 1:
			t = math.Copysign(0, -1)
			text = "2026-11-25T10:00:00+01:00 ünïcode"
		case 2:
			t = 1<<53 + float64(rng.IntN(3))*2
			text = ""
		case 3:
			line = 2 + rng.IntN(1<<31)
		case 4:
			t = math.Floor(t) + 0.5
			text = string(plainText(nil, t, unit))
		}
		rows[i] = reading.Row{Series: "s", Time: t, TimeText: text, State: rng.IntN(300) - 1, File: "dir/part-ü.csv", Line: line}
	}
	return rows
}

// A chunk's coder gives back every row as read: time (to the bit), state,
// line, time text and file.
func TestChunkCoderRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 1000, 5000} {
		unit := []float64{0, 1, 60, 1e-3}[n%4]
		rows := randomRows(rng, n, unit)
		rows = append(rows, reading.Row{Series: "s", Time: math.Inf(-1), TimeText: "x", State: -1, File: "dir/part-ü.csv", Line: math.MaxInt32 * 3})
		c := chunk{File: "dir/part-ü.csv", Unit: unit}
		for _, r := range rows {
			c.add(r)
		}
		b, err := encodeChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		d, err := decodeChunk(b)
		if err != nil {
			t.Fatal(err)
		}
		got := rowsOf("s", collect(chunksOf(d)), true)
		for i := range rows {
			r := rows[i]
			if got[i] != r || math.Float64bits(got[i].Time) != math.Float64bits(r.Time) {
				t.Fatalf("n=%d row %d: %+v, want %+v", n, i, got[i], r)
			}
		}
		if len(got) != len(rows) {
			t.Fatalf("%d rows, want %d", len(got), len(rows))
		}
		// every strict prefix (some of the long ones) and a trailing byte
		// are errors, not panics
		for k := range len(b) {
			if n > 10 && rng.IntN(n/10) != 0 {
				continue
			}
			if _, err := decodeChunk(b[:k]); err == nil {
				t.Fatalf("n=%d: a chunk cut at %d of %d bytes decoded", n, k, len(b))
			}
		}
		if _, err := decodeChunk(append(b[:len(b):len(b)], 'x')); err == nil {
			t.Fatalf("n=%d: a chunk with a trailing byte decoded", n)
		}
	}
}

// Regular readings (a state a minute, on consecutive lines, times as
// numbers) cost about a byte a row: their state.
func TestChunkRegularRowsAreSmall(t *testing.T) {
	for _, unit := range []float64{0, 60} {
		c := chunk{File: "part-00.csv", Unit: unit}
		for i := range 5000 {
			// a time as written is its plain number of units: no text held
			tm := float64(1_700_000_000 + 60*i)
			c.add(reading.Row{Time: tm, TimeText: string(plainText(nil, tm, unit)), State: i % 7 / 3, Line: 1000 + i})
		}
		b, err := encodeChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Texts) != 0 || len(b) > 5000+50 {
			t.Errorf("unit %v: 5000 regular rows take %d bytes", unit, len(b))
		}
		d, err := decodeChunk(b)
		if err != nil || !reflect.DeepEqual(d, c) {
			t.Fatalf("unit %v: %v, or the rows differ", unit, err)
		}
	}
}

// Without texts, only the rows written otherwise than as their plain
// number of units carry their time's text.
func TestRowsWithoutTexts(t *testing.T) {
	c := chunk{File: "f.csv", Unit: 60}
	c.add(reading.Row{Time: 120, TimeText: "2", Line: 2})
	c.add(reading.Row{Time: 180, TimeText: "3.0", Line: 3})
	c.add(reading.Row{Time: 90, TimeText: "1.5", Line: 4})
	var got []string
	for _, r := range rowsOf("s", []chunk{c}, false) {
		got = append(got, r.TimeText)
	}
	if want := []string{"", "3.0", ""}; !reflect.DeepEqual(got, want) {
		t.Fatalf("texts %q, want %q", got, want)
	}
	got = nil
	for _, r := range rowsOf("s", []chunk{c}, true) {
		got = append(got, r.TimeText)
	}
	if want := []string{"2", "3.0", "1.5"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("texts %q, want %q", got, want)
	}
}

// Random bytes never panic the decoder.
func TestChunkDecoderRandomBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, rng.IntN(64))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		decodeChunk(b)
	}
}

// Rows of one series over several chunks come back in chunk order, each
// with its chunk's file.
func TestSeriesRowsOverChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var want []reading.Row
	var cs []chunk
	for f := range 3 {
		var c chunk
		c.File = fmt.Sprintf("f%d.csv", f)
		for _, r := range randomRows(rng, 5+f, 0) {
			r.File = c.File
			c.add(r)
			want = append(want, r)
		}
		cs = append(cs, c)
	}
	if got := rowsOf("s", collect(chunksOf(cs...)), true); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func chunksOf(cs ...chunk) func(*chunk) bool {
	return func(c *chunk) bool {
		if len(cs) == 0 {
			return false
		}
		*c, cs = cs[0], cs[1:]
		return true
	}
}
