// Package baseline implements the mechanisms the Markov Quilt Mechanism is
// judged against ([SWC17] §5.1, [SWC16] App. B.10; docs/math.md §5), all as a
// Laplace scale σ for a 1-Lipschitz scalar query on a chain of length T:
//
//   - DP: σ = 1/ε. Entry-level differential privacy. It is NOT
//     ε-Pufferfish private when entries are correlated; it is here as the
//     reference point the papers report.
//   - GroupDP: σ = T/ε. The whole chain is one group; ε-Pufferfish for any Θ.
//   - GK16 (Ghosh–Kleinberg, arXiv:1603.01508): from the multiplicative
//     influence matrix Γ, applicable only when ‖Γ‖₂ < 1; then with
//     Φ = (I−Γ)⁻¹, ε' = ε / (2 max_i Σ_j φ_ij) and σ = 1/ε'.
//
// GK16 is computed per chain θ and the class scale is the maximum over θ;
// the mechanism is inapplicable to the class if it is inapplicable to any θ.
package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

// DP returns the entry-level DP scale 1/ε.
func DP(eps float64) float64 { return 1 / eps }

// GroupDP returns the group-DP scale T/ε.
func GroupDP(T int, eps float64) float64 { return float64(T) / eps }

// GK16Result is the outcome of GK16 for a class.
type GK16Result struct {
	Applicable   bool
	Sigma        float64 // 1/ε'; +Inf when not applicable
	SpectralNorm float64 // max over θ of ‖Γ_θ‖₂ (to within 1e-9)
	MaxPhiRowSum float64 // max over θ, i of Σ_j φ_ij (when applicable)
	Chain        int     // chain attaining the reported norm / scale
}

// Influence returns the tridiagonal GK16 influence matrix of one chain of
// length T as three slices: lower[i] = γ_{i,i−1} (i ≥ 1), upper[i] =
// γ_{i,i+1} (i ≤ T−2), 0-based. γ_ij = ½ max over S and over x_{−i},
// x'_{−i} differing only at j (both of positive probability) of
// log P(X_i∈S | x_{−i}) / P(X_i∈S | x'_{−i}); the maximising S is a single
// value (a ratio of sums never exceeds the largest ratio of terms), and by
// the Markov property only X_{i−1}, X_{i+1} matter. The boundary rows use
// P(X_1 | X_2) ∝ q(x)P(x, X_2) (for "any" q: the supremum over q) and
// P(X_T | X_{T−1}) = P(X_{T−1}, ·).
func Influence(ch *markov.Chain, T int) (lower, upper []float64, err error) {
	return influence(context.Background(), ch, T)
}

// influence is Influence stopped when ctx ends: its loops cost O(k⁴), and
// ctx is checked every O(k²) of them.
func influence(ctx context.Context, ch *markov.Chain, T int) (lower, upper []float64, err error) {
	k := ch.K()
	P := ch.P
	lower, upper = make([]float64, T), make([]float64, T)
	if T == 1 {
		return
	}
	var q []float64
	if ch.Init != markov.InitAny {
		if q, err = ch.Initial(); err != nil {
			return nil, nil, err
		}
	}
	// Interior node: p(x | u, v) ∝ P(u,x) P(x,v).
	cond := func(u, v int) []float64 {
		p := make([]float64, k)
		for x := range k {
			p[x] = P[u][x] * P[x][v]
		}
		return normalized(p)
	}
	var gl, gr float64 // interior γ_{i,i−1}, γ_{i,i+1}
	for u := range k {
		for u2 := range k {
			if err := ctx.Err(); err != nil {
				return nil, nil, fmt.Errorf("gk16: stopped: %w", err)
			}
			for v := range k {
				a, b := cond(u, v), cond(u2, v)
				if a != nil && b != nil {
					gl = math.Max(gl, maxLogRatio(a, b))
				}
				a, b = cond(v, u), cond(v, u2)
				if a != nil && b != nil {
					gr = math.Max(gr, maxLogRatio(a, b))
				}
			}
		}
	}
	// Node 1 (0-based 0) against X_2: p(x | v) ∝ q(x)P(x,v).
	var g1 float64
	for v := range k {
		for v2 := range k {
			if err := ctx.Err(); err != nil {
				return nil, nil, fmt.Errorf("gk16: stopped: %w", err)
			}
			if q != nil {
				a, b := weighted(q, P, v), weighted(q, P, v2)
				if a != nil && b != nil {
					g1 = math.Max(g1, maxLogRatio(a, b))
				}
				continue
			}
			// sup over q of [P(x,v)/P(x,v2)]·[Σq P(·,v2) / Σq P(·,v)] =
			// max over x, y of [P(x,v)/P(x,v2)]·[P(y,v2)/P(y,v)].
			for x := range k {
				for y := range k {
					if P[x][v] == 0 || P[y][v2] == 0 {
						continue
					}
					if P[x][v2] == 0 || P[y][v] == 0 {
						g1 = math.Inf(1)
						continue
					}
					g1 = math.Max(g1, math.Log(P[x][v]/P[x][v2]*P[y][v2]/P[y][v]))
				}
			}
		}
	}
	// Node T against X_{T−1}: p(x | u) = P(u, x).
	var gT float64
	for u := range k {
		for u2 := range k {
			gT = math.Max(gT, maxLogRatio(P[u], P[u2]))
		}
	}
	for i := range T {
		if i > 0 {
			lower[i] = gl / 2
		}
		if i < T-1 {
			upper[i] = gr / 2
		}
	}
	upper[0] = g1 / 2
	lower[T-1] = gT / 2
	return lower, upper, nil
}

