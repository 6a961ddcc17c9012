package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// fixture is a server on a fresh SQLite ledger with the built-in example
// registered (budget 3) and tokens of each kind.
type fixture struct {
	t                              *testing.T
	srv                            *httptest.Server
	store                          ledger.Store
	admin, releaser, reader, other string
	feeder                         string // feed:activity, the stream's custodian
	dir                            string
}

func newFixture(t *testing.T, dsn string) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if dsn == "" {
		dsn = filepath.Join(dir, "ledger.db")
	}
	store, err := ledger.Open(ctx, dsn, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o755)
	os.WriteFile(filepath.Join(data, "trace.csv"), []byte("series,time,state\na,1,x\na,2,y\na,3,y\na,4,x\nb,1,y\nb,2,y\nb,3,x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.csv"), []byte("series,time,state\na,1,x\n"), 0o644)
	s, err := New(Config{Store: store, DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var buf bytes.Buffer
	if err := s.Demo(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, store: store, dir: dir}
	f.admin = strings.TrimSpace(strings.TrimPrefix(buf.String(), "admin token (shown once): "))
	mk := f.mk
	f.releaser, f.reader, f.other = mk("release:activity"), mk("read:activity"), mk("release:elsewhere")
	f.feeder = mk("feed:activity")
	f.srv = httptest.NewServer(s.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

// mk creates a token with the scopes and returns its secret.
func (f *fixture) mk(scopes ...string) string {
	f.t.Helper()
	sec, _, err := f.store.CreateToken(context.Background(), scopes, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return sec
}

// do sends a request and returns the status and the decoded JSON body.
func (f *fixture) do(method, path, token, body string, hdr ...string) (int, map[string]any, http.Header) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	if m == nil {
		m = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, m, resp.Header
}

func TestAuth(t *testing.T) {
	f := newFixture(t, "")
	for _, c := range []struct {
		method, path, token, body string
		want                      int
	}{
		{"GET", "/v1/datasets", "", "", 401},
		{"GET", "/v1/datasets", "puff_000000000000_" + strings.Repeat("0", 64), "", 401},
		{"GET", "/v1/datasets", "garbage", "", 401},
		{"POST", "/v1/datasets/activity/releases", f.reader, `{"method": "exact", "epsilon": 0.1}`, 403},
		{"POST", "/v1/datasets/activity/releases", f.other, `{"method": "exact", "epsilon": 0.1}`, 403},
		{"GET", "/v1/datasets/activity", f.other, "", 403},
		{"POST", "/v1/datasets", f.releaser, `{"name": "x", "builtin": "activity", "class": "fit", "budget": 1}`, 403},
		{"GET", "/v1/datasets/activity", f.reader, "", 200},
		{"GET", "/v1/datasets/activity/ledger", f.releaser, "", 200},
		{"GET", "/v1/openapi.json", "", "", 200},
		{"GET", "/", "", "", 200},
		{"GET", "/v1/nothing", f.admin, "", 404},
	} {
		if got, body, _ := f.do(c.method, c.path, c.token, c.body); got != c.want {
			t.Errorf("%s %s with %.12s: %d, want %d (%v)", c.method, c.path, c.token, got, c.want, body)
		}
	}
	// revoked → 401
	tok, _ := f.store.Authenticate(context.Background(), f.reader)
	if err := f.store.RevokeToken(context.Background(), tok.ID); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := f.do("GET", "/v1/datasets/activity", f.reader, ""); got != 401 {
		t.Errorf("revoked token: %d", got)
	}
	// the reader's list shows only what it may read
	_, body, _ := f.do("GET", "/v1/datasets", f.other, "")
	if ds := body["datasets"].([]any); len(ds) != 0 {
		t.Errorf("a token without read:activity sees %v", ds)
	}
}

func TestReleaseContract(t *testing.T) {
	f := newFixture(t, "")
	code, body, _ := f.do("POST", "/v1/datasets/activity/releases", f.releaser, `{"method": "exact", "epsilon": 1}`)
	if code != 201 {
		t.Fatalf("%d %v", code, body)
	}
	hist, _ := body["histogram"].([]any)
	led, _ := body["ledger"].(map[string]any)
	if len(hist) != 4 || body["sigma"] == nil || led == nil || led["spent"] != 1.0 || led["budget"] != 3.0 || led["remaining"] != 2.0 || led["rule"] != "single" || body["id"] == nil {
		t.Fatalf("201 body %v", body)
	}
	for _, k := range []string{"true_counts", "counts", "data"} {
		if _, ok := body[k]; ok {
			t.Errorf("release answer has %q", k)
		}
	}
	// refused: 409, nothing spent
	code, body, _ = f.do("POST", "/v1/datasets/activity/releases", f.releaser, `{"method": "exact", "epsilon": 2.5}`)
	if code != 409 || !strings.Contains(body["error"].(string), "budget") {
		t.Fatalf("%d %v", code, body)
	}
	code, body, _ = f.do("GET", "/v1/datasets/activity/ledger", f.reader, "")
	rs, _ := body["releases"].([]any)
	if code != 200 || len(rs) != 1 || body["spent"] != 1.0 || body["budget"] != 3.0 {
		t.Fatalf("ledger %d %v", code, body)
	}
	if r0 := rs[0].(map[string]any); r0["result"] == nil || r0["rule"] != "single" {
		t.Fatalf("ledger entry %v", r0)
	}
	// planner
	code, body, _ = f.do("GET", "/v1/scale?dataset=activity&epsilon=1&method=exact", f.reader, "")
	if code != 200 || body["sigma"] == nil || body["length"] != 480.0 {
		t.Fatalf("scale %d %v", code, body)
	}
}

func TestIdempotency(t *testing.T) {
	f := newFixture(t, "")
	req := `{"method": "exact", "epsilon": 0.5}`
	c1, b1, _ := f.do("POST", "/v1/datasets/activity/releases", f.releaser, req, "Idempotency-Key", "abc")
	c2, b2, h2 := f.do("POST", "/v1/datasets/activity/releases", f.releaser, req, "Idempotency-Key", "abc")
	if c1 != 201 || c2 != 201 || h2.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("%d %d %v", c1, c2, h2)
	}
	j1, _ := json.Marshal(b1)
	j2, _ := json.Marshal(b2)
	if !bytes.Equal(j1, j2) {
		t.Fatalf("the repeat differs:\n%s\n%s", j1, j2)
	}
	if c, b, _ := f.do("POST", "/v1/datasets/activity/releases", f.releaser, `{"method": "exact", "epsilon": 0.25}`, "Idempotency-Key", "abc"); c != 422 {
		t.Fatalf("key reused with another request: %d %v", c, b)
	}
	es, _ := f.store.Entries(context.Background(), "activity")
	if len(es) != 1 {
		t.Fatalf("%d releases recorded for one idempotent request", len(es))
	}
	// another token's same key is its own request
	if c, _, _ := f.do("POST", "/v1/datasets/activity/releases", f.admin, req, "Idempotency-Key", "abc"); c != 201 {
		t.Fatalf("admin with the same key: %d", c)
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, "")
	rel := "/v1/datasets/activity/releases"
	huge := `{"method": "exact", "epsilon": 1, "query": "` + strings.Repeat("x", MaxBody) + `"}`
	for _, c := range []struct {
		path, body string
		want       int
		field      string
	}{
		{rel, ``, 400, ""},
		{rel, `{`, 400, ""},
		{rel, `[1, 2]`, 400, ""},
		{rel, `{"method": "exact", "epsilon": 1, "extra": 1}`, 400, "extra"},
		{rel, `{"method": "exact", "epsilon": "NaN"}`, 400, "epsilon"},
		{rel, `{"method": "exact", "epsilon": -1}`, 400, "epsilon"},
		{rel, `{"method": "exact", "epsilon": 0}`, 400, "epsilon"},
		{rel, `{"method": "exact", "epsilon": 1e400}`, 400, "epsilon"},
		{rel, `{"method": "exact"}`, 400, "epsilon"},
		{rel, `{"method": "magic", "epsilon": 1}`, 400, "method"},
		{rel, `{"method": "exact", "epsilon": 1, "query": "sum"}`, 400, "query"},
		{rel, `{"method": "exact", "epsilon": 1, "window": "-1h"}`, 400, "window"},
		{rel, `{"method": "exact", "epsilon": 1} {}`, 400, ""},
		{rel, `{"method": "exact", "method": "dp", "epsilon": 1}`, 400, ""},
		{rel, huge, 413, ""},
		{"/v1/datasets/nope/releases", `{"method": "exact", "epsilon": 1}`, 404, ""},
		{"/v1/datasets", `{"name": "t", "data": "../secret.csv", "class": "fit", "states": "x,y", "budget": 1}`, 400, "data"},
		{"/v1/datasets", `{"name": "t", "data": "/etc/passwd", "class": "fit", "states": "x,y", "budget": 1}`, 400, "data"},
		{"/v1/datasets", `{"name": "t", "data": "missing.csv", "class": "fit", "states": "x,y", "budget": 1}`, 400, "data"},
		{"/v1/datasets", `{"name": "t", "data": "trace.csv", "class": "fit", "budget": 1}`, 400, "data"},
		{"/v1/datasets", `{"name": "t", "data": "trace.csv", "class": "fit", "states": "x,y", "budget": -1}`, 400, "budget"},
		{"/v1/datasets", `{"name": "t", "data": "trace.csv", "class": {"states": ["x"]}, "budget": 1}`, 400, "class"},
		{"/v1/datasets", `{"name": "a/b", "data": "trace.csv", "class": "fit", "states": "x,y", "budget": 1}`, 400, "name"},
		{"/v1/datasets", `{"name": "t", "data": "trace.csv", "class": "fit", "states": "x,y", "budget": 1, "levels": "0:1:2"}`, 400, "value-col"},
		{"/v1/datasets", `{"name": "activity", "builtin": "activity", "class": "fit", "states": "sleep,sit,walk,run", "budget": 1}`, 409, "name"},
	} {
		code, body, _ := f.do("POST", c.path, f.admin, c.body)
		if code != c.want || (c.field != "" && body["field"] != c.field) {
			t.Errorf("POST %s %.80s: %d %v, want %d field %q", c.path, c.body, code, body, c.want, c.field)
		}
	}
	if es, _ := f.store.Entries(context.Background(), "activity"); len(es) != 0 {
		t.Fatalf("bad requests recorded %d releases", len(es))
	}
	// a good registration, fitted over declared states, then a release
	code, body, _ := f.do("POST", "/v1/datasets", f.admin, `{"name": "trace", "data": "trace.csv", "class": "fit", "states": "x,y", "smoothing": 0.5, "budget": 2}`)
	if code != 201 || body["sizes"].(map[string]any)["readings"] != 7.0 {
		t.Fatalf("%d %v", code, body)
	}
	if code, body, _ := f.do("POST", "/v1/datasets/trace/releases", f.admin, `{"method": "exact", "epsilon": 1}`); code != 201 {
		t.Fatalf("%d %v", code, body)
	}
}

// The OpenAPI document describes exactly the routes the server has.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	raw, err := files.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("%v %q", err, doc.OpenAPI)
	}
	documented := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			documented[strings.ToUpper(m)+" "+p] = true
		}
	}
	served := map[string]bool{}
	for _, r := range routes {
		served[r.method+" "+r.path] = true
	}
	for k := range served {
		if !documented[k] {
			t.Errorf("%s is served but not documented", k)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("%s is documented but not served", k)
		}
	}
}

