package chart

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/hmm"
)

// Sweep draws a sweep of puff verify sweep to path: the loss against the
// parameter over one axis, with the level eps, or the map of verdicts over
// two.
func Sweep(path string, res hmm.SweepResult, eps float64) error {
	xs, ys := res.Coordinates()
	var st []Status
	for _, r := range res.Rows {
		st = append(st, map[hmm.Verdict]Status{hmm.Holds: Holds, hmm.Violated: Violated, hmm.Undecided: Undecided}[r.Verdict])
	}
	title := fmt.Sprintf("%s-Pufferfish over sequences of length ≤ %d", res.Epsilon, res.Length)
	axes := res.Axes()
	if len(axes) == 1 {
		return Curve(path, title, axes[0], "privacy loss", xs, ys, st, eps)
	}
	return Region(path, title, axes[0], axes[1], xs, ys, st)
}
