package bdp

import (
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// limitTol is the largest gap Limit leaves between its bound and the
// supremum it bounds (before the rounding allowance).
const limitTol = 1e-12

// limitSlack covers floating-point rounding in the bound (each side value
// is recomputed from normalised vectors, so errors do not accumulate beyond
// a few ulps of the log ratios).
const limitSlack = 1e-12

// maxLimitDepth bounds the horizon of Limit (memory grows linearly in it).
const maxLimitDepth = 1 << 20

// Limit returns an upper bound on sup over n of Worst(ch, mech, n, know),
// within limitTol + limitSlack of it, for a two-state chain whose
// transition matrix has no zero entry, together with a witness adversary
// and output in a finite chain (Loss.Attained is what the witness reaches).
//
// The worst loss is non-decreasing in n: an adversary on the first n
// readings is also one on n+1 readings, and the extra output's marginal
// P(y_1..n | ·) = Σ_y' P(y_1..n, y' | ·) is a mediant of ratios that
// cannot exceed their maximum. So the supremum over n is the supremum over
// every combination of left and right options in the factorisation
// (loss.go) at every distance, each side chosen independently.
//
// Every side is a sequence in the distance j whose tail is bounded
// rigorously: P has positive entries, so each step v ↦ v·D_y·P (or
// P·D_y·v) contracts Hilbert's projective metric — here |Δ ln(v_0/v_1)| —
// by Birkhoff's coefficient τ = tanh(ln(P00·P11/(P01·P10))/4) < 1, and D_y
// is an isometry (or collapses to a point). The pair (largest, smallest
// log ratio) is a max/min of τ-Lipschitz maps of the previous pair, so the
// sup-norm step δ_j between consecutive pairs satisfies δ_j ≤ τ^{j−1}·δ_1
// and every later value lies within δ_N/(1−τ) of the value at N. The
// normalisations P^d(u,a) = π_a + λ^d(1[u=a] − π_a) (λ = 1 − P01 − P10)
// and P(X_t = a) = π_a + λ^{t−1}(q_a − π_a) lie within a relative |λ|^d/π_a
// of π_a. The horizon N doubles until every tail is below limitTol; the
// bound is max(max_{j≤N} value(j), value(N) + tail(N)) per side.
func Limit(ch *markov.Chain, mech Mechanism, know Knowledge) (Loss, error) {
	md, err := newModel(ch, mech)
	if err != nil {
		return Loss{}, err
	}
	if md.k != 2 {
		return Loss{}, fmt.Errorf("bdp: the limit n → ∞ is implemented for two-state chains; this chain has %d states", md.k)
	}
	P := md.P
	for a := range 2 {
		for b := range 2 {
			if P[a][b] == 0 {
				return Loss{}, fmt.Errorf("bdp: the limit n → ∞ needs every transition probability positive (P[%d][%d] = 0): a deterministic step carries information over any distance", a, b)
			}
		}
	}
	tau := math.Tanh(math.Abs(math.Log(P[0][0])+math.Log(P[1][1])-math.Log(P[0][1])-math.Log(P[1][0])) / 4)
	lambda := math.Abs(1 - P[0][1] - P[1][0])
	pi := []float64{P[1][0] / (P[0][1] + P[1][0]), P[0][1] / (P[0][1] + P[1][0])}
	for N := 64; ; N *= 2 {
		if N > maxLimitDepth {
			return Loss{}, fmt.Errorf("bdp: the chain mixes too slowly for a certified limit within a horizon of %d readings (Birkhoff coefficient %.9g); use a finite length", maxLimitDepth, tau)
		}
		l, ok, err := md.limitAt(N, know, tau, lambda, pi)
		if err != nil {
			return Loss{}, err
		}
		if ok {
			return l, nil
		}
	}
}

// sideSup is the bound on one side family for one pair: the best value
// among distances ≤ N (at index j) or the value at N plus its tail.
type sideSup struct {
	bound float64
	c     choice // the option of the witness
	j     int    // outputs on this side in the witness
	free  bool
}

// limitAt evaluates Limit at horizon N; ok is false when some tail still
// exceeds limitTol.
func (md *model) limitAt(N int, know Knowledge, tau, lambda float64, pi []float64) (Loss, bool, error) {
	sd, err := md.sides(N+1, know != NoneKnown)
	if err != nil {
		return Loss{}, false, err
	}
	pw := md.powers(N + 2)
	mu := md.marginals(N + 2)
	lg := math.Log
	// nt is the bound on |ln x − ln π| for x within a relative r^d/π of π.
	nt := func(d int, p float64) float64 {
		e := math.Pow(lambda, float64(d)) / p
		if e >= 1 {
			return math.Inf(1)
		}
		return -math.Log1p(-e)
	}
	// ext is the tail of a side's extremes after N outputs.
	ext := func(s *side) float64 {
		dN := max(math.Abs(s.at(N+1, 0, 1)-s.at(N, 0, 1)), math.Abs(s.at(N+1, 1, 0)-s.at(N, 1, 0)))
		d1 := max(math.Abs(s.at(2, 0, 1)-s.at(1, 0, 1)), math.Abs(s.at(2, 1, 0)-s.at(1, 1, 0)))
		return min(dN, math.Pow(tau, float64(N-1))*d1) / (1 - tau)
	}
	converged := true
	// family folds values v(j), j = 0..N, and the tail at N into a sideSup.
	family := func(val func(j int) float64, tail float64, mk func(j int) choice, free bool) sideSup {
		s := sideSup{bound: math.NaN(), free: free}
		for j := 0; j <= N; j++ {
			if v := val(j); !math.IsNaN(v) && (math.IsNaN(s.bound) || v > s.bound) {
				s.bound, s.j, s.c = v, j, mk(j)
			}
		}
		if tail > limitTol {
			converged = false
		}
		if v := val(N) + tail; v > s.bound {
			s.bound, s.j, s.c = v, N, mk(N)
		}
		return s
	}
	single := func(v float64, c choice, free bool) sideSup { return sideSup{bound: v, c: c, free: free} }
	best := Loss{Loss: math.NaN()}
	var bl, br sideSup
	var ba, bb int
	for a := range 2 {
		b := 1 - a
		cval, _ := md.center(a, b)
		if math.IsNaN(cval) {
			continue
		}
		leftFree := func(j int) float64 {
			if mu[j+1][a] == 0 || mu[j+1][b] == 0 {
				return math.NaN()
			}
			return sd.leftFree.at(j, a, b) - (lg(mu[j+1][a]) - lg(mu[j+1][b]))
		}
		leftAt := func(u int) func(j int) float64 {
			return func(j int) float64 {
				return sd.leftAt[u].at(j, a, b) - (lg(pw[j+1][u][a]) - lg(pw[j+1][u][b]))
			}
		}
		rightFree := func(j int) float64 { return sd.rightFree.at(j, a, b) }
		rightAt := func(w int) func(j int) float64 {
			return func(j int) float64 {
				return sd.rightAt[w].at(j, a, b) - (lg(pw[j+1][a][w]) - lg(pw[j+1][b][w]))
			}
		}
		var lefts, rights []sideSup
		freeC := func(int) choice { return choice{} }
		switch know {
		case AllKnown:
			lefts = append(lefts, single(leftFree(0), choice{}, true))
			rights = append(rights, single(rightFree(0), choice{}, true))
			for u := range 2 {
				lefts = append(lefts, single(leftAt(u)(0), choice{d: 1, v: u}, false))
				rights = append(rights, single(rightAt(u)(0), choice{d: 1, v: u}, false))
			}
		default:
			lefts = append(lefts, family(leftFree, ext(sd.leftFree)+2*(nt(N, pi[a])+nt(N, pi[b])), freeC, true))
			rights = append(rights, family(rightFree, ext(sd.rightFree), freeC, true))
			if know == AnyKnown {
				for u := range 2 {
					at := func(j int) choice { return choice{d: j + 1, v: u} }
					lefts = append(lefts, family(leftAt(u), ext(sd.leftAt[u])+2*(nt(N+1, pi[a])+nt(N+1, pi[b])), at, false))
					rights = append(rights, family(rightAt(u), ext(sd.rightAt[u])+4*nt(N+1, pi[u]), at, false))
				}
			}
		}
		for _, L := range lefts {
			for _, R := range rights {
				if math.IsNaN(L.bound) || math.IsNaN(R.bound) {
					continue
				}
				if tot := cval + L.bound + R.bound; math.IsNaN(best.Loss) || tot > best.Loss {
					best.Loss, bl, br, ba, bb = tot, L, R, a, b
				}
			}
		}
	}
	if !converged {
		return Loss{}, false, nil
	}
	if math.IsNaN(best.Loss) {
		return Loss{}, false, fmt.Errorf("bdp: no target has two values of positive probability; the loss is undefined")
	}
	best.Loss += limitSlack
	// Place the witness in a finite chain: a free left side with j outputs
	// puts the target at j+1; a known left reading sits at 1 (or 2 when
	// q gives its value probability zero).
	i := bl.j + 1
	if !bl.free {
		l := 1
		if md.q[bl.c.v] == 0 {
			l = 2
		}
		i = l + bl.c.d
	}
	n := i + br.j
	if !br.free {
		n = i + br.c.d
	}
	L, R := bl.c, br.c
	cval, _ := md.center(ba, bb)
	if bl.free {
		L.val = sd.leftFree.at(i-1, ba, bb) - (lg(mu[i][ba]) - lg(mu[i][bb]))
	} else {
		L.val = sd.leftAt[L.v].at(L.d-1, ba, bb) - (lg(pw[L.d][L.v][ba]) - lg(pw[L.d][L.v][bb]))
	}
	if br.free {
		R.val = sd.rightFree.at(n-i, ba, bb)
	} else {
		R.val = sd.rightAt[R.v].at(R.d-1, ba, bb) - (lg(pw[R.d][ba][R.v]) - lg(pw[R.d][bb][R.v]))
	}
	best.Attained = cval + L.val + R.val
	best.Length = n
	md.witness(&best, sd, i, ba, bb, L, R, n)
	return best, true, nil
}
