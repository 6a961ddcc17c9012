package wasserstein

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/pufferfish-privacy/pufferfish/internal/checks"
)

// CandidateLimit bounds the number of candidate distances (atom pairs) the
// exact (ε, δ) search and the vector search consider.
const CandidateLimit = 1 << 21

// Trimmed returns the W of the (ε, δ)-Wasserstein Mechanism for one pair
// ([SWC16] App. A.4): the infimum over ways of discarding mass δ from μ and
// from ν of W∞ between the renormalised remainders. For δ = 0 it is W∞.
//
// Discarded mass may be any sub-measure of mass δ, including part of an atom:
// the proof of Theorem A.8 uses only that the discarded part T_i has mass δ
// (so ∫_{T_i} ≤ δ) and is non-negative, and splitting an atom keeps both. So
// the value is the least w such that a partial transport of mass 1 − δ moves
// no mass farther than w, and the infimum is attained at one of the atom
// distances |x_i − y_j|, which are searched by bisection.
//
// Feasibility of w is decided exactly by a greedy sweep: take μ's atoms in
// increasing order and send each to the leftmost ν mass still available in
// [x − w, x + w]. Why greedy is optimal: the windows have increasing left and
// right ends. Take an optimal plan agreeing with greedy on the longest prefix
// of its moves; at the first disagreement greedy sends mass from x_i to y_l
// (the leftmost mass x_i can reach). If in the plan that mass of y_l is
// unused, redirect x_i's mass from its later target (or from being
// discarded) to y_l; if it goes to a later x_{i'} while x_i sends to y_{l'},
// l' > l, swap the two (y_{l'} ≤ x_i + w ≤ x_{i'} + w and y_{l'} > y_l ≥
// x_{i'} − w, so both moves stay within w); if x_i's mass is discarded, move
// the x_{i'} → y_l mass to x_i. Each change keeps the transported mass and
// extends the agreement, a contradiction. Cost: O((n + m)·log(n·m)) sweeps
// after sorting the n·m candidate distances (at most CandidateLimit).
func Trimmed(mu, nu Dist, delta *big.Rat) (*big.Rat, error) {
	if err := checks.Delta(delta); err != nil {
		return nil, fmt.Errorf("wasserstein: %w", err)
	}
	if delta.Sign() == 0 {
		return WInf(mu, nu)
	}
	a, err := mu.normalise("μ")
	if err != nil {
		return nil, err
	}
	b, err := nu.normalise("ν")
	if err != nil {
		return nil, err
	}
	if n := len(a.x) * len(b.x); n > CandidateLimit {
		return nil, fmt.Errorf("wasserstein: %d candidate distances exceed the exact search limit %d", n, CandidateLimit)
	}
	wa, wb, tot := scaled(a, b)
	need := new(big.Rat).SetInt(tot)
	need.Mul(need, new(big.Rat).Sub(big.NewRat(1, 1), delta))
	var cands []*big.Rat
	for _, x := range a.x {
		for _, y := range b.x {
			d := new(big.Rat).Sub(x, y)
			cands = append(cands, d.Abs(d))
		}
	}
	cands = sortUnique(cands)
	ok := func(w *big.Rat) bool {
		return new(big.Rat).SetInt(greedy(a.x, wa, b.x, wb, w)).Cmp(need) >= 0
	}
	return bisect(cands, ok), nil
}

// greedy returns the largest mass transportable from μ to ν moving no mass
// farther than w (see Trimmed for the proof).
func greedy(xa []*big.Rat, wa []*big.Int, xb []*big.Rat, wb []*big.Int, w *big.Rat) *big.Int {
	rem := make([]*big.Int, len(wb))
	for j, v := range wb {
		rem[j] = new(big.Int).Set(v)
	}
	moved := new(big.Int)
	j := 0
	lo, hi := new(big.Rat), new(big.Rat)
	for i, x := range xa {
		lo.Sub(x, w)
		hi.Add(x, w)
		for j < len(xb) && xb[j].Cmp(lo) < 0 {
			j++
		}
		r := new(big.Int).Set(wa[i])
		for r.Sign() > 0 && j < len(xb) && xb[j].Cmp(hi) <= 0 {
			t := r
			if rem[j].Cmp(r) < 0 {
				t = rem[j]
			}
			t = new(big.Int).Set(t)
			r.Sub(r, t)
			rem[j].Sub(rem[j], t)
			moved.Add(moved, t)
			if rem[j].Sign() == 0 {
				j++
			}
		}
	}
	return moved
}

func sortUnique(c []*big.Rat) []*big.Rat {
	slices.SortFunc(c, func(a, b *big.Rat) int { return a.Cmp(b) })
	return slices.CompactFunc(c, func(a, b *big.Rat) bool { return a.Cmp(b) == 0 })
}

// bisect returns the least candidate for which the monotone predicate holds;
// it must hold for the last one.
func bisect(c []*big.Rat, ok func(*big.Rat) bool) *big.Rat {
	lo, hi := 0, len(c)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if ok(c[mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return new(big.Rat).Set(c[lo])
}
