package tpl

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Result is a loss bound and where it is attained.
type Result struct {
	Loss float64 // upper bound on the privacy loss (natural log), +Inf if none is finite
	// Time is the 1-based step of the maximum; 0 when it is the steady state
	// of an unbounded stream (docs/math.md §8.4) or the tail bound beyond the
	// exactly computed horizon (§8.5).
	Time int
	// A, B is the secret pair (X_t = A vs X_t = B) of the maximum; both −1
	// when the bound does not single out a pair (the tail bound of §8.5).
	A, B int
}

// pair holds two rows of a kernel in the column order of docs/math.md
// §8.2: ratio row A / row B descending, columns where both are zero last.
type pair struct {
	a, b  int
	order []int
}

// sortPair orders the columns j by p(j)/p2(j), descending (c/0 = +∞).
func sortPair(a, b int, p, p2 func(j int) float64, k int) pair {
	var both, rest []int
	for j := range k {
		if p(j) == 0 && p2(j) == 0 {
			both = append(both, j)
		} else {
			rest = append(rest, j)
		}
	}
	sort.SliceStable(rest, func(i, l int) bool {
		x, y := rest[i], rest[l]
		return p(x)*p2(y) > p(y)*p2(x)
	})
	return pair{a: a, b: b, order: append(rest, both...)}
}

// lambda is log of docs/math.md (8.1): the largest over prefixes S of
// (1 + (e^A−1)p(S)) / (1 + (e^A−1)p2(S)), computed as
// (w + (1−w)p(S)) / (w + (1−w)p2(S)) with w = e^{−A}, which is stable for
// every A ≥ 0 including +Inf. The empty prefix gives 0.
func lambda(order []int, p, p2 func(j int) float64, A float64) float64 {
	if A <= 0 {
		return 0
	}
	w := math.Exp(-A)
	m := -math.Expm1(-A)
	best := 0.0
	var q, d float64
	for _, j := range order {
		q += p(j)
		d += p2(j)
		if q <= d {
			continue
		}
		v := math.Log((w + m*math.Min(q, 1)) / (w + m*math.Min(d, 1)))
		if v > best {
			best = v
		}
	}
	return best
}

// fixedPoint is the largest over prefixes of one pair of the root of
// β = λ_{q,d}(β) + ε ([CYXX18] Thm 10; docs/math.md §8.4), at least ε.
func fixedPoint(order []int, p, p2 func(j int) float64, eps float64) float64 {
	best := eps
	var q, d float64
	for _, j := range order {
		q += p(j)
		d += p2(j)
		q, d := math.Min(q, 1), math.Min(d, 1)
		if q <= d {
			continue
		}
		if r := thm10(q, d, eps); r > best {
			best = r
		}
	}
	return best
}

// thm10 solves z(1 + (z−1)d) = e^ε(1 + (z−1)q) for its positive root and
// returns log z (docs/math.md §8.4).
func thm10(q, d, eps float64) float64 {
	E := math.Exp(eps)
	if d == 0 {
		if q*E >= 1 {
			return math.Inf(1)
		}
		return eps + math.Log((1-q)/(1-q*E))
	}
	B := d + q*E - 1
	disc := math.Sqrt(B*B + 4*d*E*(1-q))
	var z float64
	if B >= 0 {
		z = (B + disc) / (2 * d)
	} else {
		z = 2 * E * (1 - q) / (disc - B)
	}
	return math.Log(z)
}

// kernel is one step's kernel given as rows over states (nil row: a state of
// probability zero, not a secret).
type kernel struct {
	k     int
	rows  [][]float64
	pairs []pair
	idx   []int // idx[a*k+b]: position of pair (a, b) in pairs, or −1
}

// newKernel sorts every pair of non-nil rows.
func newKernel(rows [][]float64) *kernel {
	k := len(rows)
	kn := &kernel{k: k, rows: rows}
	for a := range k {
		for b := range k {
			if a == b || rows[a] == nil || rows[b] == nil {
				continue
			}
			ra, rb := rows[a], rows[b]
			kn.pairs = append(kn.pairs, sortPair(a, b, func(j int) float64 { return ra[j] }, func(j int) float64 { return rb[j] }, k))
		}
	}
	kn.index()
	return kn
}

