package bdp

import (
	"fmt"
	"math"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Viterbi is the most likely reading sequence given the outputs y (log
// space): the attacker who reconstructs the whole trace at once.
func Viterbi(ch *markov.Chain, mech Mechanism, y []int) ([]int, error) {
	q, err := ch.Initial()
	if err != nil {
		return nil, err
	}
	k, n := len(q), len(y)
	if n == 0 {
		return nil, nil
	}
	lg := func(p float64) float64 { return math.Log(p) } // log 0 = −Inf is fine here
	score := make([]float64, k)
	back := make([][]int8, n)
	for s := range k {
		score[s] = lg(q[s]) + lg(mech.Emit[s][y[0]])
	}
	next := make([]float64, k)
	for t := 1; t < n; t++ {
		back[t] = make([]int8, k)
		for s := range k {
			best, arg := math.Inf(-1), 0
			for u := range k {
				if v := score[u] + lg(ch.P[u][s]); v > best {
					best, arg = v, u
				}
			}
			next[s] = best + lg(mech.Emit[s][y[t]])
			back[t][s] = int8(arg)
		}
		copy(score, next)
	}
	best, arg := math.Inf(-1), 0
	for s := range k {
		if score[s] > best {
			best, arg = score[s], s
		}
	}
	if math.IsInf(best, -1) {
		return nil, fmt.Errorf("bdp: viterbi: the outputs are impossible under the model")
	}
	path := make([]int, n)
	path[n-1] = arg
	for t := n - 1; t > 0; t-- {
		path[t-1] = int(back[t][path[t]])
	}
	return path, nil
}