// No request body makes the release handler answer 500 or panic.
func FuzzReleaseHandler(f *testing.F) {
	for _, s := range []string{`{"method": "exact", "epsilon": 1}`, `{"method": "approx", "epsilon": 0.5, "query": "relative"}`,
		`{"method": "exact", "epsilon": 1, "window": "1h"}`, `{"epsilon": 1e-300}`, `{"method": "gk16", "epsilon": 700}`, `{}`, `null`} {
		f.Add(s, "")
	}
	dir := f.TempDir()
	store, err := ledger.Open(context.Background(), filepath.Join(dir, "l.db"), true)
	if err != nil {
		f.Fatal(err)
	}
	defer store.Close()
	s, err := New(Config{Store: store, DataDir: dir})
	if err != nil {
		f.Fatal(err)
	}
	s.Demo(context.Background(), io.Discard)
	secret, _, _ := store.CreateToken(context.Background(), []string{"release:activity"}, big.NewRat(1000000, 1))
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body, key string) {
		req := httptest.NewRequest("POST", "/v1/datasets/activity/releases", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+secret)
		if key != "" && !strings.ContainsAny(key, "\r\n\x00") {
			req.Header.Set("Idempotency-Key", key)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%q: %d %s", body, w.Code, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%q: not JSON: %s", body, w.Body)
		}
	})
}