func (kn *kernel) rowFns(pr pair) (func(int) float64, func(int) float64) {
	ra, rb := kn.rows[pr.a], kn.rows[pr.b]
	return func(j int) float64 { return ra[j] }, func(j int) float64 { return rb[j] }
}

// lam is λ_M(a, b; A) for one pair.
func (kn *kernel) lam(pr pair, A float64) float64 {
	p, p2 := kn.rowFns(pr)
	return lambda(pr.order, p, p2, A)
}

// max is λ_M(A), the largest over the pairs.
func (kn *kernel) max(A float64) float64 {
	best := 0.0
	for _, pr := range kn.pairs {
		if v := kn.lam(pr, A); v > best {
			best = v
		}
	}
	return best
}

// sup is the least fixed point of β = λ_M(β) + ε (docs/math.md §8.4).
func (kn *kernel) sup(eps float64) float64 {
	best := eps
	for _, pr := range kn.pairs {
		p, p2 := kn.rowFns(pr)
		if v := fixedPoint(pr.order, p, p2, eps); v > best {
			best = v
		}
	}
	return best
}

func (kn *kernel) index() {
	kn.idx = make([]int, kn.k*kn.k)
	for i := range kn.idx {
		kn.idx[i] = -1
	}
	for i, pr := range kn.pairs {
		kn.idx[pr.a*kn.k+pr.b] = i
	}
}

// find returns the pair (a, b).
func (kn *kernel) find(a, b int) (pair, bool) {
	i := kn.idx[a*kn.k+b]
	if i < 0 {
		return pair{}, false
	}
	return kn.pairs[i], true
}

func checkBudgets(eps []float64) error {
	if len(eps) == 0 {
		return errors.New("tpl: no steps")
	}
	for t, e := range eps {
		if math.IsNaN(e) || e < 0 {
			return fmt.Errorf("tpl: step %d: budget %v, want ≥ 0 (0 = no release)", t+1, e)
		}
	}
	return nil
}

// forward returns φ_t for t = 1..T+1 (φ_{T+1} = 0): docs/math.md (8.2).
func forward(fk *kernel, eps []float64) []float64 {
	T := len(eps)
	phi := make([]float64, T+2)
	for t := T; t >= 1; t-- {
		phi[t] = fk.max(phi[t+1]) + eps[t-1]
	}
	return phi
}

func rowsOf(P [][]float64) [][]float64 {
	r := make([][]float64, len(P))
	copy(r, P)
	return r
}

// reversal returns P*(x, y) = π(y)P(y, x)/π(x), nil rows where π(x) = 0.
func reversal(P [][]float64, pi []float64) [][]float64 {
	k := len(P)
	r := make([][]float64, k)
	for x := range k {
		if pi[x] <= 0 {
			continue
		}
		r[x] = make([]float64, k)
		for y := range k {
			r[x][y] = pi[y] * P[y][x] / pi[x]
		}
	}
	return r
}

// backwardAt is P^B_t for marginals qPrev = q_{t−1}: rows x with q_t(x) > 0.
func backwardAt(P [][]float64, qPrev []float64) ([][]float64, []float64) {
	k := len(P)
	qt := make([]float64, k)
	for y := range k {
		for x := range k {
			qt[x] += qPrev[y] * P[y][x]
		}
	}
	r := make([][]float64, k)
	for x := range k {
		if qt[x] <= 0 {
			continue
		}
		r[x] = make([]float64, k)
		for y := range k {
			r[x][y] = qPrev[y] * P[y][x] / qt[x]
		}
	}
	return r, qt
}

