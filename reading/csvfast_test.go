package reading

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// csvRecords reads all records with encoding/csv: records, start lines
// and the error as ReadData words it.
func csvRecords(in string, comma rune) ([][]string, []int, string) {
	cr := csv.NewReader(strings.NewReader(in))
	cr.Comma, cr.FieldsPerRecord = comma, -1
	var recs [][]string
	var lines []int
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return recs, lines, ""
		}
		if err != nil {
			return recs, lines, csvErr("x.csv", err).Error()
		}
		l, _ := cr.FieldPos(0)
		recs, lines = append(recs, rec), append(lines, l)
	}
}

func fastRecords(in string, comma rune) ([][]string, []int, string) {
	return fastRecordsFrom(strings.NewReader(in), comma)
}

func fastRecordsFrom(r io.Reader, comma rune) ([][]string, []int, string) {
	rr := newRecordReader(r, "x.csv", comma, false)
	var recs [][]string
	var lines []int
	for {
		rec, l, err := rr.read()
		if errors.Is(err, io.EOF) {
			return recs, lines, ""
		}
		if err != nil {
			return recs, lines, err.Error()
		}
		recs, lines = append(recs, append([]string(nil), rec...)), append(lines, l)
	}
}

// The record reader returns what encoding/csv returns — records, their
// first lines and errors — on random text of fields, quotes, doubled
// quotes, line ends (\n, \r\n, lone \r), empty lines and delimiters.
func TestRecordReaderAsEncodingCSV(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	atoms := []string{"a", "bc", "1.5", " ", ",", ";", "\"", "\"\"", "\n", "\r\n", "\r", "\n\n", "\"x,y\"", "\"p\nq\"", "é", "\t"}
	for i := range 20000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(atoms[rng.IntN(len(atoms))])
		}
		in := b.String()
		comma := []rune{',', ';', '\t', '€'}[i%4]
		wr, wl, we := csvRecords(in, comma)
		// whole, and read a byte or half a buffer at a time (lines cut
		// across the reader's blocks)
		for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in)), iotest.HalfReader(strings.NewReader(in))} {
			gr, gl, ge := fastRecordsFrom(r, comma)
			if !reflect.DeepEqual(gr, wr) || !reflect.DeepEqual(gl, wl) || ge != we {
				t.Fatalf("%q (delimiter %q):\nfast %q %v %q\ncsv  %q %v %q", in, comma, gr, gl, ge, wr, wl, we)
			}
		}
	}
}

// smallInt reads what strconv.ParseFloat reads, on the strings it takes.
func TestSmallIntAsParseFloat(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-12", "000123", "999999999999999", "-999999999999999", "1700000000", "1234567890123456", "1e3", "+5", "", "-", "1.5", " 1"} {
		x, ok := smallInt(s)
		if !ok {
			continue
		}
		y, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(x) != math.Float64bits(y) {
			t.Errorf("%q: smallInt %v, ParseFloat %v %v", s, x, y, err)
		}
	}
	if _, ok := smallInt("1234567890123456"); ok {
		t.Error("16 digits taken")
	}
}

// FuzzRecordReaderAsEncodingCSV: on any input the record reader returns
// what encoding/csv returns, read whole or a byte at a time.
func FuzzRecordReaderAsEncodingCSV(f *testing.F) {
	for _, s := range []string{"a,b,c\n1,2,3\n", "\"x,y\",z\r\n", "p;q\n\"a\"\"b\";c", "é€a€b\n"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, in string, d uint8) {
		comma := []rune{',', ';', '\t', '€'}[d%4]
		wr, wl, we := csvRecords(in, comma)
		for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
			gr, gl, ge := fastRecordsFrom(r, comma)
			if !reflect.DeepEqual(gr, wr) || !reflect.DeepEqual(gl, wl) || ge != we {
				t.Fatalf("%q (delimiter %q):\nfast %q %v %q\ncsv  %q %v %q", in, comma, gr, gl, ge, wr, wl, we)
			}
		}
	})
}

// trimSpace is strings.TrimSpace on every string of up to three bytes
// from a set with ASCII and Unicode spaces and printable characters.
func TestTrimSpaceAsStrings(t *testing.T) {
	parts := []string{"", " ", "\t", "a", "~", "\x7f", "\u00a0", "\u0085", "é", "\u2003", "\x00", "\xff"}
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range parts {
				s := a + b + c
				if got, want := trimSpace(s), strings.TrimSpace(s); got != want {
					t.Errorf("trimSpace(%q) = %q, want %q", s, got, want)
				}
			}
		}
	}
}
