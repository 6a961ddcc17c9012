package pairwise

import (
	"context"
	"math"
	"slices"
)

// Newton's method for the least fixed point of the linear programs' map
// (docs/math.md §8.11, "Finding the LP's fixed point fast"). At an estimate Λ₀,
// every pair's LP gives its optimal plan γ and column duals w ≥ 0 with
// Σ_j w_j q_j = 1 and, by complementary slackness, t = Σ_j w_j Σ_i γ_ij Γ_ij.
// The envelope theorem makes L(Λ)(a, a') = Σ_j w_j (γ_jj + R Σ_{i≠j} γ_ij Λ_ij)
// the map's linearisation at Λ₀ (Φ(Λ) is already closed under the
// min-times closure at a fixed point, so Γ = R·Λ there). Its fixed point
// solves the sparse linear system (I − J)Λ = r, by GMRES. Value iteration
// converges like ρⁿ with ρ close to 1 on slowly mixing chains (hundreds
// of sweeps of k² linear programs); Newton needs a few. The iterates are
// estimates: only a certificate checked afterwards (certify) is used.

// pairDuals is one pair's plan and column weights at the last LP.
type pairDuals struct {
	plan *storedPlan
	w    []float64 // column weights, indexed by state (nil: constant pair)
}

// columnWeights returns the column duals w_j = −y_j of the last optimal
// basis (y = c_B B⁻¹), indexed by state, normalised so that Σ_j w_j q_j = 1.
func (s *lpSolver) columnWeights() []float64 {
	pt := s.inB[s.tVar()] - 1
	if pt < 0 {
		return nil
	}
	w := make([]float64, s.k)
	sum := 0.0
	for c, j := range s.cols {
		v := -s.binv[pt*s.m+s.np+c]
		if v < 0 {
			v = 0
		}
		w[j] = v
		sum += v * s.q[j]
	}
	if !(sum > 0) {
		return nil
	}
	for j := range w {
		w[j] /= sum
	}
	return w
}

// lpDuals solves every pair's LP at Γ(lam) (warm from the store's bases)
// and returns Φ(lam) in out, each pair's plan and weights in duals (nil
// entries: the ratio is constant there, 1 or the closed form's).
func (ps *planStore) lpDuals(ctx context.Context, kn *kernel, lam []float64, R float64, out []float64, duals []pairDuals) error {
	k := kn.k
	G := gamma(lam, k, R, 1)
	return kn.sweep(ctx, out, func(a, b int, buf []float64) float64 {
		i := a*k + b
		// Where the LP gives nothing better, the closed form stands in
		// (planStore.phi): no stale plan survives a sweep.
		duals[i], ps.plans[i] = pairDuals{}, nil
		t := kn.cfRatio(a, b, G, buf)
		if !(t > 1) {
			return t
		}
		s := lpPool.Get().(*lpSolver)
		defer func() { s.p, s.q, s.G = nil, nil, nil; lpPool.Put(s) }()
		v, ok := s.ratioFrom(kn.rows[a*k:(a+1)*k], kn.rows[b*k:(b+1)*k], G, ps.bases[i])
		if !ok || math.IsInf(v, 1) {
			ps.bases[i] = nil
			return t
		}
		ps.bases[i] = s.savedBasis()
		if v > t*(1+1e-9) {
			return t
		}
		// (a tie: the closed-form plan is optimal, the LP's t rounded up)
		sp := s.storedPlan()
		ps.plans[i] = sp
		if w := s.columnWeights(); w != nil {
			duals[i] = pairDuals{plan: sp, w: w}
		}
		return min(t, v)
	})
}

