package reading

import (
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
//
// The input is read in blocks, each converted to one string whose
// substrings are the lines and fields: one allocation per block, not per
// line (a field kept for long — a series name, a time as written — keeps
// its block alive; the streaming reader copies what it keeps). Lines
// longer than maxLine are refused before they are buffered whole, and a
// read error is returned after the whole lines read before it, naming
// the last of them.
type recordReader struct {
	r      io.Reader
	name   string
	gzip   bool
	comma  rune
	line   int // lines returned
	fields []string
	blk    string // the unread part of the input read so far is blk[pos:]
	pos    int
	chunk  []byte
	err    error // the read error, returned once blk is used up
	raw    string
}

func newRecordReader(r io.Reader, name string, comma rune, gzipped bool) *recordReader {
	return &recordReader{r: r, name: name, gzip: gzipped, comma: comma, chunk: make([]byte, 1<<16)}
}

// readLine returns the next line without its line end ("\n", "\r\n", or
// a final "\r" before the end of input), and whether there was one; the
// line as read is rr.raw.
func (rr *recordReader) readLine() (string, bool, error) {
	for {
		rest := rr.blk[rr.pos:]
		i := strings.IndexByte(rest, '\n')
		if i < 0 && rr.err != nil {
			if len(rest) == 0 || rr.err != io.EOF {
				return "", false, rr.err // a line cut by a read error is not read
			}
			i = len(rest) - 1 // the last line, without a line end
		}
		if i >= 0 {
			l := rest[:i+1]
			if len(strings.TrimSuffix(l, "\n")) > maxLine {
				return "", false, inputError{fmt.Errorf("%s:%d: line longer than %d bytes", rr.name, rr.line+1, maxLine)}
			}
			rr.pos += i + 1
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
		if len(rest) > maxLine { // the byte that makes the line too long
			return "", false, inputError{fmt.Errorf("%s:%d: line longer than %d bytes", rr.name, rr.line+1, maxLine)}
		}
		n, err := rr.r.Read(rr.chunk)
		if n > 0 {
			// one allocation: the rest of the block and what was read
			var b strings.Builder
			b.Grow(len(rest) + n)
			b.WriteString(rest)
			b.Write(rr.chunk[:n])
			rr.blk, rr.pos = b.String(), 0
		}
		if err != nil {
			if err != io.EOF {
				what := "reading stopped"
				if rr.gzip {
					what = "the gzip stream is cut short or corrupt"
				}
				whole := rr.line + strings.Count(rr.blk[rr.pos:], "\n")
				err = inputError{fmt.Errorf("%s: %s after line %d (the last whole line read): %w", rr.name, what, whole, err)}
			}
			rr.err = err
		}
	}
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
		if rr.comma < utf8.RuneSelf {
			// one pass over the line for the separators and any quote: lines
			// are short, so a byte loop beats one IndexByte call per field
			c, from, quoted := byte(rr.comma), 0, false
			rr.fields = rr.fields[:0]
			for i := 0; i < len(l); i++ {
				if b := l[i]; b == c {
					rr.fields = append(rr.fields, l[from:i])
					from = i + 1
				} else if b == '"' {
					quoted = true
					break
				}
			}
			if !quoted {
				rr.fields = append(rr.fields, l[from:])
				return rr.fields, start, nil
			}
		} else if strings.IndexByte(l, '"') < 0 {
			s, sep := l, string(rr.comma)
			rr.fields = rr.fields[:0]
			for {
				i := strings.Index(s, sep)
				if i < 0 {
					break
				}
				rr.fields = append(rr.fields, s[:i])
				s = s[i+len(sep):]
			}
			rr.fields = append(rr.fields, s)
			return rr.fields, start, nil
		}
		// quotes: the record's lines, then encoding/csv
		chunk := []byte(rr.raw)
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
