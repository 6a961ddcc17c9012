package serve

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Registering a dataset with levels "0:10:10000" and class "fit" ran for
// 47 s, grew the server to 10 GB, stored a class no reader accepts and
// answered 500; from then on every listing failed. Now it is refused at
// once (400, field levels, naming --max-states) with nothing stored, and
// every other dataset stays listed and usable — on both ledgers.
func TestOversizedRegistrationLeavesTheServiceWhole(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		f := newFixture(t, dsn)
		os.WriteFile(filepath.Join(f.dir, "data", "f.csv"), []byte("time,kw\n0,1.5\n60,2.5\n120,3\n180,4\n240,1\n300,7\n"), 0o644)
		code, body, _ := f.do("POST", "/v1/datasets", f.admin, `{"name": "slow", "data": "f.csv", "class": "fit", "value_col": "kw", "levels": "0:10:10000", "smoothing": 0.5, "budget": 1}`)
		msg, _ := body["error"].(string)
		if code != 400 || body["field"] != "levels" || !strings.Contains(msg, "10000 states") || !strings.Contains(msg, "--max-states") {
			t.Fatalf("registration of 10000 levels: %d %v", code, body)
		}
		if _, err := f.store.Dataset(context.Background(), "slow"); err == nil {
			t.Fatal("the refused dataset was stored")
		}
		// a size under the limit registers
		if code, body, _ := f.do("POST", "/v1/datasets", f.admin, `{"name": "small", "data": "f.csv", "class": "fit", "value_col": "kw", "levels": "0:10:5", "smoothing": 0.5, "budget": 1}`); code != 201 {
			t.Fatalf("registration of 5 levels: %d %v", code, body)
		}
		listed(t, f, "activity", "small")
		if code, body, _ := f.do("POST", "/v1/datasets/activity/releases", f.admin, `{"epsilon": 0.1}`); code != 201 {
			t.Fatalf("a release of another dataset after the refusal: %d %v", code, body)
		}
	})
}

// A dataset whose stored class cannot be read (one stored before these
// checks) is listed with its error and hides no other: GET /v1/datasets
// answers 200 with every dataset, the others usable.
func TestUnreadableDatasetIsListedWithTheOthers(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		f := newFixture(t, dsn)
		ctx := context.Background()
		ch, _ := markov.New([]string{"a", "b"}, [][]float64{{0.9, 0.1}, {0.2, 0.8}}, markov.InitStationary, nil)
		cl, _ := markov.NewClass(ch.States, ch)
		if err := f.store.Init(ctx, ledger.Registration{Name: "broken", Budget: big.NewRat(1, 1), Class: cl, Source: []byte(`{"data": "trace.csv", "spec": {}}`)}); err != nil {
			t.Fatal(err)
		}
		corruptClass(t, dsn, "broken")
		code, body, _ := f.do("GET", "/v1/datasets", f.admin, "")
		if code != 200 {
			t.Fatalf("GET /v1/datasets with an unreadable dataset: %d %v", code, body)
		}
		ds := body["datasets"].([]any)
		if len(ds) != 2 {
			t.Fatalf("listed %v", ds)
		}
		good, bad := ds[0].(map[string]any), ds[1].(map[string]any)
		if bad["name"] != "broken" || !strings.Contains(bad["error"].(string), "cannot be read") || good["name"] != "activity" || good["error"] != nil || good["class"] == nil {
			t.Fatalf("listed %v", ds)
		}
		if code, body, _ := f.do("POST", "/v1/datasets/activity/releases", f.admin, `{"epsilon": 0.1}`); code != 201 {
			t.Fatalf("a release of another dataset: %d %v", code, body)
		}
		// the dataset itself says why it cannot be read
		code, body, _ = f.do("GET", "/v1/datasets/broken", f.admin, "")
		if msg, _ := body["error"].(string); code != 500 || !strings.Contains(msg, `dataset "broken" cannot be read`) {
			t.Fatalf("GET the unreadable dataset: %d %v", code, body)
		}
	})
}

func listed(t *testing.T, f *fixture, names ...string) {
	t.Helper()
	code, body, _ := f.do("GET", "/v1/datasets", f.admin, "")
	if code != 200 {
		t.Fatalf("GET /v1/datasets: %d %v", code, body)
	}
	var got []string
	for _, d := range body["datasets"].([]any) {
		got = append(got, d.(map[string]any)["name"].(string))
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("listed %v, want %v", got, names)
	}
}

