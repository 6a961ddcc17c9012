package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// Shown is a stream as puff stream show prints it: its settings and every
// window it released (nothing is drawn).
type Shown struct {
	Dataset  string
	Settings *Settings
	Windows  []json.RawMessage // as recorded
}

// Show reads a stream's settings and the windows it released.
func Show(ctx context.Context, store ledger.Store, dataset string) (*Shown, error) {
	s, err := Load(ctx, store, dataset)
	if err != nil {
		return nil, err
	}
	raw, err := Windows(ctx, store, dataset)
	if err != nil {
		return nil, err
	}
	return &Shown{dataset, s, raw}, nil
}

// WriteJSON prints {"dataset", "stream" (Settings.Summary), "windows"} as
// one indented JSON object.
func (sh *Shown) WriteJSON(w io.Writer) error {
	sum, err := sh.Settings.Summary()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"dataset": sh.Dataset, "stream": sum, "windows": sh.Windows})
}

// WriteText prints the settings on one line and the windows as a table
// (WriteWindows).
func (sh *Shown) WriteText(w io.Writer) error {
	wins, err := DecodeWindows(sh.Windows)
	if err != nil {
		return err
	}
	s := sh.Settings
	fmt.Fprintf(w, "stream on dataset %q: windows of %s, ε = %g for all, σ = %.10g, %d windows released\n\n", sh.Dataset, s.Window, s.Epsilon, *s.Scale.Sigma, len(wins))
	if len(wins) == 0 {
		return nil
	}
	return WriteWindows(w, wins, false)
}
