package puffbeam

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/release"
)

// randomRows is n rows of one series as a reader would pass them, with
// missing values, lines out of order (rows of a file in any order) and
// times of every kind of text.
func randomRows(rng *rand.Rand, n int) []release.Row {
	rows := make([]release.Row, n)
	for i := range rows {
		t := float64(rng.IntN(1 << 40))
		text := fmt.Sprint(t)
		switch rng.IntN(4) {
		case 0:
			t = rng.NormFloat64() * 1e12
			text = fmt.Sprintf("%.3f", t)
		case 1:
			text = "2026-11-25T10:00:00+01:00 ünïcode"
		case 2:
			text = ""
		}
		rows[i] = release.Row{Series: "s", Time: t, TimeText: text, State: rng.IntN(300) - 1, File: "dir/part-ü.csv", Line: 2 + rng.IntN(1<<31)}
	}
	return rows
}

// A chunk's coder gives back every row as read: time (to the bit), state,
// line, time text and file.
func TestChunkCoderRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 1000} {
		rows := randomRows(rng, n)
		rows = append(rows, release.Row{Series: "s", Time: math.Inf(-1), TimeText: "x", State: -1, File: "dir/part-ü.csv", Line: math.MaxInt32 * 3})
		c := chunk{File: "dir/part-ü.csv"}
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
		got := seriesRows("s", chunksOf(d))
		for i := range rows {
			r := rows[i]
			if got[i] != r {
				t.Fatalf("n=%d row %d: %+v, want %+v", n, i, got[i], r)
			}
		}
		if len(got) != len(rows) {
			t.Fatalf("%d rows, want %d", len(got), len(rows))
		}
		// every strict prefix and a trailing byte are errors, not panics
		for k := range len(b) {
			if _, err := decodeChunk(b[:k]); err == nil {
				t.Fatalf("n=%d: a chunk cut at %d of %d bytes decoded", n, k, len(b))
			}
		}
		if _, err := decodeChunk(append(b[:len(b):len(b)], 'x')); err == nil {
			t.Fatalf("n=%d: a chunk with a trailing byte decoded", n)
		}
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
	var want []release.Row
	var cs []chunk
	for f := range 3 {
		var c chunk
		for _, r := range randomRows(rng, 5+f) {
			r.File = fmt.Sprintf("f%d.csv", f)
			c.add(r)
			want = append(want, r)
		}
		c.File = fmt.Sprintf("f%d.csv", f)
		cs = append(cs, c)
	}
	if got := seriesRows("s", chunksOf(cs...)); !reflect.DeepEqual(got, want) {
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
