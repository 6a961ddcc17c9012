package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// BenchmarkService measures requests per second and p50/p99 latency of
// releases and of planner queries (σ cached), 8 concurrent clients, on
// the built-in example, with a SQLite and a PostgreSQL ledger:
// go test ./serve -run '^$' -bench Service -benchtime 400x
//
// Releases are measured on a fresh dataset (recorded=0) and on one already
// holding 10⁴ releases of the same shape (recorded=10000, recorded
// through the ledger before the clock starts): with the ledger's running
// composition state (docs/math.md §4.11) the two rates are within noise.
func BenchmarkService(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		for _, kind := range []string{"release/recorded=0", "release/recorded=10000", "planner"} {
			b.Run(store+"/"+kind, func(b *testing.B) {
				recorded := 0
				if kind == "release/recorded=10000" {
					recorded = 10000
				}
				dsn := filepath.Join(b.TempDir(), "l.db")
				if store == "postgres" {
					dsn = pgtest.DSN(b)
				}
				st, err := ledger.Open(context.Background(), dsn, true)
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				s, err := New(Config{Store: st, DataDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				srv := httptest.NewServer(s.Handler())
				defer srv.Close()
				admin, _, _ := st.CreateToken(context.Background(), []string{"admin"}, nil)
				reg, _ := http.NewRequest("POST", srv.URL+"/v1/datasets", strings.NewReader(`{"name": "ex", "builtin": "activity", "class": "fit", "states": "sleep,sit,walk,run", "budget": 1000000}`))
				reg.Header.Set("Authorization", "Bearer "+admin)
				if resp, err := http.DefaultClient.Do(reg); err != nil || resp.StatusCode != 201 {
					b.Fatalf("register: %v %v", err, resp)
				}
				do := func() (int, error) {
					var req *http.Request
					if kind != "planner" {
						req, _ = http.NewRequest("POST", srv.URL+"/v1/datasets/ex/releases", strings.NewReader(`{"method": "exact", "epsilon": 0.01}`))
					} else {
						req, _ = http.NewRequest("GET", srv.URL+"/v1/scale?dataset=ex&epsilon=0.5&method=exact", nil)
					}
					req.Header.Set("Authorization", "Bearer "+admin)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						return 0, err
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					return resp.StatusCode, nil
				}
				do() // warm: data read, σ computed
				if recorded > 0 {
					// the first release's record, spent again until the
					// dataset holds recorded releases
					ctx := context.Background()
					es, err := st.Entries(ctx, "ex")
					if err != nil || len(es) == 0 {
						b.Fatalf("entries: %v", err)
					}
					def, err := st.Definition(ctx, "ex")
					if err != nil {
						b.Fatal(err)
					}
					r := es[0].Record
					for range recorded - len(es) {
						if _, err := st.Spend(ctx, ledger.Spend{Dataset: "ex", Class: def.Class, Record: &r}, func() (json.RawMessage, error) { return es[0].Result, nil }); err != nil {
							b.Fatal(err)
						}
					}
				}
				const clients = 8
				lat := make([]time.Duration, 0, b.N)
				var mu sync.Mutex
				next := make(chan struct{}, b.N)
				for range b.N {
					next <- struct{}{}
				}
				close(next)
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for range clients {
					wg.Go(func() {
						for range next {
							t0 := time.Now()
							code, err := do()
							d := time.Since(t0)
							if err != nil || code >= 300 {
								b.Errorf("status %d: %v", code, err)
								return
							}
							mu.Lock()
							lat = append(lat, d)
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				el := time.Since(start)
				b.StopTimer()
				slices.Sort(lat)
				if len(lat) > 0 {
					b.ReportMetric(float64(len(lat))/el.Seconds(), "req/s")
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				}
				_ = fmt.Sprint
			})
		}
	}
}
