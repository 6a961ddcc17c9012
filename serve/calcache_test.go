package serve

import (
	"bytes"
	"context"
	"database/sql"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// countingStore is a ledger whose calibration cache counts its reads,
// hits and writes: a write is a leakage bound computed (release's cache
// writes only what it computed), a hit one read instead.
type countingStore struct {
	ledger.Store
	gets, hits, puts atomic.Int64
}

func (c *countingStore) GetCached(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := c.Store.(release.Persister).GetCached(ctx, key)
	c.gets.Add(1)
	if ok {
		c.hits.Add(1)
	}
	return v, ok, err
}

func (c *countingStore) PutCached(ctx context.Context, key string, value []byte) error {
	c.puts.Add(1)
	return c.Store.(release.Persister).PutCached(ctx, key, value)
}

// A server restarted on the same ledger (a new Server over the same
// SQLite file or PostgreSQL database) reads a class's leakage bound at ε
// from the ledger's calibration cache instead of computing it again, for
// its planner (/v1/scale) and its releases alike, with the same σ; a
// cached value that cannot be read is computed again and rewritten
// (issue 40: before, puff serve kept its bounds in memory only and every
// restart recomputed them).
func TestRestartedServerReadsTheLeakageBoundFromTheLedger(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		os.MkdirAll(data, 0o755)
		var admin string
		// run is one server's life on the ledger: a plan and a release of
		// the built-in example at ε = 0.5, exact (MQM: the leakage bound
		// is computed beside its σ)
		run := func(first bool) (cs *countingStore, sigma, used any) {
			t.Helper()
			store, err := ledger.Open(ctx, dsn, true)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			cs = &countingStore{Store: store}
			s, err := New(Config{Store: cs, DataDir: data})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if first {
				var buf bytes.Buffer
				if err := s.Demo(ctx, &buf); err != nil {
					t.Fatal(err)
				}
				admin = strings.TrimSpace(strings.TrimPrefix(buf.String(), "admin token (shown once): "))
			}
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			f := &fixture{t: t, store: cs, srv: srv}
			code, plan, _ := f.do("GET", "/v1/scale?dataset=activity&method=exact&epsilon=0.5", admin, "")
			if code != 200 || plan["leakage_sigma"] == nil {
				t.Fatalf("scale: %d %v", code, plan)
			}
			code, rel, _ := f.do("POST", "/v1/datasets/activity/releases", admin, `{"method": "exact", "epsilon": 0.5}`)
			if code != 201 {
				t.Fatalf("release: %d %v", code, rel)
			}
			if cal, _ := rel["calibration"].(map[string]any); cal == nil || cal["tpl_sigma"] == nil {
				t.Fatalf("the release has no leakage bound: %v", rel)
			}
			return cs, plan["sigma"], plan["used"]
		}
		first, sigma, used := run(true)
		if first.puts.Load() == 0 {
			t.Fatalf("the first server wrote no leakage bound to the ledger (%d reads)", first.gets.Load())
		}
		again, sigma2, used2 := run(false)
		if again.puts.Load() != 0 || again.hits.Load() == 0 {
			t.Fatalf("the restarted server computed %d leakage bounds again (%d read from the ledger, %d reads)", again.puts.Load(), again.hits.Load(), again.gets.Load())
		}
		if sigma2 != sigma || used2 != used {
			t.Fatalf("restarted: σ %v (%v), first %v (%v)", sigma2, used2, sigma, used)
		}
		// every cached value made unreadable: computed again, rewritten
		// and then read
		corruptCalibrations(t, dsn)
		broken, sigma3, used3 := run(false)
		if broken.puts.Load() != first.puts.Load() {
			t.Fatalf("with unreadable cached values the server computed %d leakage bounds, the first server %d", broken.puts.Load(), first.puts.Load())
		}
		if sigma3 != sigma || used3 != used {
			t.Fatalf("recomputed: σ %v (%v), first %v (%v)", sigma3, used3, sigma, used)
		}
		if last, _, _ := run(false); last.puts.Load() != 0 || last.hits.Load() == 0 {
			t.Fatalf("after the recomputation a server computed %d leakage bounds (%d read)", last.puts.Load(), last.hits.Load())
		}
	})
}

// corruptCalibrations overwrites every value of the ledger's calibration
// cache with JSON no reader accepts.
func corruptCalibrations(t *testing.T, dsn string) {
	t.Helper()
	driver, src := "sqlite", "file:"+dsn+"?_pragma=busy_timeout(30000)"
	if strings.HasPrefix(dsn, "postgres") {
		driver, src = "pgx", dsn
	}
	db, err := sql.Open(driver, src)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(`UPDATE calibration_cache SET value = '{"sigma": '`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("no cached calibration to corrupt")
	}
}