// release is a 201 answer as a client keeps it.
type answer struct {
	ID        int64             `json:"id"`
	Histogram []json.RawMessage `json:"histogram"`
}

// checkAnswers checks the reliability invariant: the dataset's spent ε is
// within its budget, and every 201 a client received is exactly one
// ledger row with the same noisy result.
func checkAnswers(t *testing.T, store ledger.Store, dataset string, answers []answer) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Dataset(ctx, dataset)
	if err != nil {
		t.Fatal(err)
	}
	if st.Spent.Epsilon.Cmp(st.Budget) > 0 {
		t.Fatalf("overspent: %v of %v", st.Spent.Epsilon, st.Budget)
	}
	es, err := store.Entries(ctx, dataset)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]ledger.Entry{}
	for _, e := range es {
		byID[e.ID] = e
	}
	seen := map[int64]bool{}
	for _, a := range answers {
		e, ok := byID[a.ID]
		if !ok || seen[a.ID] {
			t.Fatalf("answer %d: recorded %v, answered twice %v", a.ID, ok, seen[a.ID])
		}
		seen[a.ID] = true
		var rec answer
		if err := json.Unmarshal(e.Result, &rec); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(rec.Histogram) != fmt.Sprint(a.Histogram) {
			t.Fatalf("answer %d differs from its ledger row:\n%s\n%s", a.ID, a.Histogram, rec.Histogram)
		}
	}
}

