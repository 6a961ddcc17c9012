// Package ratexpr evaluates exact rational expressions: the probability
// syntax shared by every JSON input of the toolkit (HMM models, Pufferfish
// frameworks, Bayesian networks). Numbers are read exactly as decimals or
// fractions ("0.05" is 1/20, never the nearest float64), so a verdict computed
// from them is about the model the user wrote, not about its rounding.
package ratexpr

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// IsIdent reports whether s can name a parameter: a letter or underscore
// followed by letters, digits or underscores.
func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// JSON evaluates a JSON number or string exactly: a number is read as the
// decimal it spells, a string as an expression (see Eval).
func JSON(raw json.RawMessage, params map[string]*big.Rat) (*big.Rat, error) {
	s := strings.TrimSpace(string(raw))
	if strings.HasPrefix(s, "\"") {
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return nil, err
		}
		s = str
	}
	return Eval(s, params)
}

// Limits that keep exact arithmetic bounded: a decimal exponent beyond
// ±MaxExponent would make numerators and denominators of thousands of
// digits (10^−1000000 is a million digits), and every later product grows
// with them.
const (
	MaxExponent = 1000
	MaxLiteral  = 1000
	MaxExpr     = 10000
)

// Eval evaluates an arithmetic expression over rationals: numbers
// ("1/6", "0.25", "2"), parameter names, + − * / and parentheses.
func Eval(expr string, params map[string]*big.Rat) (*big.Rat, error) {
	if len(expr) > MaxExpr {
		return nil, fmt.Errorf("expression of %d characters, at most %d", len(expr), MaxExpr)
	}
	p := &exprParser{s: expr, params: params}
	v, err := p.sum()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("%q: unexpected %q at offset %d", expr, p.s[p.i:], p.i)
	}
	return v, nil
}

type exprParser struct {
	s      string
	i      int
	params map[string]*big.Rat
}

func (p *exprParser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *exprParser) sum() (*big.Rat, error) {
	v, err := p.product()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		if p.i >= len(p.s) || (p.s[p.i] != '+' && p.s[p.i] != '-') {
			return v, nil
		}
		op := p.s[p.i]
		p.i++
		w, err := p.product()
		if err != nil {
			return nil, err
		}
		if op == '+' {
			v = new(big.Rat).Add(v, w)
		} else {
			v = new(big.Rat).Sub(v, w)
		}
	}
}

func (p *exprParser) product() (*big.Rat, error) {
	v, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		if p.i >= len(p.s) || (p.s[p.i] != '*' && p.s[p.i] != '/') {
			return v, nil
		}
		op := p.s[p.i]
		p.i++
		w, err := p.unary()
		if err != nil {
			return nil, err
		}
		if op == '*' {
			v = new(big.Rat).Mul(v, w)
		} else {
			if w.Sign() == 0 {
				return nil, fmt.Errorf("%q: division by zero", p.s)
			}
			v = new(big.Rat).Quo(v, w)
		}
	}
}

func (p *exprParser) unary() (*big.Rat, error) {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
		v, err := p.unary()
		if err != nil {
			return nil, err
		}
		return new(big.Rat).Neg(v), nil
	}
	return p.atom()
}

func (p *exprParser) atom() (*big.Rat, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("%q: expression ends early", p.s)
	}
	c := p.s[p.i]
	switch {
	case c == '(':
		p.i++
		v, err := p.sum()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("%q: missing )", p.s)
		}
		p.i++
		return v, nil
	case c >= '0' && c <= '9' || c == '.':
		j := p.i
		for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '.' || p.s[j] == 'e' || p.s[j] == 'E' ||
			((p.s[j] == '+' || p.s[j] == '-') && j > p.i && (p.s[j-1] == 'e' || p.s[j-1] == 'E'))) {
			j++
		}
		lit := p.s[p.i:j]
		if len(lit) > MaxLiteral {
			return nil, fmt.Errorf("%q: number of %d characters, at most %d", p.s, len(lit), MaxLiteral)
		}
		if k := strings.IndexAny(lit, "eE"); k >= 0 {
			if e, err := strconv.Atoi(lit[k+1:]); err != nil || e > MaxExponent || e < -MaxExponent {
				return nil, fmt.Errorf("%q: exponent of %q beyond ±%d", p.s, lit, MaxExponent)
			}
		}
		v, ok := new(big.Rat).SetString(lit)
		if !ok {
			return nil, fmt.Errorf("%q: bad number %q", p.s, p.s[p.i:j])
		}
		p.i = j
		return v, nil
	case unicode.IsLetter(rune(c)) || c == '_':
		j := p.i
		for j < len(p.s) && (unicode.IsLetter(rune(p.s[j])) || unicode.IsDigit(rune(p.s[j])) || p.s[j] == '_') {
			j++
		}
		name := p.s[p.i:j]
		v, ok := p.params[name]
		if !ok {
			return nil, fmt.Errorf("%q: unknown parameter %q", p.s, name)
		}
		p.i = j
		return new(big.Rat).Set(v), nil
	}
	return nil, fmt.Errorf("%q: unexpected %q", p.s, string(c))
}
