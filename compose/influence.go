package compose

import (
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Forward is the max-influence e(X_k | X_j) of X_j on X_k = X_{j+d} under
// every chain of the class: max over θ, y and x ≠ x' of
// log P^d(x, y) / P^d(x', y). All states x are included (also those that
// cannot occur at time j), which can only overstate it. +Inf when a
// probability that cannot be avoided is zero. Rounded up by a relative 1e-12.
func Forward(class *markov.Class, d int) float64 {
	e := 0.0
	for _, c := range class.Chains {
		Pd := c.Pow(d)
		for y := range Pd {
			for x := range Pd {
				for x2 := range Pd {
					e = max(e, logRatio(Pd[x][y], Pd[x2][y]))
				}
			}
		}
	}
	return up(e)
}

// Backward is the max-influence e(X_j | X_k) of X_k on the earlier X_j,
// k = j + d: by Bayes P(X_j = x | X_k = y) = q_j(x)P^d(x, y)/q_k(y), so it is
// max over θ, x, y ≠ y' of log P^d(x,y)/P^d(x,y') + log q_k(y')/q_k(y), where
// q_k is the marginal at time k (1-based). For a chain standing for every
// initial distribution the second term's supremum is
// max_u log P^{k−1}(u, y')/P^{k−1}(u, y) (MATH §4.2). States y of marginal
// zero are skipped (no secret); x ranges over all states (overstates).
func Backward(class *markov.Class, d, k int) (float64, error) {
	e := 0.0
	for _, c := range class.Chains {
		Pd := c.Pow(d)
		var qTerm func(y, y2 int) float64
		var qk []float64
		if c.Init == markov.InitAny {
			Pk := c.Pow(k - 1)
			qTerm = func(y, y2 int) float64 {
				m := math.Inf(-1) // y' impossible for every q: no constraint
				for u := range Pk {
					m = max(m, logRatio(Pk[u][y2], Pk[u][y]))
				}
				return m
			}
		} else {
			q, err := c.Initial()
			if err != nil {
				return 0, err
			}
			qk = q
			for range k - 1 {
				qk = step(qk, c.P)
			}
			qTerm = func(y, y2 int) float64 { return logRatio(qk[y2], qk[y]) }
		}
		for y := range Pd {
			if qk != nil && qk[y] == 0 {
				continue
			}
			for y2 := range Pd {
				if y2 == y || (qk != nil && qk[y2] == 0) {
					continue
				}
				qt := qTerm(y, y2)
				if math.IsInf(qt, -1) {
					continue
				}
				m := math.Inf(-1)
				for x := range Pd {
					m = max(m, logRatio(Pd[x][y], Pd[x][y2]))
				}
				e = max(e, m+qt)
			}
		}
	}
	return up(e), nil
}

func step(q []float64, P [][]float64) []float64 {
	out := make([]float64, len(q))
	for u, w := range q {
		for v, p := range P[u] {
			out[v] += w * p
		}
	}
	return out
}

// logRatio is log(a/b) with 0/0 = −Inf (no constraint) and a/0 = +Inf.
func logRatio(a, b float64) float64 {
	switch {
	case a == 0:
		return math.Inf(-1)
	case b == 0:
		return math.Inf(1)
	}
	return math.Log(a / b)
}

// up rounds an influence up: P^d carries relative error ≈ d·k·2^−53, far
// below the 1e-12 allowance.
func up(e float64) float64 {
	if math.IsInf(e, 0) {
		return e
	}
	return e + 1e-12*(1+math.Abs(e))
}

func checkClass(class *markov.Class) error {
	if class == nil || len(class.Chains) == 0 {
		return fmt.Errorf("compose: the dataset has no class Θ; parallel composition needs it to compute the max-influence across gaps")
	}
	return nil
}
