package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// MaxAppend caps one appended file read by ReadAppend: it is held in
// memory (and hashed, so that appending it twice is recognised).
const MaxAppend = 1 << 30

// ReadAppend reads the file at path to append to a stream (Feed): at most
// MaxAppend bytes.
func ReadAppend(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, over, err := strictjson.ReadUpTo(f, path, MaxAppend)
	if over {
		return nil, fmt.Errorf("%s: more than %d bytes in one append: append the file in parts", path, MaxAppend)
	}
	return b, err
}

// WindowsOf is the windows of released, in order.
func WindowsOf(released []Released) []Window {
	wins := make([]Window, len(released))
	for i, r := range released {
		wins[i] = r.Window
	}
	return wins
}

// DecodeWindows decodes the windows as stored (Windows).
func DecodeWindows(raw []json.RawMessage) ([]Window, error) {
	wins := make([]Window, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &wins[i]); err != nil {
			return nil, fmt.Errorf("stored window %d: %w", i, err)
		}
	}
	return wins, nil
}

// WriteWindows prints windows as puff stream append does: each window's
// bounds and report, "no window closed" when there is none, after a line
// saying so when the file was appended before (duplicate).
func WriteWindows(w io.Writer, wins []Window, duplicate bool) error {
	if duplicate {
		fmt.Fprintln(w, "this file was appended before: nothing changed")
	}
	if len(wins) == 0 {
		_, err := fmt.Fprintln(w, "no window closed")
		return err
	}
	for _, win := range wins {
		if r := win.Running; r != nil {
			fmt.Fprintf(w, "== running total %s – %s (%d windows, %d readings; the sum of %d tree nodes, per-bin noise standard deviation %.4g)\n", r.Start, win.End, r.Windows, r.Observations, r.Nodes, math.Sqrt(r.Variance))
			for _, b := range r.Total {
				fmt.Fprintf(w, "  %-12s %12.2f\n", b.State, b.Value)
			}
			fmt.Fprintf(w, "node drawn at this window: windows %d–%d, %d levels (Lipschitz %g, per-bin scale %.6g):\n", r.From, r.Windows, r.Levels, win.Lipschitz, win.PerBinScale)
		} else {
			fmt.Fprintf(w, "== window %s – %s\n", win.Start, win.End)
		}
		if err := win.Report.WriteText(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

// AppendFile appends the file at path (ReadAppend; "" for none) to the
// dataset's stream and closes every window that ends at or before closeAt
// (CloseTime; "" for none), in one Feed: it returns the windows released
// and whether the same file and closing time were appended before.
func AppendFile(ctx context.Context, store ledger.Store, dataset, path, closeAt string) ([]Window, bool, error) {
	close, err := CloseTime(ctx, store, dataset, closeAt)
	if err != nil {
		return nil, false, err
	}
	var data []byte
	if path != "" {
		if data, err = ReadAppend(path); err != nil {
			return nil, false, err
		}
	}
	rel, dup, err := Feed(ctx, store, dataset, data, path, close)
	if err != nil {
		return nil, false, err
	}
	return WindowsOf(rel), dup, nil
}
