package serve

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// Issue 40: a windowed release on a dense 300-state chain spent minutes in
// the scalar leakage recursion, which took no context: the server's
// --release-timeout did not stop it and it kept a core after the client
// left. It now answers 503 at the timeout, naming it, with nothing spent.
func TestDenseWindowedReleaseStopsAtTheTimeout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := ledger.Open(ctx, filepath.Join(dir, "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, err := New(Config{Store: store, DataDir: dir, ReleaseTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var buf bytes.Buffer
	if err := s.Demo(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(strings.TrimPrefix(buf.String(), "admin token (shown once): "))
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	f := &fixture{t: t, store: store, srv: srv}

	// the fixture: 400 readings fitted to 300 states (smoothing
	// 0.5 makes every transition positive)
	const k = 300
	r := rand.New(rand.NewSource(1))
	states := make([]string, k)
	for i := range states {
		states[i] = fmt.Sprint("s", i)
	}
	var data strings.Builder
	data.WriteString("time,state\n")
	for i := range 400 {
		fmt.Fprintf(&data, "%d,s%d\n", i, r.Intn(k))
	}
	if err := os.WriteFile(filepath.Join(dir, "dense.csv"), []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	body := `{"name": "dense", "data": "dense.csv", "series_col": "", "time_col": "time", "budget": 10, "class": "fit", "smoothing": 0.5, "states": "` + strings.Join(states, ",") + `"}`
	if code, resp, _ := f.do("POST", "/v1/datasets", admin, body); code != 201 {
		t.Fatalf("registering the dense dataset: %d %v", code, resp)
	}
	start := time.Now()
	code, resp, _ := f.do("POST", "/v1/datasets/dense/releases", admin, `{"epsilon": 1, "window": "100s"}`)
	if msg, _ := resp["error"].(string); code != 503 || !strings.Contains(msg, "--release-timeout") {
		t.Fatalf("a windowed release past the timeout: %d %v", code, resp)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("answered after %v at --release-timeout 2s", d)
	}
	if es, _ := store.Entries(ctx, "dense"); len(es) != 0 {
		t.Fatalf("a timed-out release was recorded")
	}
}