func weighted(q []float64, P [][]float64, v int) []float64 {
	p := make([]float64, len(q))
	for x := range q {
		p[x] = q[x] * P[x][v]
	}
	return normalized(p)
}

// normalized scales p to sum 1 in place; nil when p is all zero (the
// conditioning event has probability 0).
func normalized(p []float64) []float64 {
	z := 0.0
	for _, v := range p {
		z += v
	}
	if z == 0 {
		return nil
	}
	for x := range p {
		p[x] /= z
	}
	return p
}

// maxLogRatio is max_x log(a(x)/b(x)) over x with a(x) > 0 (+Inf if b(x)=0).
func maxLogRatio(a, b []float64) float64 {
	m := 0.0
	for x := range a {
		if a[x] == 0 {
			continue
		}
		if b[x] == 0 {
			return math.Inf(1)
		}
		m = math.Max(m, math.Log(a[x]/b[x]))
	}
	return m
}

// GK16 computes the GK16 scale for a class and chains of length T.
func GK16(class *markov.Class, T int, eps float64) (GK16Result, error) {
	return GK16Context(context.Background(), class, T, eps)
}

// MaxGK16Length is the longest chain GK16 computes: its influence matrix
// and the solves over it hold a few floats per step (≈ 40 MB here).
const MaxGK16Length = 1_000_000

// GK16Context is GK16 stopped when ctx ends (its cost grows as k⁴ for k
// states): it returns an error wrapping ctx.Err().
func GK16Context(ctx context.Context, class *markov.Class, T int, eps float64) (GK16Result, error) {
	if err := checks.Epsilon(eps); err != nil {
		return GK16Result{}, fmt.Errorf("gk16: %w", err)
	}
	if T < 1 {
		return GK16Result{}, fmt.Errorf("gk16: length %d, want ≥ 1", T)
	}
	if T > MaxGK16Length {
		return GK16Result{}, fmt.Errorf("gk16: length %d, over the most it computes, %d (its matrices hold a few floats per step)", T, MaxGK16Length)
	}
	res := GK16Result{Applicable: true}
	normChain, phiChain := 0, 0
	for c, ch := range class.Chains {
		lo, up, err := influence(ctx, ch, T)
		if err != nil {
			return GK16Result{}, fmt.Errorf("gk16: chain %d: %w", c, err)
		}
		if norm := spectralNorm(lo, up); c == 0 || norm > res.SpectralNorm {
			res.SpectralNorm, normChain = norm, c
		}
		if !lessThanOne(lo, up) {
			res.Applicable = false
		}
		if !res.Applicable {
			continue
		}
		rs, err := phiRowSumMax(lo, up)
		if err != nil {
			return GK16Result{}, err
		}
		if rs > res.MaxPhiRowSum {
			res.MaxPhiRowSum, phiChain = rs, c
		}
	}
	res.Chain = phiChain
	if !res.Applicable {
		res.Sigma, res.MaxPhiRowSum, res.Chain = math.Inf(1), 0, normChain
		return res, nil
	}
	// 2ε'·max_i Σ_j φ_ij = ε  ⇒  σ = 1/ε' = 2·max row sum / ε.
	res.Sigma = 2 * res.MaxPhiRowSum / eps
	return res, nil
}

