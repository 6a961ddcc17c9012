package stream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Init charges the dataset's budget once with the stream's ε and creates
// the stream, in one ledger transaction: refused (a *ledger.Refused) when
// it does not fit, and then nothing is created.
func Init(ctx context.Context, store ledger.Store, dataset string, s *Settings) (ledger.Receipt, error) {
	class, err := markov.ParseClass(strings.NewReader(string(s.Class)), "the stream's class")
	if err != nil {
		return ledger.Receipt{}, err
	}
	set, err := json.Marshal(s)
	if err != nil {
		return ledger.Receipt{}, err
	}
	st, err := json.Marshal(s.NewState())
	if err != nil {
		return ledger.Receipt{}, err
	}
	return store.Spend(ctx, ledger.Spend{Dataset: dataset, Class: class, Record: s.Record(class), Stream: &ledger.StreamInit{Settings: set, State: st}},
		func() (json.RawMessage, error) { return s.Summary() })
}

// Summary is the stream's public description (no state): what its charge
// records as its result and what show prints.
func (s *Settings) Summary() (json.RawMessage, error) {
	class, err := markov.ParseClass(strings.NewReader(string(s.Class)), "the stream's class")
	if err != nil {
		return nil, err
	}
	b := s.base(class)
	return json.Marshal(struct {
		Window      string               `json:"window"`
		TimeZone    string               `json:"time_zone"`
		Epsilon     float64              `json:"epsilon"`
		Method      string               `json:"method"`
		Query       string               `json:"query"`
		Sigma       float64              `json:"sigma"`
		Length      int                  `json:"sigma_length"`
		Guarantee   string               `json:"guarantee"`
		Calibration *release.Calibration `json:"calibration"`
		Running     bool                 `json:"running,omitempty"`
	}{s.Window, tzName(s.Spec.TZ), s.Epsilon, string(s.Method), s.Query, b.Sigma, s.Scale.Length, b.Guarantee, b.Calibration, s.Running})
}

func tzName(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

// Feed appends one file's readings (data, named name in errors) to the
// dataset's stream and releases the windows that close, in one ledger
// transaction (Settings.Append); data nil only closes. Appending the same bytes with the same
// closing time again changes nothing (Duplicate).
func Feed(ctx context.Context, store ledger.Store, dataset string, data []byte, name string, close *float64) ([]Released, bool, error) {
	return FeedLimit(ctx, store, dataset, data, name, close, MaxRows)
}

// FeedLimit is Feed reading at most maxRows readings (a *RowsError
// beyond, nothing stored).
func FeedLimit(ctx context.Context, store ledger.Store, dataset string, data []byte, name string, close *float64, maxRows int) ([]Released, bool, error) {
	h := sha256.New()
	if close != nil {
		fmt.Fprintf(h, "close %s\n", strconv.FormatFloat(*close, 'g', -1, 64))
	}
	h.Write(data)
	var out []Released
	ap, err := store.AppendStream(ctx, dataset, hex.EncodeToString(h.Sum(nil)), func(ls ledger.Stream) (json.RawMessage, []ledger.StreamWindow, error) {
		s, err := Parse(ls.Settings)
		if err != nil {
			return nil, nil, err
		}
		st, err := ParseState(ls.State)
		if err != nil {
			return nil, nil, err
		}
		var r io.Reader
		if data != nil {
			r = bytes.NewReader(data)
		}
		next, rel, err := s.AppendLimit(st, r, name, close, maxRows)
		if err != nil {
			return nil, nil, err
		}
		state, err := json.Marshal(next)
		if err != nil {
			return nil, nil, err
		}
		var wins []ledger.StreamWindow
		for _, r := range rel {
			b, err := json.Marshal(r.Window)
			if err != nil {
				return nil, nil, err
			}
			wins = append(wins, ledger.StreamWindow{Index: r.Index, Result: b})
		}
		out = rel
		return state, wins, nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, ap.Duplicate, nil
}

// Windows lists every window the stream released, as stored (no drawing).
func Windows(ctx context.Context, store ledger.Store, dataset string) ([]json.RawMessage, error) {
	ws, err := store.StreamWindows(ctx, dataset)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(ws))
	for i, w := range ws {
		out[i] = w.Result
	}
	return out, nil
}

// Load reads a dataset's stream settings from the ledger.
func Load(ctx context.Context, store ledger.Store, dataset string) (*Settings, error) {
	ls, err := store.Stream(ctx, dataset)
	if err != nil {
		return nil, err
	}
	return Parse(ls.Settings)
}

// CloseTime reads a closing time written as the stream's data times are
// (its time format, zone and unit), in seconds; "" gives nil.
func CloseTime(ctx context.Context, store ledger.Store, dataset, text string) (*float64, error) {
	if text == "" {
		return nil, nil
	}
	s, err := Load(ctx, store, dataset)
	if err != nil {
		return nil, err
	}
	opts, err := s.Spec.CSV()
	if err != nil {
		return nil, err
	}
	t, err := opts.ParseTime(text)
	if err != nil {
		return nil, &DataError{fmt.Errorf("close time %q: %w", text, err)}
	}
	return &t, nil
}
