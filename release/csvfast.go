package release

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// recordReader reads CSV records exactly as encoding/csv's Reader does
// (FieldsPerRecord −1, no comments, strict quotes) and numbers them by
// their first line, but splits a line without quotes itself: most data
// lines have none, and splitting them is several times faster than the
// general parser. A record with a quote (which may span lines) is given
// to encoding/csv whole: its lines up to the first line end outside
// quotes (an even number of quotes so far).
type recordReader struct {
	br     *bufio.Reader
	name   string
	comma  rune
	line   int // lines read
	fields []string
	buf    []byte
	raw    []byte
}

func newRecordReader(r io.Reader, name string, comma rune) *recordReader {
	return &recordReader{br: bufio.NewReaderSize(r, 1<<16), name: name, comma: comma}
}

// readLine returns the next line without its line end ("\n", "\r\n", or
// a final "\r" before the end of input), and whether there was one; the
// line as read is rr.raw.
func (rr *recordReader) readLine() ([]byte, bool, error) {
	l, err := rr.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		rr.buf = append(rr.buf[:0], l...)
		for err == bufio.ErrBufferFull {
			l, err = rr.br.ReadSlice('\n')
			rr.buf = append(rr.buf, l...)
		}
		l = rr.buf
	}
	if len(l) == 0 {
		if err == nil {
			err = io.EOF
		}
		return nil, false, err
	}
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	rr.raw = l
	if l[len(l)-1] == '\n' {
		l = l[:len(l)-1]
		if len(l) > 0 && l[len(l)-1] == '\r' {
			l = l[:len(l)-1]
		}
	} else if l[len(l)-1] == '\r' { // a final \r before the end
		l = l[:len(l)-1]
	}
	return l, true, nil
}

// read returns the next record and the line it starts on; io.EOF at the
// end; other errors name the file (and line).
func (rr *recordReader) read() ([]string, int, error) {
	for {
		l, ok, err := rr.readLine()
		if !ok {
			if err == io.EOF {
				return nil, 0, io.EOF
			}
			return nil, 0, csvErr(rr.name, err)
		}
		rr.line++
		if len(l) == 0 {
			continue // encoding/csv skips empty lines
		}
		start := rr.line
		if bytes.IndexByte(l, '"') < 0 {
			s := string(l)
			rr.fields = rr.fields[:0]
			if rr.comma < utf8.RuneSelf {
				c := byte(rr.comma)
				for {
					i := strings.IndexByte(s, c)
					if i < 0 {
						break
					}
					rr.fields = append(rr.fields, s[:i])
					s = s[i+1:]
				}
			} else {
				sep := string(rr.comma)
				for {
					i := strings.Index(s, sep)
					if i < 0 {
						break
					}
					rr.fields = append(rr.fields, s[:i])
					s = s[i+len(sep):]
				}
			}
			rr.fields = append(rr.fields, s)
			return rr.fields, start, nil
		}
		// quotes: the record's lines, then encoding/csv
		chunk := append([]byte(nil), rr.raw...)
		for bytes.Count(chunk, []byte{'"'})%2 == 1 {
			_, ok, err := rr.readLine()
			if !ok {
				if err != io.EOF {
					return nil, 0, csvErr(rr.name, err)
				}
				break
			}
			rr.line++
			chunk = append(chunk, rr.raw...)
		}
		cr := csv.NewReader(bytes.NewReader(chunk))
		cr.Comma = rr.comma
		cr.FieldsPerRecord = -1
		rec, err := cr.Read()
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				pe.StartLine += start - 1
				pe.Line += start - 1
			}
			return nil, 0, csvErr(rr.name, err)
		}
		if _, err := cr.Read(); err != io.EOF {
			// cannot happen: the chunk ends at the record's end
			return nil, 0, fmt.Errorf("%s:%d: a quoted record that does not end at a line end", rr.name, start)
		}
		rr.fields = append(rr.fields[:0], rec...)
		return rr.fields, start, nil
	}
}
