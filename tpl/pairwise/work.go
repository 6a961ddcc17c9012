package pairwise

import (
	"errors"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// ErrWork reports that a calibration stopped at Options.MaxWork.
var ErrWork = errors.New("pairwise: the bound's work limit was reached")

// sweeps is the number of certificate-map sweeps an unbounded calibration
// takes on slowly mixing chains (measured on the UCI house, 51 levels:
// about 600 per side, closed form), the basis of Work's estimate.
const sweeps = 1200

// newtonSweeps is the number of linear-program sweeps (all pairs, both
// directions) of an unbounded calibration's Newton phase (measured on the
// UCI house: about 40), the basis of WorkLP's estimate.
const newtonSweeps = 40

// DefaultMaxWork is the estimated work (Work, WorkLP) past which callers
// skip the bound by default: about 30 s of one core; the UCI house (51
// dense levels) estimates 3.9·10⁹ for the closed form and 1.8·10¹⁰ with
// the linear programs.
const DefaultMaxWork = 3e10

// supports returns the width of every row's support (columns lo..hi−1).
func supports(ch *markov.Chain) []float64 {
	k := ch.K()
	width := make([]float64, k)
	for a, row := range ch.P {
		lo, hi := k, 0
		for j, v := range row {
			if v > 0 {
				lo, hi = min(lo, j), j+1
			}
		}
		width[a] = float64(max(hi-lo, 0))
	}
	return width
}

// Work estimates the work (about a nanosecond of one core each) of the
// pairwise calibration of class before any work: per chain, the
// functional recursion's where it runs by default (fnWork), else the
// closed form's from its sparsity alone — per sweep, every ordered pair
// of rows costs |supp e|·|supp q| (docs/math.md (8.11)) plus the
// closure's k³, times the sweeps of a slowly mixing chain. A single Loss
// at a given scale costs less.
func Work(class *markov.Class) float64 {
	w := 0.0
	for _, ch := range class.Chains {
		if fw, ok := fnWork(ch); ok {
			w += fw
		} else {
			w += cfWork(ch)
		}
	}
	return w
}

// cfWork is the closed form's term of Work for one chain.
func cfWork(ch *markov.Chain) float64 {
	k := ch.K()
	sum := 0.0
	for _, x := range supports(ch) {
		sum += x
	}
	// Σ_{a≠b} width_a·width_b/2: e has about half a row's support.
	return ((sum*sum)/2 + float64(k*k*k)) * sweeps
}

// lpWork is the linear programs' term of WorkLP for one chain: every
// ordered pair's LP has m = |supp p| + |supp q| constraints and costs
// about m³/8 (a factorisation of its basis, measured on the UCI house),
// newtonSweeps times.
func lpWork(ch *markov.Chain) float64 {
	wd := supports(ch)
	sweep := 0.0
	for a, x := range wd {
		for b, y := range wd {
			if a != b {
				m := x + y
				sweep += m * m * m / 8
			}
		}
	}
	return sweep * newtonSweeps
}

// WorkLP is Work plus the estimated work of the linear programs' Newton
// phase (docs/math.md §8.11, lpWork) on the chains the functional
// recursion leaves to the plans.
func WorkLP(class *markov.Class) float64 {
	w := Work(class)
	for _, ch := range class.Chains {
		if _, ok := fnWork(ch); !ok {
			w += lpWork(ch)
		}
	}
	return w
}

// CheapLP reports whether the linear programs are cheap enough for the
// finite recursion (T > 0, docs/math.md §8.11), which solves all k² pairs'
// LPs at every one of T steps: at most lpMaxStates states and every row's
// support within lpMaxWidth columns. An unbounded stream's calibration
// solves them a few dozen times (Newton's method): WorkLP prices it.
func CheapLP(class *markov.Class) bool {
	if len(class.States) > lpMaxStates {
		return false
	}
	for _, ch := range class.Chains {
		for _, x := range supports(ch) {
			if x > lpMaxWidth {
				return false
			}
		}
	}
	return true
}

const (
	lpMaxStates = 16
	lpMaxWidth  = 12
)

// sweepWork returns the work of one closed-form sweep of kn (the terms of
// Work) and of one LP sweep (those of WorkLP), from the supports' widths.
func (kn *kernel) sweepWork() (cf, lp float64) {
	if kn.cfWork > 0 {
		return kn.cfWork, kn.lpWork
	}
	k := kn.k
	sum := 0.0
	w := make([]float64, k)
	for a := range k {
		if !kn.dead[a] {
			w[a] = float64(kn.hi[a] - kn.lo[a])
			sum += w[a]
		}
	}
	for a, x := range w {
		for b, y := range w {
			if a != b {
				m := x + y
				lp += m * m * m / 8
			}
		}
	}
	kn.cfWork, kn.lpWork = sum*sum/2+float64(k*k*k), lp
	return kn.cfWork, kn.lpWork
}
