package serve

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// A release over the server's limits is refused with 400 naming the
// window, the limit and puff serve's flag, before any work and with
// nothing spent; a gone client stops the computation (issue 26, item 1).
func TestReleaseLimits(t *testing.T) {
	ctx := context.Background()
	store, err := ledger.Open(ctx, filepath.Join(t.TempDir(), "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, err := New(Config{Store: store, DataDir: t.TempDir(), Limits: release.Limits{MaxWindows: 7}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var buf bytes.Buffer
	if err := s.Demo(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, store: store}
	f.admin = strings.TrimSpace(strings.TrimPrefix(buf.String(), "admin token (shown once): "))
	f.srv = httptest.NewServer(s.Handler())
	defer f.srv.Close()
	// the example has 8 one-minute windows
	code, body, _ := f.do("POST", "/v1/datasets/activity/releases", f.admin, `{"epsilon": 0.5, "window": "1m"}`)
	msg, _ := body["error"].(string)
	if code != 400 || body["field"] != "window" || !strings.Contains(msg, "--max-windows") || !strings.Contains(msg, "8 windows") {
		t.Fatalf("8 windows over a limit of 7: %d %v", code, body)
	}
	if es, _ := store.Entries(ctx, "activity"); len(es) != 0 {
		t.Fatalf("a refused release was recorded: %d entries", len(es))
	}
	if code, body, _ := f.do("POST", "/v1/datasets/activity/releases", f.admin, `{"epsilon": 0.5, "window": "2m"}`); code != 201 {
		t.Fatalf("4 windows under a limit of 7: %d %v", code, body)
	}
	// a client that has gone: the computation stops with its error,
	// which the handler answers 499 (nothing spent)
	d, err := s.load(ctx, "activity")
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	for _, width := range []time.Duration{0, 2 * time.Minute} {
		_, err := s.prepare(gone, d, release.Options{Epsilon: 0.25, Method: mechanism.Approx, Cache: release.NewScaleCache()}, width)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("window %v, client gone: %v", width, err)
		}
	}
	rec := httptest.NewRecorder()
	s.fail(rec, httptest.NewRequest("POST", "/", nil), context.DeadlineExceeded)
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "--release-timeout") {
		t.Errorf("a timed-out release answers %d %s", rec.Code, rec.Body)
	}
}
