package pairwise

import (
	"context"
	"math"
)

// Stored plans (docs/math.md §8.11, "Certifying Newton's estimate"). A
// plan proves its ratio against every Γ, not only the one it was solved
// for (Lemma 8.11.1 asks for some feasible plan, docs/math.md §8.10): so
// the plans the last LP sweep of Newton's method solved define a valid
// monotone certificate map
//
//	T_γ(Λ)(a, a') = max_j Σ_i γ_ij Γ_ij(Λ) / q_j,
//
// costing one pass over each plan's support (a basic solution: at most
// |supp p| + |supp q| entries) instead of a linear program; Φ_LP ≤ T_γ,
// with equality at the Λ the plans were solved at. Certify's rounding
// applies to it as to the LPs' own plans.

// planEntry is one positive entry γ_ij of a stored plan.
type planEntry struct {
	i, j int32
	g    float64
}

// storedPlan is a plan of one ordered pair as lpSolver.certify leaves it:
// its computed row sums are at least p after the worst rounding, so a
// ratio read from it needs only the column loads' rounding allowance.
// The entries are sorted by column.
type storedPlan struct {
	e []planEntry
	m int // constraints of its LP (|supp p| + |supp q|), a bound on the terms of a load
}

// ratio is the plan's ratio max_j Σ_i γ_ij G_ij / q_j. With up it is
// rounded up as lpSolver.certify rounds (docs/math.md §8.10): a computed
// sum of n ≤ m nonnegative products and the quotient are within a factor
// 1 + 4(m+4)u of the exact ones; one ulp more.
func (sp *storedPlan) ratio(q, G []float64, k int, up bool) float64 {
	t := 0.0
	e := sp.e
	for n := 0; n < len(e); {
		j := e[n].j
		load := 0.0
		for ; n < len(e) && e[n].j == j; n++ {
			load += e[n].g * G[int(e[n].i)*k+int(j)]
		}
		t = math.Max(t, load/q[j])
	}
	if up {
		t *= 1 + 4*float64(sp.m+4)*unitRound
		t = math.Nextafter(t, math.Inf(1))
	}
	if math.IsNaN(t) {
		return math.Inf(1)
	}
	return t
}

// storedPlan copies the last certified plan's positive entries.
func (s *lpSolver) storedPlan() *storedPlan {
	sp := &storedPlan{m: s.m}
	for c, j := range s.cols {
		for r, i := range s.rows {
			if g := s.gam[r*s.nq+c]; g > 0 {
				sp.e = append(sp.e, planEntry{int32(i), int32(j), g})
			}
		}
	}
	return sp
}

// planStore holds the stored plan and the last optimal LP basis (a warm
// start) of every ordered pair of one kernel.
type planStore struct {
	plans []*storedPlan
	bases []lpBasis
}

func newPlanStore(k int) *planStore {
	return &planStore{plans: make([]*storedPlan, k*k), bases: make([]lpBasis, k*k)}
}

// phi is T_γ on kn, the closed form where a pair has no stored plan (the
// LP failed or the rows are ordered: ratio 1); with up > 1 every ratio is
// rounded up and charged the kernel's row error, as bestPlan's.
func (ps *planStore) phi(ctx context.Context, kn *kernel, lam []float64, R, up float64, out []float64) error {
	k := kn.k
	G := gamma(lam, k, R*up, up)
	rc := kn.rowCharge(up)
	return kn.sweep(ctx, out, func(a, b int, buf []float64) float64 {
		if sp := ps.plans[a*k+b]; sp != nil {
			return sp.ratio(kn.rows[b*k:(b+1)*k], G, k, up > 1) * rc
		}
		return kn.cfRounded(a, b, G, buf, up) * rc
	})
}