// newtonSolve runs Newton's method on the side at R from its current
// estimate (a warm start) until the relative residual max |Φ(Λ)/Λ − 1| is
// below newtonTol, at most maxNewton LP sweeps; it leaves the last iterate
// in s.lam, the plans solved at it in s.plans (for certify), and returns
// the LP sweeps. It gives up (errNoConvergence) when the iterates' largest
// log ratio passes giveUp near a fixed point or 50·giveUp anywhere (as
// solve), when an iterate is not finite, or when the residual stays above
// newtonAccept.
func (s *fpSide) newtonSolve(ctx context.Context, R, giveUp float64) (int, error) {
	kn := s.kn
	k := kn.k
	if s.plans == nil {
		s.plans = newPlanStore(k)
	}
	duals := make([]pairDuals, k*k)
	phi := make([]float64, k*k)
	res := math.Inf(1)
	for n := 1; n <= maxNewton; n++ {
		if err := s.plans.lpDuals(ctx, kn, s.lam, R, phi, duals); err != nil {
			return n, err
		}
		if s.clamp != nil {
			for i, c := range s.clamp {
				if phi[i] >= c {
					// the scalar bound binds: a constant of the step
					phi[i], duals[i] = c, pairDuals{}
				}
			}
		}
		res = 0
		top := 0.0
		for i, v := range phi {
			if i/k != i%k && !math.IsInf(s.lam[i], 1) {
				if math.IsInf(v, 1) || math.IsNaN(v) {
					return n, errNoConvergence
				}
				res = max(res, math.Abs(v/s.lam[i]-1))
				top = max(top, math.Log(v))
			}
		}
		if debugPlans != nil {
			debugPlans("newton %d at R-1=%.6g: residual %.3g", n, R-1, res)
		}
		if top > giveUp && (res < 1e-3 || top > 50*giveUp) {
			return n, errNoConvergence
		}
		if res < newtonTol {
			copy(s.lam, phi)
			return n, nil
		}
		next, ok := newtonStep(ctx, k, R, phi, duals, s.lam)
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if !ok {
			copy(s.lam, phi) // a value-iteration step instead
			continue
		}
		for i := range next {
			if i/k == i%k || math.IsInf(s.lam[i], 1) {
				continue
			}
			v := max(next[i], 1)
			if s.clamp != nil {
				v = min(v, s.clamp[i])
			}
			s.lam[i] = v
		}
	}
	if res < newtonAccept {
		return maxNewton, nil
	}
	return maxNewton, errNoConvergence
}

// Newton's stopping rules: the residual aimed at (the LP's own rounding
// leaves about 2·10⁻⁹) and the largest accepted after maxNewton sweeps
// (the estimate is then still close; the certificate absorbs it).
const (
	newtonTol    = 1e-8
	newtonAccept = 1e-5
)

// maxNewton bounds the LP sweeps of one Newton solve.
const maxNewton = 12

// newtonStep solves x = L(x) for the linearisation of docs/math.md §8.11
// built from duals (pairs without duals keep their value phi); ok false
// when GMRES does not converge or the solution is not finite.
func newtonStep(ctx context.Context, k int, R float64, phi []float64, duals []pairDuals, lam []float64) ([]float64, bool) {
	// Unknowns: the pairs with duals; the others are constants.
	idx := make([]int, k*k)
	var vars []int
	for i := range idx {
		idx[i] = -1
		if duals[i].plan != nil {
			idx[i] = len(vars)
			vars = append(vars, i)
		}
	}
	n := len(vars)
	if n == 0 {
		return slices.Clone(phi), true
	}
	// Row v: x_v − Σ coef·x_u = rhs.
	type term struct {
		u int32
		c float64
	}
	rows := make([][]term, n)
	rhs := make([]float64, n)
	for v, pi := range vars {
		d := duals[pi]
		var r float64
		var ts []term
		for _, e := range d.plan.e {
			w := d.w[e.j]
			if w == 0 {
				continue
			}
			if e.i == e.j {
				r += w * e.g
				continue
			}
			c := w * e.g * R
			u := int(e.i)*k + int(e.j)
			if idx[u] >= 0 {
				ts = append(ts, term{int32(idx[u]), c})
			} else {
				r += c * phi[u]
			}
		}
		rows[v], rhs[v] = ts, r
	}
	apply := func(dst, x []float64) {
		for v, ts := range rows {
			s := x[v]
			for _, t := range ts {
				s -= t.c * x[t.u]
			}
			dst[v] = s
		}
	}
	x0 := make([]float64, n)
	for v, pi := range vars {
		x0[v] = lam[pi]
	}
	x, ok := gmres(ctx, apply, rhs, x0, 1e-13, 40, 3000)
	if !ok {
		return nil, false
	}
	out := slices.Clone(phi)
	for v, pi := range vars {
		if math.IsNaN(x[v]) || math.IsInf(x[v], 0) {
			return nil, false
		}
		out[pi] = x[v]
	}
	return out, true
}