// Leakage bounds the privacy loss of a finite stream of per-step releases
// of one chain's readings X_1..X_T, T = len(eps), where step t's release
// is eps[t−1]-DP with respect to X_t (0: no release at that step, a
// missing reading). The bound is max over t of docs/math.md (8.3), with
// the backward kernels of the chain's initial distribution: the time
// reversal for a stationary start (§8.3), Bayes' rule at every step for a
// given start (§8.5), and the Birkhoff contraction bound, valid for every
// start at once, for "any" (§8.5). By docs/math.md §8.6 it also bounds
// every release that is eps[t−1]-DP with respect to each reading X_t
// (windowed histograms: eps = 2/b at observed steps). For two states and
// a stationary or given start it equals the exact loss of per-step
// Laplace one-hot releases.
func Leakage(ch *markov.Chain, eps []float64) (Result, error) {
	if err := checkBudgets(eps); err != nil {
		return Result{}, err
	}
	T := len(eps)
	fk := newKernel(rowsOf(ch.P))
	phi := forward(fk, eps)
	best := Result{Loss: math.Inf(-1)}
	consider := func(v float64, t, a, b int) {
		if v > best.Loss || math.IsNaN(v) {
			best = Result{Loss: v, Time: t, A: a, B: b}
		}
	}
	switch ch.Init {
	case markov.InitStationary:
		pi, err := ch.Stationary()
		if err != nil {
			return Result{}, fmt.Errorf("tpl: %w", err)
		}
		bk := newKernel(reversal(ch.P, pi))
		beta := 0.0 // β_{t−1}; no past at t = 1
		for t := 1; t <= T; t++ {
			for _, pr := range bk.pairs {
				v := eps[t-1] + forwardTerm(fk, pr.a, pr.b, phi[t+1])
				if t > 1 {
					v += bk.lam(pr, beta)
				}
				consider(v, t, pr.a, pr.b)
			}
			if t == 1 {
				beta = eps[0]
			} else {
				beta = bk.max(beta) + eps[t-1]
			}
		}
	case markov.InitGiven:
		q := append([]float64(nil), ch.Q...)
		beta := 0.0
		for t := 1; t <= T; t++ {
			var bk *kernel
			if t == 1 {
				rows := make([][]float64, len(q))
				for x := range q {
					if q[x] > 0 {
						rows[x] = []float64{} // a secret; no past
					}
				}
				bk = &kernel{k: len(q), rows: rows}
				for a := range q {
					for b := range q {
						if a != b && q[a] > 0 && q[b] > 0 {
							bk.pairs = append(bk.pairs, pair{a: a, b: b})
						}
					}
				}
				for _, pr := range bk.pairs {
					consider(eps[0]+forwardTerm(fk, pr.a, pr.b, phi[2]), 1, pr.a, pr.b)
				}
				beta = eps[0]
				continue
			}
			rows, qt := backwardAt(ch.P, q)
			bk = newKernel(rows)
			for _, pr := range bk.pairs {
				consider(bk.lam(pr, beta)+eps[t-1]+forwardTerm(fk, pr.a, pr.b, phi[t+1]), t, pr.a, pr.b)
			}
			beta = bk.max(beta) + eps[t-1]
			q = qt
		}
	case markov.InitAny:
		tau := birkhoff(ch.P)
		beta := 0.0
		for t := 1; t <= T; t++ {
			for _, pr := range fk.pairs {
				consider(tau*beta+eps[t-1]+fk.lam(pr, phi[t+1]), t, pr.a, pr.b)
			}
			beta = tau*beta + eps[t-1]
		}
	default:
		return Result{}, fmt.Errorf("tpl: unknown initial kind %v", ch.Init)
	}
	if math.IsInf(best.Loss, -1) { // one state: nothing to protect
		best = Result{Loss: 0, Time: 1, A: -1, B: -1}
	}
	return best, nil
}

// forwardTerm is λ_P(a, b; φ) (0 when φ = 0).
func forwardTerm(fk *kernel, a, b int, phi float64) float64 {
	if phi <= 0 {
		return 0
	}
	pr, ok := fk.find(a, b)
	if !ok {
		return 0
	}
	return fk.lam(pr, phi)
}

// birkhoff is τ(M) = tanh(Δ(M)/4), Δ(M) = max over rows i, j of
// max_k log(M_ik/M_jk) + max_l log(M_jl/M_il) (docs/math.md §8.5); 1 when
// some entry is zero (Δ = ∞).
func birkhoff(M [][]float64) float64 {
	k := len(M)
	delta := 0.0
	for i := range k {
		for j := range k {
			if i == j {
				continue
			}
			m1, m2 := math.Inf(-1), math.Inf(-1)
			for c := range k {
				if M[i][c] <= 0 || M[j][c] <= 0 {
					return 1
				}
				m1 = math.Max(m1, math.Log(M[i][c]/M[j][c]))
				m2 = math.Max(m2, math.Log(M[j][c]/M[i][c]))
			}
			delta = math.Max(delta, m1+m2)
		}
	}
	return math.Tanh(delta / 4)
}
