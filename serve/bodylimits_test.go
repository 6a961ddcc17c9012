package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/stream"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readingsCSV is n readings of one series every 10 minutes from t = 0.
func readingsCSV(n int) []byte {
	var b bytes.Buffer
	b.WriteString("series,time,state\n")
	states := []string{"sleep", "sit", "walk", "run"}
	for i := range n {
		fmt.Fprintf(&b, "p,%d,%s\n", 600*i, states[(i/7)%4])
	}
	return b.Bytes()
}

// streamFixture is the fixture with a stream on activity and a second
// server on its ledger with cfg's append limits.
func streamFixture(t *testing.T, cfg Config) (*fixture, func(body []byte) (int, map[string]any)) {
	t.Helper()
	f := newFixture(t, "")
	class, err := markov.ParseClass(release.ExampleClass(), "class")
	if err != nil {
		t.Fatal(err)
	}
	st, err := stream.Declare(reading.Spec{States: "sleep,sit,walk,run", Step: 600}, "24h", 1, mechanism.Exact, "counts", class)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Init(context.Background(), f.store, "activity", st); err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.DataDir = f.store, f.dir
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	post := func(body []byte) (int, map[string]any) {
		t.Helper()
		g := *f
		g.srv = srv
		code, m, _ := g.do("POST", "/v1/streams/activity/readings", f.feeder, string(body))
		return code, m
	}
	return f, post
}

// Issue 39, item 1: a compressed body is capped after decompression, and
// every append's readings are capped, each limit a flag of puff serve
// (--max-append-bytes, --max-append-readings) named in the 413; nothing
// is appended beyond a limit.
func TestAppendLimits(t *testing.T) {
	f, post := streamFixture(t, Config{MaxAppendBytes: 64 << 10, MaxAppendReadings: 1000})
	unchanged := func(what string) {
		t.Helper()
		if ws, err := f.store.StreamWindows(context.Background(), "activity"); err != nil || len(ws) != 0 {
			t.Errorf("%s: %d windows stored (%v)", what, len(ws), err)
		}
		if ls, err := f.store.Stream(context.Background(), "activity"); err != nil || strings.Contains(string(ls.State), `"p"`) {
			t.Errorf("%s: the stream's state changed: %s %v", what, ls.State, err)
		}
	}
	// 20000 readings ≈ 380 kB of CSV, ≈ 40 kB gzip: over the decompressed cap
	big := readingsCSV(20000)
	for _, c := range []struct {
		what string
		body []byte
		want string
	}{
		{"gzip over the decompressed bytes", gz(t, big), "--max-append-bytes"},
		{"plain over the decompressed bytes", big, "--max-append-bytes"},
		{"gzip over the readings", gz(t, readingsCSV(1001)), "--max-append-readings"},
		{"plain over the readings", readingsCSV(1001), "--max-append-readings"},
	} {
		code, m := post(c.body)
		msg, _ := m["error"].(string)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %v, want 413 naming %s", c.what, code, m, c.want)
		}
		unchanged(c.what)
	}
	if code, m := post(gz(t, readingsCSV(1000))); code != 200 || len(m["windows"].([]any)) != 6 {
		t.Errorf("1000 readings, gzip: %d %v", code, m)
	}
}

// The defaults hold a gzip bomb: 12 MB of readings, 100 times smaller
// compressed, is refused after at most the default decompressed bytes,
// quickly (it used to be read whole: 5 M readings in 109 s, 1.6 GB).
func TestAppendLimitsByDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses megabytes")
	}
	_, post := streamFixture(t, Config{})
	line := []byte("p,0,sit\n")
	raw := append([]byte("series,time,state\n"), bytes.Repeat(line, (DefaultMaxAppendBytes+1<<20)/len(line))...)
	body := gz(t, raw)
	if len(body) > MaxReadings/10 {
		t.Fatalf("the compressed body is %d bytes", len(body))
	}
	start := time.Now()
	code, m := post(body)
	msg, _ := m["error"].(string)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, fmt.Sprint(DefaultMaxAppendBytes)) {
		t.Errorf("a gzip bomb: %d %v, want 413 naming the limit", code, m)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("refused after %v", d)
	}
}