// 50 concurrent clients race releases of ε = 0.1 on a budget of 3: exactly
// 29 are answered 201 (each release is calibrated by the temporal leakage
// bound, and 30 of them compose by the dp-leakage rule to a little over
// 3), the rest 409, and every 201 is one ledger row with the answer that
// was sent.
func TestFiftyClientsRace(t *testing.T) {
	f := newFixture(t, "")
	var mu sync.Mutex
	var answers []answer
	codes := map[int]int{}
	var wg sync.WaitGroup
	for c := range 50 {
		wg.Go(func() {
			for i := range 2 {
				req, _ := http.NewRequest("POST", f.srv.URL+"/v1/datasets/activity/releases", strings.NewReader(`{"method": "exact", "epsilon": 0.1}`))
				req.Header.Set("Authorization", "Bearer "+f.releaser)
				req.Header.Set("Idempotency-Key", fmt.Sprintf("client-%d-%d", c, i))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				codes[resp.StatusCode]++
				if resp.StatusCode == 201 {
					var a answer
					json.Unmarshal(raw, &a)
					answers = append(answers, a)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if codes[201] != 29 || codes[409] != 71 {
		t.Fatalf("statuses %v", codes)
	}
	checkAnswers(t, f.store, "activity", answers)
}

func httptestServer(t *testing.T, s *Server) string {
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}
