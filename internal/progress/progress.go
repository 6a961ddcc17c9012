// Package progress draws a one-line progress bar on a terminal-like
// writer, for long computations (experiments, large verifications).
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Bar is a progress bar of total steps. A nil *Bar (from a nil writer)
// does nothing; Step is safe for concurrent use.
type Bar struct {
	mu          sync.Mutex
	w           io.Writer
	label       string
	total, done int
	last        int
}

// New returns a bar labelled label over total steps writing to w, or nil
// when w is nil.
func New(w io.Writer, label string, total int) *Bar {
	if w == nil {
		return nil
	}
	return &Bar{w: w, label: label, total: max(total, 1), last: -1}
}

// Step records one finished step and redraws the bar when its percentage
// changes; the last step ends the line.
func (b *Bar) Step() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done++
	pct := min(100, 100*b.done/b.total)
	if pct == b.last {
		return
	}
	b.last = pct
	bar := strings.Repeat("#", pct/5) + strings.Repeat(" ", 20-pct/5)
	fmt.Fprintf(b.w, "\r%-10s [%s] %3d%%", b.label, bar, pct)
	if b.done >= b.total {
		fmt.Fprintln(b.w)
	}
}

// Terminal returns f when it is a terminal (a character device), else nil:
// progress goes to an interactive stderr, never into a log or a pipe.
func Terminal(f *os.File) io.Writer {
	if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		return f
	}
	return nil
}