// lessThanOne reports whether ‖Γ‖₂ < 1 for the tridiagonal Γ, i.e. whether
// I − ΓᵀΓ is positive definite: an O(T) banded Cholesky (bandwidth 2).
func lessThanOne(lo, up []float64) bool {
	return posDef(lo, up, 1)
}

// posDef reports whether c²I − ΓᵀΓ is positive definite.
func posDef(lo, up []float64, c float64) bool {
	T := len(lo)
	for _, v := range lo {
		if math.IsInf(v, 1) {
			return false
		}
	}
	for _, v := range up {
		if math.IsInf(v, 1) {
			return false
		}
	}
	// Γ entries: Γ[i][i−1] = lo[i], Γ[i][i+1] = up[i]. Column j of Γ has
	// Γ[j−1][j] = up[j−1], Γ[j+1][j] = lo[j+1].
	col := func(j, i int) float64 { // Γ[i][j]
		switch {
		case i == j-1:
			return up[i]
		case i == j+1:
			return lo[i]
		}
		return 0
	}
	m := func(i, j int) float64 { // (c²I − ΓᵀΓ)[i][j], |i−j| ≤ 2
		s := 0.0
		for r := min(i, j) - 1; r <= max(i, j)+1; r++ {
			if r >= 0 && r < T {
				s += col(i, r) * col(j, r)
			}
		}
		if i == j {
			return c*c - s
		}
		return -s
	}
	// Banded Cholesky L with L[i][i−2..i].
	L := make([][3]float64, T) // L[i][d] = L(i, i−2+d)
	for i := range T {
		for d := range 3 {
			j := i - 2 + d
			if j < 0 {
				continue
			}
			s := m(i, j)
			for kk := max(0, i-2); kk < j; kk++ {
				if kk >= j-2 {
					s -= L[i][kk-i+2] * L[j][kk-j+2]
				}
			}
			if j == i {
				if !(s > 0) {
					return false
				}
				L[i][2] = math.Sqrt(s)
			} else {
				L[i][d] = s / L[j][2]
			}
		}
	}
	return true
}

// spectralNorm returns ‖Γ‖₂ to within a relative 1e-9 by bisection on
// posDef (c²I − ΓᵀΓ ≻ 0 ⇔ ‖Γ‖₂ < c).
func spectralNorm(lo, up []float64) float64 {
	hi := 0.0
	for i := range lo { // ‖Γ‖₂ ≤ sqrt(‖Γ‖₁‖Γ‖∞) ≤ 2·max entry... use a safe bound
		hi = math.Max(hi, lo[i]+up[i])
	}
	if math.IsInf(hi, 1) {
		return math.Inf(1)
	}
	hi = 2*hi + 1e-300
	lo0 := 0.0
	for hi-lo0 > 1e-9*hi {
		mid := (lo0 + hi) / 2
		if posDef(lo, up, mid) {
			hi = mid
		} else {
			lo0 = mid
		}
	}
	return hi
}

// phiRowSumMax returns max_i Σ_j φ_ij with Φ = (I − Γ)⁻¹, i.e. the largest
// entry of y solving (I − Γ)y = 1 (Thomas algorithm, O(T)). Because ‖Γ‖₂ < 1
// and Γ ≥ 0 entrywise, Φ = Σ Γⁿ ≥ 0 and y > 0.
func phiRowSumMax(lo, up []float64) (float64, error) {
	T := len(lo)
	c := make([]float64, T)
	d := make([]float64, T)
	for i := range T {
		a := 0.0
		if i > 0 {
			a = -lo[i]
		}
		diag := 1.0
		rhs := 1.0
		if i > 0 {
			diag -= a * c[i-1]
			rhs -= a * d[i-1]
		}
		if diag <= 0 {
			return 0, errors.New("gk16: I − Γ is singular")
		}
		if i < T-1 {
			c[i] = -up[i] / diag
		}
		d[i] = rhs / diag
	}
	y := make([]float64, T)
	m := 0.0
	for i := T - 1; i >= 0; i-- {
		y[i] = d[i]
		if i < T-1 {
			y[i] -= c[i] * y[i+1]
		}
		m = math.Max(m, y[i])
	}
	return m, nil
}
