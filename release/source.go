package release

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// exampleName and exampleClassName name the built-in example's data and
// class in messages.
const (
	exampleName      = "example/activity.csv"
	exampleClassName = "example/activity_class.json"
)

// OpenData opens the data file at path, or the built-in example
// (ExampleData) when path is "", and returns it with its name for
// messages; close it when done.
func OpenData(path string) (io.ReadCloser, string, error) {
	if path == "" {
		return io.NopCloser(ExampleData()), exampleName, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}

// ExampleClassParsed is the built-in example's class (ExampleClass).
func ExampleClassParsed() (*markov.Class, error) {
	return markov.ParseClass(ExampleClass(), exampleClassName)
}

// DatasetName is the dataset name a data file gives by default: its base
// name without ".gz" and one more extension.
func DatasetName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".gz")
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// ParseWindow reads a window length: a positive duration such as 24h.
func ParseWindow(s string) (time.Duration, error) {
	width, err := time.ParseDuration(s)
	if err != nil || width <= 0 {
		return 0, fmt.Errorf("window %q: want a positive duration such as 24h or 168h", s)
	}
	return width, nil
}

// ParseCalibration reads how the windows of a release are calibrated:
// "joint" (every window with σ of the whole chain, docs/math.md §4.8) or
// "per-window" (Options.PerWindow).
func ParseCalibration(s string) (perWindow bool, err error) {
	switch s {
	case "joint":
		return false, nil
	case "per-window":
		return true, nil
	}
	return false, fmt.Errorf("window-calibration %q: want joint or per-window", s)
}

// PlaceAt settles where the data lies in its chain (docs/math.md §4.10):
// at origin, a time written as the data's times are (read with r.CSV).
// Without an origin, a release recorded with others (in a ledger or a
// log) may be any piece of the chain, so a class with a fixed start is
// calibrated for every start (UnknownStart).
func (r *Request) PlaceAt(origin string, recorded bool) error {
	if origin == "" {
		r.UnknownStart = recorded
		return nil
	}
	t, err := r.CSV.ParseTime(origin)
	if err != nil {
		return fmt.Errorf("origin %q: %w", origin, err)
	}
	r.Origin = &t
	return nil
}

// WriteJSON prints a release's output as one indented JSON object with
// fields added at the end (a nil Value is left out): a windowed report
// window by window (WindowedReport.WriteJSON), never as one buffer.
func WriteJSON(w io.Writer, out Output, fields ...Field) error {
	if wr, ok := out.(*WindowedReport); ok {
		return wr.WriteJSON(w, fields...)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	for _, f := range fields {
		b = strictjson.AddField(b, f.Name, f.Value)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(json.RawMessage(b))
}

// FitClass fits one chain to the data's runs (markov.Fit with additive
// smoothing; name in errors) with the initial distribution kind, as the
// class of that chain. With sortStates the states of categorical data are
// first put in sorted order (when none were declared, they come in the
// order they first appear).
func FitClass(data *reading.Data, name string, smoothing float64, kind markov.InitKind, sortStates bool) (*markov.Class, error) {
	if sortStates && data.Levels == nil {
		if err := data.Align(slices.Sorted(slices.Values(data.States)), name); err != nil {
			return nil, err
		}
	}
	ch, err := markov.Fit(data.States, data.Runs(), smoothing)
	if err == nil {
		ch, err = markov.New(ch.States, ch.P, kind, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return markov.NewClass(ch.States, ch)
}

// ParseWindows reads how a release is split in time as puff release's
// flags give it: --window (ParseWindow; "" for none, width 0), which
// excludes the request's Profile, and --window-calibration (into
// PerWindow, ParseCalibration). It returns the window's width.
func (r *Request) ParseWindows(window, calibration string) (time.Duration, error) {
	var width time.Duration
	if window != "" {
		var err error
		if width, err = ParseWindow(window); err != nil {
			return 0, fmt.Errorf("--%w", err)
		}
	}
	if window != "" && r.Profile != "" {
		return 0, fmt.Errorf("--window and --profile: give one of them")
	}
	var err error
	if r.PerWindow, err = ParseCalibration(calibration); err != nil {
		return 0, fmt.Errorf("--%w", err)
	}
	return width, nil
}