// gmres solves A x = b (A given by apply) by restarted GMRES(m) from x0,
// to a relative residual tol, at most maxIt inner iterations in all.
func gmres(ctx context.Context, apply func(dst, x []float64), b, x0 []float64, tol float64, m, maxIt int) ([]float64, bool) {
	n := len(b)
	x := slices.Clone(x0)
	bn := norm2(b)
	if bn == 0 {
		return make([]float64, n), true
	}
	r := make([]float64, n)
	V := make([][]float64, m+1)
	for i := range V {
		V[i] = make([]float64, n)
	}
	H := make([]float64, (m+1)*m) // column-major (m+1)×m
	cs, sn := make([]float64, m), make([]float64, m)
	g := make([]float64, m+1)
	w := make([]float64, n)
	it := 0
	for it < maxIt {
		if ctx.Err() != nil {
			return nil, false
		}
		apply(r, x)
		for i := range r {
			r[i] = b[i] - r[i]
		}
		beta := norm2(r)
		if beta <= tol*bn {
			return x, true
		}
		for i := range r {
			V[0][i] = r[i] / beta
		}
		clear(g)
		g[0] = beta
		j := 0
		for ; j < m && it < maxIt; j++ {
			it++
			apply(w, V[j])
			for i := 0; i <= j; i++ {
				h := dot(w, V[i])
				H[j*(m+1)+i] = h
				for l := range w {
					w[l] -= h * V[i][l]
				}
			}
			h := norm2(w)
			H[j*(m+1)+j+1] = h
			if h != 0 {
				for l := range w {
					V[j+1][l] = w[l] / h
				}
			}
			for i := 0; i < j; i++ {
				a, c := H[j*(m+1)+i], H[j*(m+1)+i+1]
				H[j*(m+1)+i] = cs[i]*a + sn[i]*c
				H[j*(m+1)+i+1] = -sn[i]*a + cs[i]*c
			}
			a, c := H[j*(m+1)+j], H[j*(m+1)+j+1]
			d := math.Hypot(a, c)
			if d == 0 {
				return nil, false
			}
			cs[j], sn[j] = a/d, c/d
			H[j*(m+1)+j] = d
			H[j*(m+1)+j+1] = 0
			g[j+1] = -sn[j] * g[j]
			g[j] = cs[j] * g[j]
			if math.Abs(g[j+1]) <= tol*bn || h == 0 {
				j++
				break
			}
		}
		// x += V y, H y = g (upper triangular j×j)
		y := make([]float64, j)
		for i := j - 1; i >= 0; i-- {
			v := g[i]
			for l := i + 1; l < j; l++ {
				v -= H[l*(m+1)+i] * y[l]
			}
			y[i] = v / H[i*(m+1)+i]
		}
		for i := range j {
			for l := range x {
				x[l] += y[i] * V[i][l]
			}
		}
	}
	apply(r, x)
	for i := range r {
		r[i] = b[i] - r[i]
	}
	return x, norm2(r) <= 1e3*tol*bn
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

func norm2(a []float64) float64 { return math.Sqrt(dot(a, a)) }
