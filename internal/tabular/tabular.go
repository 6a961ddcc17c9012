// Package tabular prints the text reports of puff: tab-separated cells,
// aligned in columns two spaces apart.
package tabular

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Printf writes format (cells separated by tabs, rows by newlines) to out
// as aligned columns.
func Printf(out io.Writer, format string, args ...any) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, format, args...)
	return w.Flush()
}
