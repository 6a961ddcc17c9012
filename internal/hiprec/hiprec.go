// Package hiprec computes, in 256-bit arithmetic and independently of the
// calibration code, the exact privacy loss of one concrete output of
// per-step Laplace one-hot releases of an unbounded stationary two-state
// stream: every release at the vertex of K_R that favours the secret's
// first state (docs/math.md §8.3: for two states with P(0,0) ≥ P(1,0) this
// output attains the supremum). Tests use it as the reference a calibrated
// scale must never undercut, on chains so sticky that float64 formulas
// cancel (docs/math.md §8.9).
package hiprec

import "math/big"

const prec = 256

func f(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }

// exp is e^x by x/2^s in a Taylor series, then s squarings.
func exp(x *big.Float) *big.Float {
	s := 0
	y := new(big.Float).SetPrec(prec).Set(x)
	for y.Cmp(f(1e-3)) > 0 {
		y.Quo(y, f(2))
		s++
	}
	sum, term := f(1), f(1)
	for n := 1; n < 60; n++ {
		term.Mul(term, y)
		term.Quo(term, f(float64(n)))
		sum.Add(sum, term)
	}
	for range s {
		sum.Mul(sum, sum)
	}
	return sum
}

// Exceeds reports whether the concrete output loses more than eps at
// per-bin scale b on the stationary chain [[1−a, a], [c, 1−c]] (a, c the
// exact off-diagonal entries; the diagonals are 1 − a, 1 − c exactly), for
// either secret pair.
func Exceeds(a, c, b, eps float64) bool {
	R := exp(new(big.Float).SetPrec(prec).Quo(f(2), f(b)))
	lim := exp(f(eps))
	one := f(1)
	P := [2][2]*big.Float{
		{new(big.Float).SetPrec(prec).Sub(one, f(a)), f(a)},
		{f(c), new(big.Float).SetPrec(prec).Sub(one, f(c))},
	}
	for _, pr := range [][2]int{{0, 1}, {1, 0}} {
		x, y := pr[0], pr[1]
		// r = (R P[x][x] r + P[x][y]) / (R P[y][x] r + P[y][y]): the ratio of
		// the forward messages; its fixed point solves A r² + B r + C = 0.
		A := new(big.Float).SetPrec(prec).Mul(R, P[y][x])
		B := new(big.Float).SetPrec(prec).Mul(R, P[x][x])
		B.Sub(P[y][y], B)
		C := new(big.Float).SetPrec(prec).Neg(P[x][y])
		disc := new(big.Float).SetPrec(prec).Mul(B, B)
		ac := new(big.Float).SetPrec(prec).Mul(A, C)
		ac.Mul(ac, f(4))
		disc.Sub(disc, ac)
		disc.Sqrt(disc)
		r := new(big.Float).SetPrec(prec).Sub(disc, B)
		r.Quo(r, A)
		r.Quo(r, f(2))
		// two-state chains are reversible: the past's ratio is the same
		loss := new(big.Float).SetPrec(prec).Mul(R, r)
		loss.Mul(loss, r)
		if loss.Cmp(lim) > 0 {
			return true
		}
	}
	return false
}
