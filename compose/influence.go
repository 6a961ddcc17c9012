package compose

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// Forward is the max-influence e(X_{j+d} | X_j) of the later node X_{j+d}
// on the secret X_j at time j (1-based), maximised over the chains of the
// class: mqm.Influence with one right quilt node, the one implementation
// (and rounding allowance) the quilt search uses.
func Forward(class *markov.Class, d, j int) (float64, error) {
	return newInfluences(class).forward(d, j)
}

// Backward is the max-influence e(X_j | X_k) of the earlier node X_j,
// j = k − d, on the secret X_k at time k (1-based), maximised over the
// chains of the class (mqm.Influence with one left quilt node).
func Backward(class *markov.Class, d, k int) (float64, error) {
	return newInfluences(class).backward(d, k)
}

// influences evaluates Forward and Backward for one class, sharing each
// chain's oracle (mqm.Tables) between every gap of a composition: the gaps
// between windows repeat a few distances many times.
type influences struct {
	class  *markov.Class
	tables *mqm.Tables
}

func newInfluences(class *markov.Class) *influences {
	return &influences{class: class, tables: mqm.NewTables()}
}

// max is the largest influence over the chains of the class.
func (in *influences) max(i, a, b int) (float64, error) {
	e := 0.0
	for c, ch := range in.class.Chains {
		v, err := in.tables.Influence(ch, i, a, b)
		if err != nil {
			return 0, fmt.Errorf("chain %d: %w", c, err)
		}
		e = max(e, v)
	}
	return e, nil
}

// gapCap is the longest gap whose influence is computed: the
// max-influence never grows with the distance (docs/math.md §4.5, "Long
// gaps"), so the oracle's value at gapCap, an upper bound of the true
// influence there, bounds every longer gap, in time bounded by gapCap
// (the oracle walks the distances one by one).
var gapCap = 4096

func (in *influences) forward(d, j int) (float64, error)  { return in.max(j, 0, min(d, gapCap)) }
func (in *influences) backward(d, k int) (float64, error) { return in.max(k, min(d, gapCap), 0) }

func checkClass(class *markov.Class) error {
	if class == nil || len(class.Chains) == 0 {
		return fmt.Errorf("compose: the dataset has no class Θ; parallel composition needs it to compute the max-influence across gaps")
	}
	return nil
}
