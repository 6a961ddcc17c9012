package serve

import (
	"context"
	"encoding/json"
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
// Releases go to two datasets of the built-in example in alternating
// batches of 40: "empty", registered fresh, and "full", which holds 10⁴
// releases of the same shape before the clock starts (recorded through
// the ledger). Alternating keeps a shared machine's load the same for
// both; the rates are reported apart (req/s-empty, req/s-full) with
// their ratio. With the ledger's running composition state (docs/math.md
// §4.11) the ratio stays near 1.
func BenchmarkService(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		for _, kind := range []string{"release", "planner"} {
			b.Run(store+"/"+kind, func(b *testing.B) {
				dsn := filepath.Join(b.TempDir(), "l.db")
				if store == "postgres" {
					dsn = pgtest.DSN(b)
				}
				ctx := context.Background()
				st, err := ledger.Open(ctx, dsn, true)
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
				admin, _, _ := st.CreateToken(ctx, []string{"admin"}, nil)
				names := []string{"empty"}
				if kind == "release" {
					names = append(names, "full")
				}
				for _, n := range names {
					reg, _ := http.NewRequest("POST", srv.URL+"/v1/datasets", strings.NewReader(`{"name": "`+n+`", "builtin": "activity", "class": "fit", "states": "sleep,sit,walk,run", "budget": 1000000}`))
					reg.Header.Set("Authorization", "Bearer "+admin)
					if resp, err := http.DefaultClient.Do(reg); err != nil || resp.StatusCode != 201 {
						b.Fatalf("register: %v %v", err, resp)
					}
				}
				do := func(name string) (int, error) {
					var req *http.Request
					if kind == "release" {
						req, _ = http.NewRequest("POST", srv.URL+"/v1/datasets/"+name+"/releases", strings.NewReader(`{"method": "exact", "epsilon": 0.01}`))
					} else {
						req, _ = http.NewRequest("GET", srv.URL+"/v1/scale?dataset="+name+"&epsilon=0.5&method=exact", nil)
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
				do("empty") // warm: data read, σ computed
				if kind == "release" {
					do("full")
					// the first release's record, spent again until the
					// dataset holds 10⁴ releases
					es, err := st.Entries(ctx, "full")
					if err != nil || len(es) != 1 {
						b.Fatalf("entries: %v", err)
					}
					def, err := st.Definition(ctx, "full")
					if err != nil {
						b.Fatal(err)
					}
					r := es[0].Record
					for range 10000 - len(es) {
						if _, err := st.Spend(ctx, ledger.Spend{Dataset: "full", Class: def.Class, Record: &r}, func() (json.RawMessage, error) { return es[0].Result, nil }); err != nil {
							b.Fatal(err)
						}
					}
				}
				const clients, batch = 8, 40
				lat := map[string][]time.Duration{}
				busy := map[string]time.Duration{}
				var mu sync.Mutex
				b.ResetTimer()
				for done, i := 0, 0; done < b.N; i++ {
					name := names[i%len(names)]
					n := min(batch, b.N-done)
					done += n
					next := make(chan struct{}, n)
					for range n {
						next <- struct{}{}
					}
					close(next)
					start := time.Now()
					var wg sync.WaitGroup
					for range clients {
						wg.Go(func() {
							for range next {
								t0 := time.Now()
								code, err := do(name)
								d := time.Since(t0)
								if err != nil || code >= 300 {
									b.Errorf("status %d: %v", code, err)
									return
								}
								mu.Lock()
								lat[name] = append(lat[name], d)
								mu.Unlock()
							}
						})
					}
					wg.Wait()
					busy[name] += time.Since(start)
				}
				b.StopTimer()
				rate := map[string]float64{}
				for _, n := range names {
					l := lat[n]
					if len(l) == 0 {
						continue
					}
					slices.Sort(l)
					suffix := "" // the planner's one dataset
					if len(names) > 1 {
						suffix = "-" + n
					}
					rate[n] = float64(len(l)) / busy[n].Seconds()
					b.ReportMetric(rate[n], "req/s"+suffix)
					b.ReportMetric(float64(l[len(l)/2].Microseconds())/1000, "p50-ms"+suffix)
					b.ReportMetric(float64(l[len(l)*99/100].Microseconds())/1000, "p99-ms"+suffix)
				}
				if rate["full"] > 0 {
					b.ReportMetric(rate["full"]/rate["empty"], "full/empty")
				}
			})
		}
	}
}
