package hmm

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// Epsilon is a privacy level with a certified enclosure of e^ε:
// Lo ≤ e^ε ≤ Hi, both rational. Lo == Hi exactly when ε was written
// ln(r) for a rational r.
type Epsilon struct {
	Text   string
	Value  float64
	Lo, Hi *big.Rat
}

// Exact reports whether e^ε is known exactly.
func (e Epsilon) Exact() bool { return e.Lo.Cmp(e.Hi) == 0 }

// ParseEpsilon reads "ln(2)", "ln(3/2)", "ln(1.5)" (e^ε rational and
// exact) or a plain number "0.5", "1/3" (ε rational; e^ε enclosed by a
// Taylor series evaluated with directed rounding, 256-bit precision).
func ParseEpsilon(s string) (Epsilon, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "ln(") && strings.HasSuffix(t, ")") {
		r, err := ratexpr.Eval(t[3:len(t)-1], nil)
		if err != nil {
			return Epsilon{}, fmt.Errorf("epsilon %q: %v", s, err)
		}
		if r.Cmp(big.NewRat(1, 1)) <= 0 {
			return Epsilon{}, fmt.Errorf("epsilon %q: need ln(r) with r > 1", s)
		}
		return Epsilon{Text: t, Value: LogRat(r), Lo: r, Hi: r}, nil
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
	lo, hi := expEnclosure(x)
	f, _ := x.Float64()
	return Epsilon{Text: t, Value: f, Lo: lo, Hi: hi}, nil
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

// Verdict is the outcome of Check.
type Verdict string

const (
	Holds     Verdict = "holds"
	Violated  Verdict = "violated"
	Undecided Verdict = "undecided" // the loss lies inside the enclosure of e^ε
)

// Check decides ε-Pufferfish privacy for every observation sequence of
// lengths 1..n and every secret pair: it computes the exact loss (Loss)
// and compares its ratio with e^ε — exactly when e^ε is rational, else
// with the enclosure (Undecided only if the ratio falls inside it).
func Check(m *Model, secrets []Secret, n int, eps Epsilon) (Verdict, Result, error) {
	r, err := Loss(m, secrets, n)
	if err != nil {
		return "", r, err
	}
	return verdictOf(r, eps), r, nil
}

// verdictOf compares an exact loss with e^ε.
func verdictOf(r Result, eps Epsilon) Verdict {
	switch {
	case r.Ratio == nil || r.Ratio.Cmp(eps.Hi) > 0:
		return Violated
	case r.Ratio.Cmp(eps.Lo) <= 0:
		return Holds
	}
	return Undecided
}
