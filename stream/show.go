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
	fmt.Fprintf(w, "stream on dataset %q: windows of %s%s, ε = %g for all, σ = %.10g, %d windows released\n\n", sh.Dataset, s.Window, runningText(s), s.Epsilon, s.sigma(), len(wins))
	if len(wins) == 0 {
		return nil
	}
	return WriteWindows(w, wins, false)
}

// Started is a stream just declared on a ledger dataset (Start): what
// puff stream init prints.
type Started struct {
	Dataset  string
	Settings *Settings
	State    ledger.State // the dataset's, after the stream's one charge
	summary  map[string]any
}

// Start declares the stream s on the dataset (Init: its one charge) and
// returns it with its summary.
func Start(ctx context.Context, store ledger.Store, dataset string, s *Settings) (*Started, error) {
	rc, err := Init(ctx, store, dataset, s)
	if err != nil {
		return nil, err
	}
	st := &Started{Dataset: dataset, Settings: s, State: rc.State}
	sum, err := s.Summary()
	if err != nil {
		return nil, err
	}
	return st, json.Unmarshal(sum, &st.summary)
}

// MarshalJSON writes the summary's fields (Settings.Summary) and "ledger"
// (the dataset's state), keys in alphabetical order.
func (st *Started) MarshalJSON() ([]byte, error) {
	v := map[string]any{}
	for k, x := range st.summary {
		v[k] = x
	}
	v["ledger"] = st.State
	return json.Marshal(v)
}

// WriteText prints the stream's settings and the dataset's state, one
// line each.
func (st *Started) WriteText(w io.Writer) error {
	s := st.Settings
	how := fmt.Sprintf("%s; supremum over lengths, reached at %d", s.Method, s.Scale.Length)
	if used := s.sigma(); used != *s.Scale.Sigma {
		how = fmt.Sprintf("the temporal leakage bound; %s needs %.10g, its supremum over lengths, reached at %d", s.Method, *s.Scale.Sigma, s.Scale.Length)
	}
	fmt.Fprintf(w, "stream on dataset %q: windows of %s (%s)%s, ε = %g for all of them, σ = %.10g (%s)\n",
		st.Dataset, s.Window, s.Spec.TZ, runningText(s), s.Epsilon, s.sigma(), how)
	_, err := fmt.Fprintln(w, "ledger:", st.State.Line())
	return err
}

func runningText(s *Settings) string {
	if s.Running {
		return " with running totals (binary tree, docs/math.md §4.12)"
	}
	return ""
}
