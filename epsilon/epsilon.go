// Package epsilon reads a privacy level ε the one way every entry point
// writes it — the CLI's --epsilon flags, the service's JSON fields and
// query parameters, the Beam pipeline — so all accept and refuse exactly
// the same values with the same words: a decimal ("0.5"), a fraction
// ("1/2") or ln(r) for a rational r > 1 ("ln(2)", "ln(3/2)"), with
// 0 < ε ≤ checks.MaxEpsilon.
//
// ε is kept exact: a decimal or fraction as the rational it spells (Rat),
// ln(r) as r = e^ε itself; either way Lo ≤ e^ε ≤ Hi is a certified
// rational enclosure (Lo == Hi exactly for ln(r)).
package epsilon

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// Epsilon is a privacy level as written (Text), its float64 value, the
// rational ε when it was written as a number (nil for ln(r)) and a
// certified enclosure Lo ≤ e^ε ≤ Hi.
type Epsilon struct {
	Text   string
	Value  float64
	Rat    *big.Rat
	Lo, Hi *big.Rat
}

// Exact reports whether e^ε is known exactly (ε written ln(r)).
func (e Epsilon) Exact() bool { return e.Lo.Cmp(e.Hi) == 0 }

// Parse reads "ln(2)", "ln(3/2)", "ln(1.5)" (e^ε rational and exact) or a
// plain number "0.5", "1/3" (ε rational; e^ε enclosed by a Taylor series
// evaluated with directed rounding, 256-bit precision), and checks
// 0 < ε ≤ checks.MaxEpsilon.
func Parse(s string) (Epsilon, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "ln(") && strings.HasSuffix(t, ")") {
		r, err := ratexpr.Eval(t[3:len(t)-1], nil)
		if err != nil {
			return Epsilon{}, fmt.Errorf("epsilon %q: %v", s, err)
		}
		if r.Cmp(big.NewRat(1, 1)) <= 0 {
			return Epsilon{}, fmt.Errorf("epsilon %q: need ln(r) with r > 1", s)
		}
		v := LogRat(r)
		if checks.Epsilon(v) != nil || v > checks.MaxEpsilon {
			return Epsilon{}, fmt.Errorf("epsilon %q: want 0 < ε ≤ %d", s, checks.MaxEpsilon)
		}
		return Epsilon{Text: t, Value: v, Lo: r, Hi: r}, nil
	}
	x, err := ratexpr.Eval(t, nil)
	if err != nil {
		return Epsilon{}, fmt.Errorf("epsilon %q: %v (write ln(2) for an exact e^ε)", s, err)
	}
	if x.Sign() <= 0 {
		return Epsilon{}, fmt.Errorf("epsilon %q: must be > 0", s)
	}
	if x.Cmp(big.NewRat(checks.MaxEpsilon, 1)) > 0 {
		return Epsilon{}, fmt.Errorf("epsilon %q: too large, want 0 < ε ≤ %d", s, checks.MaxEpsilon)
	}
	f, _ := x.Float64()
	if checks.Epsilon(f) != nil {
		return Epsilon{}, fmt.Errorf("epsilon %q: want 0 < ε ≤ %d (too small for a float64)", s, checks.MaxEpsilon)
	}
	lo, hi := expEnclosure(x)
	return Epsilon{Text: t, Value: f, Rat: x, Lo: lo, Hi: hi}, nil
}

// ParseJSON reads ε from a JSON value: a number (0.5) or a string holding
// what Parse reads ("ln(2)", "1/2", "0.5").
func ParseJSON(raw json.RawMessage) (Epsilon, error) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return Epsilon{}, fmt.Errorf("epsilon is required: a number > 0, a fraction such as \"1/2\" or \"ln(2)\"")
	case strings.HasPrefix(s, `"`):
		var str string
		if err := json.Unmarshal([]byte(s), &str); err != nil {
			return Epsilon{}, fmt.Errorf("epsilon %s: %v", s, err)
		}
		return Parse(str)
	case strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") || s == "true" || s == "false":
		return Epsilon{}, fmt.Errorf("epsilon %s: want a number > 0 or a string such as \"ln(2)\"", s)
	}
	var n json.Number
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		return Epsilon{}, fmt.Errorf("epsilon %s: want a number > 0 or a string such as \"ln(2)\"", s)
	}
	return Parse(n.String())
}

// LogRat is ln r for a positive rational, accurate for any size.
func LogRat(r *big.Rat) float64 {
	num, den := r.Num(), r.Denom()
	// r = (num / 2^a) / (den / 2^b) · 2^(a−b) with both parts in float range.
	a, b := max(num.BitLen()-60, 0), max(den.BitLen()-60, 0)
	fn, _ := new(big.Float).SetInt(new(big.Int).Rsh(num, uint(a))).Float64()
	fd, _ := new(big.Float).SetInt(new(big.Int).Rsh(den, uint(b))).Float64()
	return math.Log(fn) - math.Log(fd) + float64(a-b)*math.Ln2
}

// expEnclosure returns rationals lo ≤ e^x ≤ hi for rational 0 < x ≤ 700:
// e^x = (e^y)^(2^s) with y = x/2^s ≤ 1/2; e^y ≥ Σ_{j≤K} y^j/j! (positive
// terms) and e^y ≤ that sum + 2·y^(K+1)/(K+1)! (the tail is dominated by a
// geometric series of ratio ≤ 1/2); every operation rounds toward −∞ for
// lo and +∞ for hi.
func expEnclosure(x *big.Rat) (*big.Rat, *big.Rat) {
	const prec = 256
	const K = 80
	s := 0
	y := new(big.Rat).Set(x)
	for y.Cmp(big.NewRat(1, 2)) > 0 {
		y.Quo(y, big.NewRat(2, 1))
		s++
	}
	bound := func(mode big.RoundingMode) *big.Float {
		nf := func() *big.Float { return new(big.Float).SetPrec(prec).SetMode(mode) }
		yf := nf().SetRat(y)
		sum := nf().SetInt64(1)
		term := nf().SetInt64(1)
		for j := 1; j <= K; j++ {
			term.Mul(term, yf)
			term.Quo(term, nf().SetInt64(int64(j)))
			sum.Add(sum, term)
		}
		if mode == big.ToPositiveInf {
			rem := nf().Mul(term, yf)
			rem.Quo(rem, nf().SetInt64(K+1))
			rem.Mul(rem, nf().SetInt64(2))
			sum.Add(sum, rem)
		}
		for range s {
			sum.Mul(sum, sum)
		}
		return sum
	}
	lo, _ := bound(big.ToNegativeInf).Rat(nil)
	hi, _ := bound(big.ToPositiveInf).Rat(nil)
	return lo, hi
}
