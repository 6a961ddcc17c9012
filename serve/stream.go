package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/stream"
)

// MaxReadings is the largest CSV body one append of readings may have
// by default (Config.MaxAppendBytes).
const MaxReadings = 64 << 20

// The default limits of one append of readings (puff serve
// --max-append-bytes, --max-append-readings): 64 MiB decompressed, as a
// plain body's bytes (a gzip body holds no more than a plain one), and a
// million readings (each held in memory, about 300 bytes, while the
// append is checked and ordered).
const (
	DefaultMaxAppendBytes    = MaxReadings
	DefaultMaxAppendReadings = 1_000_000
)

func (s *Server) appendBytes() int64 {
	if s.cfg.MaxAppendBytes > 0 {
		return s.cfg.MaxAppendBytes
	}
	return DefaultMaxAppendBytes
}

func (s *Server) appendReadingsLimit() int {
	n := s.cfg.MaxAppendReadings
	if n <= 0 {
		n = DefaultMaxAppendReadings
	}
	return min(n, stream.MaxRows)
}

// tooBig is an append's 413: its bytes after decompression over the
// server's limit.
func (s *Server) tooBig(gzipped bool) error {
	what := "the body"
	if gzipped {
		what = "the body decompressed"
	}
	return &apiError{http.StatusRequestEntityTooLarge, "", fmt.Sprintf("%s is over %d bytes (the server's limit, puff serve --max-append-bytes): append the readings in parts; nothing was appended", what, s.appendBytes())}
}

// checkDecompressed refuses a gzip body (the readers detect one by its
// magic bytes, as puff stream append's --data) whose decompressed bytes
// pass the limit, reading at most limit + 1 of them and keeping none. A
// body that is not readable gzip is left to the reader, which says why.
func (s *Server) checkDecompressed(body []byte) error {
	if len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		return nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	limit := s.appendBytes()
	if n, _ := io.Copy(io.Discard, io.LimitReader(zr, limit+1)); n > limit {
		return s.tooBig(true)
	}
	return nil
}

// appendReadings feeds a dataset's stream (made with puff stream init on
// the service's ledger) with the CSV body, read with the stream's own
// flags, and answers the windows it closed: {"windows": [...]}, each as
// puff release --window prints it. ?close=TIME also closes every window
// ending at or before TIME. The body is the readings: a body appended
// before changes nothing ("duplicate": true).
func (s *Server) appendReadings(w http.ResponseWriter, r *http.Request, _ *ledger.Token) error {
	name := r.PathValue("name")
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return s.tooBig(false)
	}
	if err != nil {
		return err
	}
	if err := s.checkDecompressed(body); err != nil {
		return err
	}
	close, err := stream.CloseTime(r.Context(), s.cfg.Store, name, r.URL.Query().Get("close"))
	if err != nil {
		return err
	}
	if len(body) == 0 {
		if close == nil {
			return bad("", "no readings: the body is the CSV of the readings to append (or give ?close=TIME)")
		}
		body = nil
	}
	rel, dup, err := stream.FeedLimit(r.Context(), s.cfg.Store, name, body, "readings", close, s.appendReadingsLimit())
	if err != nil {
		return err
	}
	wins := make([]stream.Window, len(rel))
	for i, x := range rel {
		wins[i] = x.Window
	}
	out := map[string]any{"dataset": name, "windows": wins}
	if dup {
		out["duplicate"] = true
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// streamWindows lists every window a stream released (nothing is drawn).
func (s *Server) streamWindows(w http.ResponseWriter, r *http.Request, _ *ledger.Token) error {
	name := r.PathValue("name")
	set, err := stream.Load(r.Context(), s.cfg.Store, name)
	if err != nil {
		return err
	}
	sum, err := set.Summary()
	if err != nil {
		return err
	}
	wins, err := stream.Windows(r.Context(), s.cfg.Store, name)
	if err != nil {
		return err
	}
	if wins == nil {
		wins = []json.RawMessage{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"dataset": name, "stream": sum, "windows": wins})
	return nil
}

// streamClass is the class Θ of a dataset's stream and the length at
// which its σ reaches the supremum over lengths (nil, 0 without a
// stream): a dataset made by puff stream init has no data source, and
// its class is the stream's (the page's card and planner show it).
func (s *Server) streamClass(ctx context.Context, name string) (*markov.Class, int) {
	set, err := stream.Load(ctx, s.cfg.Store, name)
	if err != nil || set.Scale == nil {
		return nil, 0
	}
	class, err := markov.ParseClass(strings.NewReader(string(set.Class)), "the stream's class")
	if err != nil {
		return nil, 0
	}
	return class, max(1, set.Scale.Length)
}
