// Package strictjson decodes the toolkit's JSON inputs (class files, HMM
// models, Pufferfish frameworks, release logs) one way: exactly one JSON
// document, no unknown fields, no duplicate keys at any depth (encoding/json
// would silently keep the last), nothing after the document, and every error
// located by line and column.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Decode reads one JSON document from data into v. name prefixes errors.
func Decode(data []byte, name string, v any) error {
	if err := checkDuplicates(data); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %s", name, locate(data, err, dec.InputOffset()))
	}
	if _, err := dec.Token(); err != io.EOF {
		off := dec.InputOffset()
		return fmt.Errorf("%s: %s: unexpected data after the JSON document", name, Position(data, skipSpace(data, off)))
	}
	return nil
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.ContainsRune(" \t\r\n", rune(data[off])) {
		off++
	}
	return off
}

// Position is "line L, column C" of a byte offset (both 1-based).
func Position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// locate adds the position to a decoding error.
func locate(data []byte, err error, at int64) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("%s: %v", Position(data, se.Offset-1), err) // Offset is just past the bad byte
	case errors.As(err, &te):
		return fmt.Sprintf("%s: %v", Position(data, te.Offset), err)
	case err == io.EOF:
		return "empty input: want one JSON document"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("%s: the JSON document ends early", Position(data, int64(len(data))))
	}
	// unknown fields: encoding/json gives no offset; the decoder stopped
	// just after the offending key.
	return fmt.Sprintf("%s: %v", Position(data, at), err)
}

// checkDuplicates walks the token stream and refuses an object with a key
// twice.
func checkDuplicates(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		obj     bool
		keys    map[string]bool
		wantKey bool
	}
	var stack []*frame
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // syntax errors are reported, located, by Decode
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, wantKey: true})
			case '[':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &frame{})
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 {
				return nil // trailing data is reported by Decode
			}
			continue
		}
		if top != nil && top.obj {
			if top.wantKey {
				k := tok.(string)
				if top.keys[k] {
					return fmt.Errorf("%s: duplicate key %q", Position(data, skipSpace(data, skipComma(data, start))), k)
				}
				top.keys[k] = true
				top.wantKey = false
			} else {
				top.wantKey = true
			}
		}
	}
}

func skipComma(data []byte, off int64) int64 {
	off = skipSpace(data, off)
	if off < int64(len(data)) && (data[off] == ',' || data[off] == ':') {
		off++
	}
	return off
}

// MaxInput is the largest JSON input read (64 MiB): a class, model,
// framework or log is far smaller, and a path to a device or a runaway
// file must not exhaust memory.
const MaxInput = 64 << 20

// ReadAll reads r up to MaxInput bytes; a longer input is an error.
func ReadAll(r io.Reader, name string) ([]byte, error) {
	data, over, err := ReadUpTo(r, name, MaxInput)
	if over {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, MaxInput)
	}
	return data, err
}

// ReadUpTo reads r (named name in errors) up to max bytes; over reports
// that r holds more, and then data is nil.
func ReadUpTo(r io.Reader, name string, max int) (data []byte, over bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > max {
		return nil, true, nil
	}
	return data, false, nil
}

// Float is a float64 that JSON prints as null when it is infinite or NaN
// (JSON has no infinity); a field of this type documents what null means.
type Float float64

// MarshalJSON writes null for ±Inf and NaN.
func (v Float) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// AddField is the JSON object obj with one more field name: val (obj
// unchanged when val is nil or obj is not an object): how a release's
// report gains its ledger state, in the CLI and the service alike.
func AddField(obj json.RawMessage, name string, val any) json.RawMessage {
	if val == nil {
		return obj
	}
	f, err := json.Marshal(val)
	t := bytes.TrimSpace(obj)
	if err != nil || len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return obj
	}
	k, _ := json.Marshal(name)
	out := append([]byte{}, t[:len(t)-1]...)
	if len(bytes.TrimSpace(t[1:len(t)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(append(append(out, k...), ':'), f...)
	return append(out, '}')
}
