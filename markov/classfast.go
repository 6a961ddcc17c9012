package markov

import (
	"encoding/json"
	"strconv"
)

// decodeClassFast decodes the common shape of a class file — an object
// with "states" (strings) and "chains" (objects with "transition", an array
// of arrays of numbers, and "initial", a string or an array of numbers),
// each key spelled exactly so, at most once, no escapes or non-ASCII bytes
// in strings — into the classFile encoding/json would give, or says false
// and the caller decodes with strictjson (which then also locates any
// error). It reads a 201-state class (1.4 MB) in a few milliseconds where
// the general decoder and its duplicate-key pass took about 55 ms. It
// never accepts what strictjson refuses: every byte is checked against the
// JSON grammar, and anything else — another key, a duplicate, an escape, a
// null, a number out of range, data after the document — is left to
// strictjson.
func decodeClassFast(data []byte) (classFile, bool) {
	p := fastParser{data: data}
	var f classFile
	ok := p.object(func(key string) bool {
		switch key {
		case "states":
			if f.States != nil {
				return false
			}
			f.States = []string{}
			return p.array(func() bool {
				s, ok := p.str()
				f.States = append(f.States, s)
				return ok
			})
		case "chains":
			if f.Chains != nil {
				return false
			}
			f.Chains = []chainFile{}
			return p.array(func() bool {
				var c chainFile
				ok := p.object(func(key string) bool {
					switch key {
					case "transition":
						if c.Transition != nil {
							return false
						}
						c.Transition = [][]float64{}
						return p.array(func() bool {
							row, ok := p.numbers()
							c.Transition = append(c.Transition, row)
							return ok
						})
					case "initial":
						if c.Initial != nil {
							return false
						}
						p.space()
						start := p.i
						var ok bool
						if p.i < len(p.data) && p.data[p.i] == '"' {
							_, ok = p.str()
						} else {
							_, ok = p.numbers()
						}
						// a copy, as encoding/json makes of a RawMessage
						c.Initial = json.RawMessage(append([]byte(nil), p.data[start:p.i]...))
						return ok
					}
					return false
				})
				f.Chains = append(f.Chains, c)
				return ok
			})
		}
		return false
	})
	if !ok {
		return classFile{}, false
	}
	p.space()
	return f, p.i == len(p.data)
}

// fastParser reads JSON for decodeClassFast; every method returns false
// on anything it does not accept.
type fastParser struct {
	data []byte
	i    int
}

func (p *fastParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next skips white space and consumes c if it comes next.
func (p *fastParser) next(c byte) bool {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// object reads {"key": value, …}, value read by member, which returns
// false to give up (unknown or repeated key).
func (p *fastParser) object(member func(key string) bool) bool {
	if !p.next('{') {
		return false
	}
	if p.next('}') {
		return true
	}
	for {
		p.space()
		key, ok := p.str()
		if !ok || !p.next(':') || !member(key) {
			return false
		}
		if p.next('}') {
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

// array reads [elem, …].
func (p *fastParser) array(elem func() bool) bool {
	if !p.next('[') {
		return false
	}
	if p.next(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if p.next(']') {
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

// str reads a string of printable ASCII without escapes.
func (p *fastParser) str() (string, bool) {
	if !p.next('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			s := string(p.data[start:p.i])
			p.i++
			return s, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", false
		}
		p.i++
	}
	return "", false
}

// numbers reads an array of numbers (a non-nil slice, as encoding/json
// gives for [] too).
func (p *fastParser) numbers() ([]float64, bool) {
	v := []float64{}
	ok := p.array(func() bool {
		x, ok := p.number()
		v = append(v, x)
		return ok
	})
	return v, ok
}

// number reads a JSON number (-?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?) and
// converts it as encoding/json does for a float64 (strconv.ParseFloat),
// refusing one out of range.
func (p *fastParser) number() (float64, bool) {
	p.space()
	d, start := p.data, p.i
	i := p.i
	digits := func() bool {
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		return 0, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	x, err := strconv.ParseFloat(string(d[start:i]), 64)
	if err != nil {
		return 0, false
	}
	p.i = i
	return x, true
}