// corruptClass overwrites a dataset's stored class with JSON no reader
// accepts, as a class stored before the ledger checked them.
func corruptClass(t *testing.T, dsn, name string) {
	t.Helper()
	driver, src, q := "sqlite", "file:"+dsn+"?_pragma=busy_timeout(30000)", `UPDATE datasets SET class = ? WHERE name = ?`
	if strings.HasPrefix(dsn, "postgres") {
		driver, src, q = "pgx", dsn, `UPDATE datasets SET class = $1 WHERE name = $2`
	}
	db, err := sql.Open(driver, src)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q, `{"states": ["a"`, name); err != nil {
		t.Fatal(err)
	}
}

// slowClassJSON is a lazy walk on a cycle of k states: its quilt search
// at a length ≫ k runs for minutes.
func slowClassJSON(k int) string {
	P := make([][]float64, k)
	states := make([]string, k)
	for i := range P {
		P[i] = make([]float64, k)
		P[i][i] = 0.98
		P[i][(i+1)%k] += 0.01
		P[i][(i+k-1)%k] += 0.01
		states[i] = fmt.Sprint("s", i)
	}
	b, _ := json.Marshal(map[string]any{"states": states, "chains": []any{map[string]any{"transition": P, "initial": "stationary"}}})
	return string(b)
}

// slowData is one series of 1000 readings of the slow class's states.
func slowData() []byte {
	var b strings.Builder
	b.WriteString("state\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "s%d\n", i/40)
	}
	return []byte(b.String())
}

func registerSlow(t *testing.T, do func(method, path, body string) (int, map[string]any), dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "slow.csv"), slowData(), 0o644); err != nil {
		t.Fatal(err)
	}
	body := `{"name": "slow", "data": "slow.csv", "series_col": "", "time_col": "", "budget": 1, "class": ` + slowClassJSON(150) + `}`
	if code, resp := do("POST", "/v1/datasets", body); code != 201 {
		t.Fatalf("registering the slow dataset: %d %v", code, resp)
	}
}

// A release and a σ of a dataset whose search runs for minutes answer 503
// at the server's --release-timeout, with nothing spent (before, no reply
// after 115 s); a client that leaves stops its computation, so the server
// can close (it waits for its handlers) and nothing is spent. Each
// server has a fresh ledger: the ledger's calibration cache outlives a
// server, and a bound the first server cached would let the second's
// release skip the slow computation this test is about.
func TestSlowSearchStopsAtTheTimeoutAndWhenTheClientLeaves(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i, timeout := range []time.Duration{time.Second, 0} {
		store, err := ledger.Open(ctx, filepath.Join(dir, fmt.Sprintf("l%d.db", i)), true)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		s, err := New(Config{Store: store, DataDir: dir, ReleaseTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var admin string
		if timeout > 0 {
			var buf bytes.Buffer
			if err := s.Demo(ctx, &buf); err != nil {
				t.Fatal(err)
			}
			admin = strings.TrimSpace(strings.TrimPrefix(buf.String(), "admin token (shown once): "))
		} else if admin, _, err = store.CreateToken(ctx, []string{"admin"}, nil); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s.Handler())
		f := &fixture{t: t, store: store, srv: srv}
		registerSlow(t, func(m, p, b string) (int, map[string]any) { c, r, _ := f.do(m, p, admin, b); return c, r }, dir)
		if timeout == 0 {
			// a client that leaves after a second
			req, _ := http.NewRequest("POST", srv.URL+"/v1/datasets/slow/releases", strings.NewReader(`{"epsilon": 1}`))
			req.Header.Set("Authorization", "Bearer "+admin)
			if resp, err := (&http.Client{Timeout: time.Second}).Do(req); err == nil {
				resp.Body.Close()
				t.Fatalf("the slow release answered %d", resp.StatusCode)
			}
			srv.Close() // returns once the handler has stopped
			if es, _ := store.Entries(ctx, "slow"); len(es) != 0 {
				t.Fatalf("a stopped release was recorded")
			}
			continue
		}
		for _, path := range []string{"/v1/datasets/slow/releases", "/v1/scale?dataset=slow&epsilon=1&length=1000"} {
			method, body := "POST", `{"epsilon": 1}`
			if strings.HasPrefix(path, "/v1/scale") {
				method, body = "GET", ""
			}
			code, resp, _ := f.do(method, path, admin, body)
			if msg, _ := resp["error"].(string); code != 503 || !strings.Contains(msg, "--release-timeout") {
				t.Fatalf("%s %s past the timeout: %d %v", method, path, code, resp)
			}
		}
		if es, _ := store.Entries(ctx, "slow"); len(es) != 0 {
			t.Fatalf("a timed-out release was recorded")
		}
		srv.Close()
	}
}
