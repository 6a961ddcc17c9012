package pairwise

import (
	"context"
	"errors"
	"math"
)

// ratioMap is one certificate map Φ on a kernel: out = Φ(Λ) at R (every
// entry of out an upper bound on the plan's exact ratio when up > 1: the
// rounding allowance of Certify; the iteration uses up = 1).
type ratioMap func(ctx context.Context, kn *kernel, lam []float64, R, up float64, out []float64) error

// cfMap is Φ_cf (docs/math.md §8.11).
func cfMap(ctx context.Context, kn *kernel, lam []float64, R, up float64, out []float64) error {
	G := gamma(lam, kn.k, R*up, up)
	rc := kn.rowCharge(up)
	return kn.sweep(ctx, out, func(a, b int, buf []float64) float64 {
		return kn.cfRounded(a, b, G, buf, up) * rc
	})
}

// fpSide is one direction of an unbounded stream: a kernel, the current
// estimate of the least fixed point of its (clamped) certificate map, and
// the scalar recursion's bound (clamp, at the current R; nil: none).
type fpSide struct {
	kn    *kernel
	lam   []float64
	clamp []float64
	out   []float64
	// plans, when set, are the stored LP plans the map uses instead of
	// the closed form (plan iteration, planStore.phi).
	plans *planStore
}

func newFPSide(kn *kernel) *fpSide {
	k := kn.k
	s := &fpSide{kn: kn, lam: make([]float64, k*k), out: make([]float64, k*k)}
	for i := range s.lam {
		s.lam[i] = 1
	}
	for a := range k {
		for b := range k {
			if a != b && (kn.dead[a] || kn.dead[b]) {
				s.lam[a*k+b] = math.Inf(1)
			}
		}
	}
	return s
}

// step applies the clamped map once: out = min(Φ(lam), clamp).
func (s *fpSide) step(ctx context.Context, phi ratioMap, R, up float64) error {
	if err := phi(ctx, s.kn, s.lam, R, up, s.out); err != nil {
		return err
	}
	if s.clamp != nil {
		for i, c := range s.clamp {
			s.out[i] = min(s.out[i], c)
		}
	}
	return nil
}

// Iteration limits of the fixed-point search.
const (
	maxSweeps = 5000 // sweeps of one solve before giving up (then no certificate)
)

var errNoConvergence = errors.New("pairwise: the fixed-point iteration did not converge")

// solve finds the fixed point of x ↦ min(Φ(x), clamp) from the fpSide's
// current estimate (a warm start) by Anderson acceleration of the value
// iteration, in log ratios (memory andersonM): plain value iteration
// converges like ρⁿ with ρ close to 1 on slowly mixing chains (hundreds of
// sweeps on 51 levels). It stops when the residual ‖log Φ(x) − x‖∞ is below
// resTol. The estimate need not be a bound: only a certified one is ever
// used (Certify, docs/math.md §8.11). It returns the number of sweeps.
//
// When the largest log ratio of an iterate passes giveUp (a loss far above
// the target: the fixed point is there or beyond, or there is none), it
// stops with errNoConvergence: the search treats the scale as too small.
func (s *fpSide) solve(ctx context.Context, phi ratioMap, R, giveUp float64) (int, error) {
	k := s.kn.k
	n := k * k
	var idx []int // the finite off-diagonal entries
	for i := range n {
		if i/k != i%k && !math.IsInf(s.lam[i], 1) {
			idx = append(idx, i)
		}
	}
	d := len(idx)
	if d == 0 {
		return 0, nil
	}
	x := make([]float64, d)
	g := make([]float64, d)
	f := make([]float64, d)
	for i, e := range idx {
		x[i] = math.Log(s.lam[e])
	}
	var dF, dG [][]float64 // history of differences, oldest first
	var fPrev, gPrev []float64
	best := math.Inf(1)
	stall := 0
	for sweep := 1; sweep <= maxSweeps; sweep++ {
		for i, e := range idx {
			s.lam[e] = math.Exp(x[i])
		}
		if err := s.step(ctx, phi, R, 1); err != nil {
			return sweep, err
		}
		res := 0.0
		for i, e := range idx {
			v := s.out[e]
			if math.IsInf(v, 1) || math.IsNaN(v) {
				return sweep, errNoConvergence
			}
			g[i] = math.Log(v)
			f[i] = g[i] - x[i]
			res = max(res, math.Abs(f[i]))
		}
		if sweep%25 == 0 {
			top := 0.0
			for _, v := range g {
				top = max(top, v)
			}
			// An accelerated iterate may overshoot: give up only near a
			// fixed point (small residual) or far beyond.
			if top > giveUp && (res < 1e-3*top || top > 50*giveUp) {
				return sweep, errNoConvergence
			}
		}
		if res < resTol {
			for i, e := range idx {
				s.lam[e] = math.Exp(g[i])
			}
			return sweep, nil
		}
		if res < best*0.999 {
			best, stall = res, 0
		} else if stall++; stall > 30 {
			dF, dG, fPrev = nil, nil, nil // restart the acceleration
			stall = 0
			best = res
		}
		if fPrev != nil {
			df := make([]float64, d)
			dg := make([]float64, d)
			for i := range d {
				df[i] = f[i] - fPrev[i]
				dg[i] = g[i] - gPrev[i]
			}
			dF, dG = append(dF, df), append(dG, dg)
			if len(dF) > andersonM {
				dF, dG = dF[1:], dG[1:]
			}
		}
		fPrev = append(fPrev[:0], f...)
		gPrev = append(gPrev[:0], g...)
		copy(x, g)
		if gam := leastSquares(dF, f); gam != nil {
			for j, c := range gam {
				for i := range d {
					x[i] -= c * dG[j][i]
				}
			}
		}
		for i := range x {
			if !(x[i] >= 0) { // a ratio bound is never below 1
				x[i] = 0
			}
		}
	}
	return maxSweeps, errNoConvergence
}

