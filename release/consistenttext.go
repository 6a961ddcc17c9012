package release

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText prints the consistent estimates as puff consistent does: a
// table of every window's, every profile cell's and the total histogram,
// then what the projection did.
func (res *Consistent) WriteText(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(name string, v []float64) {
		var b strings.Builder
		for _, x := range v {
			fmt.Fprintf(&b, "\t%.6g", x)
		}
		fmt.Fprintf(tw, "%s%s\n", name, b.String())
	}
	fmt.Fprintf(tw, "estimate\t%s\n", strings.Join(res.Bins, "\t"))
	for _, e := range res.Windows {
		row(e.Start+" – "+e.End, e.Estimate)
	}
	for _, e := range res.Profile {
		row("cell "+e.Cell, e.Estimate)
	}
	row("total", res.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "\n%d windows and %d profile cells of %g readings: every histogram non-negative and summing to its readings (at most, where a value may be missing), and both sides' totals equal (largest difference of a bin's totals: %.3g before, %.3g after); a projection of the two releases' private values only, at no privacy cost (docs/math.md §4.14)\n",
		len(res.Windows), len(res.Profile), res.Readings, res.DisagreementBefore, res.DisagreementAfter)
	return err
}