// Anderson acceleration parameters.
const (
	andersonM = 6
	resTol    = 1e-11
)

// leastSquares solves min_γ ‖f − Σ γ_j A_j‖₂ by the normal equations with a
// small Tikhonov term; nil when there is no history or it is singular.
func leastSquares(A [][]float64, f []float64) []float64 {
	m := len(A)
	if m == 0 {
		return nil
	}
	M := make([]float64, m*(m+1))
	scale := 0.0
	for a := range m {
		for b := a; b < m; b++ {
			v := 0.0
			for i, x := range A[a] {
				v += x * A[b][i]
			}
			M[a*(m+1)+b], M[b*(m+1)+a] = v, v
		}
		scale = max(scale, M[a*(m+1)+a])
		v := 0.0
		for i, x := range A[a] {
			v += x * f[i]
		}
		M[a*(m+1)+m] = v
	}
	if scale == 0 {
		return nil
	}
	for a := range m {
		M[a*(m+1)+a] += 1e-12 * scale
	}
	// Gaussian elimination with partial pivoting on the m×(m+1) system.
	for c := range m {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(M[r*(m+1)+c]) > math.Abs(M[p*(m+1)+c]) {
				p = r
			}
		}
		if M[p*(m+1)+c] == 0 {
			return nil
		}
		for j := range m + 1 {
			M[c*(m+1)+j], M[p*(m+1)+j] = M[p*(m+1)+j], M[c*(m+1)+j]
		}
		for r := c + 1; r < m; r++ {
			q := M[r*(m+1)+c] / M[c*(m+1)+c]
			for j := c; j <= m; j++ {
				M[r*(m+1)+j] -= q * M[c*(m+1)+j]
			}
		}
	}
	gam := make([]float64, m)
	for c := m - 1; c >= 0; c-- {
		v := M[c*(m+1)+m]
		for j := c + 1; j < m; j++ {
			v -= M[c*(m+1)+j] * gam[j]
		}
		gam[c] = v / M[c*(m+1)+c]
		if math.IsNaN(gam[c]) || math.IsInf(gam[c], 0) {
			return nil
		}
	}
	return gam
}

// inflate returns lam with every finite off-diagonal entry multiplied by
// 1+δ: a candidate certificate just above an estimate of the fixed point.
func inflate(lam []float64, k int, delta float64) []float64 {
	out := append([]float64(nil), lam...)
	for i := range k {
		for j := range k {
			if i != j {
				out[i*k+j] *= 1 + delta
			}
		}
	}
	return out
}
