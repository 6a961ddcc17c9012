package serve

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/stream"
)

// The stream endpoints: appends release each closing window once, with
// feed:NAME tokens (release and read tokens are 403s); late readings are 400s that store
// nothing; the windows listed are the ones released; the stream's charge
// is the dataset's. SQLite and PostgreSQL.
func TestStreamEndpoints(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		f := newFixture(t, dsn)
		class, err := markov.ParseClass(release.ExampleClass(), "class")
		if err != nil {
			t.Fatal(err)
		}
		// before a stream exists
		if code, m, _ := f.do("GET", "/v1/streams/activity/windows", f.reader, ""); code != 404 || !strings.Contains(m["error"].(string), "has no stream") {
			t.Fatalf("%d %v", code, m)
		}
		s, err := stream.Declare(reading.Spec{States: "sleep,sit,walk,run"}, "1h", 1, mechanism.Exact, "counts", class)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Init(context.Background(), f.store, "activity", s); err != nil {
			t.Fatal(err)
		}
		day := "series,time,state\np1,0,sit\np1,1800,walk\np2,1800,run\np1,3600,sit\n"
		for _, c := range []struct {
			token string
			want  int
		}{{"", 401}, {f.reader, 403}, {f.other, 403}, {f.releaser, 403}} {
			if code, _, _ := f.do("POST", "/v1/streams/activity/readings", c.token, day); code != c.want {
				t.Fatalf("token %q: %d, want %d", c.token, code, c.want)
			}
		}
		code, m, _ := f.do("POST", "/v1/streams/activity/readings", f.feeder, day, "Content-Type", "text/csv")
		if code != 200 {
			t.Fatalf("%d %v", code, m)
		}
		wins := m["windows"].([]any)
		if len(wins) != 1 || wins[0].(map[string]any)["observations"].(float64) != 3 || len(wins[0].(map[string]any)["histogram"].([]any)) != 4 {
			t.Fatalf("windows %v", wins)
		}
		if code, m, _ = f.do("POST", "/v1/streams/activity/readings", f.feeder, day); code != 200 || m["duplicate"] != true || len(m["windows"].([]any)) != 0 {
			t.Fatalf("the same body again: %d %v", code, m)
		}
		if code, m, _ = f.do("POST", "/v1/streams/activity/readings", f.feeder, "series,time,state\np3,600,sit\n"); code != 400 || !strings.Contains(m["error"].(string), "readings:2") {
			t.Fatalf("a late reading: %d %v", code, m)
		}
		if code, m, _ = f.do("POST", "/v1/streams/activity/readings?close=7200", f.feeder, ""); code != 200 || len(m["windows"].([]any)) != 1 {
			t.Fatalf("closing: %d %v", code, m)
		}
		code, m, _ = f.do("GET", "/v1/streams/activity/windows", f.reader, "")
		if code != 200 || len(m["windows"].([]any)) != 2 || m["stream"].(map[string]any)["epsilon"].(float64) != 1 {
			t.Fatalf("%d %v", code, m)
		}
		code, m, _ = f.do("GET", "/v1/datasets/activity", f.reader, "")
		if code != 200 || m["ledger"].(map[string]any)["spent"].(float64) != 1 {
			t.Fatalf("the stream's charge: %d %v", code, m)
		}
	})
}

// Feeding a stream is the custodian's act (feed:NAME): a release-only
// token can neither append readings nor close windows early (which used
// to make the curator's real readings "already closed"), and its refusal
// is the same whatever it posts, so it learns nothing of the stored
// readings (an off-grid reading used to answer "is 6.5 steps of 3600
// after its previous reading", dating that reading). Issue 34.
func TestReleaseTokenCannotFeedOrProbeStream(t *testing.T) {
	f := newFixture(t, "")
	class, err := markov.ParseClass(release.ExampleClass(), "class")
	if err != nil {
		t.Fatal(err)
	}
	s, err := stream.Declare(reading.Spec{States: "sleep,sit,walk,run"}, "24h", 1, mechanism.Exact, "counts", class)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Init(context.Background(), f.store, "activity", s); err != nil {
		t.Fatal(err)
	}
	if code, m, _ := f.do("POST", "/v1/streams/activity/readings", f.feeder, "series,time,state\nm1,2024-03-01T00:00:00Z,sit\nm1,2024-03-01T01:00:00Z,sit\nm1,2024-03-01T17:00:00Z,walk\n"); code != 200 {
		t.Fatalf("the custodian's readings: %d %v", code, m)
	}
	var bodies []string
	for _, probe := range []struct{ path, body string }{
		{"/v1/streams/activity/readings", "series,time,state\nm1,2024-03-01T23:30:00Z,sit\n"}, // 6.5 steps after the stored reading
		{"/v1/streams/activity/readings", "series,time,state\nm1,2024-03-01T18:00:00Z,sit\n"}, // on the grid
		{"/v1/streams/activity/readings", "series,time,state\nm9,2024-03-01T18:00:00Z,sit\n"}, // a series never seen
		{"/v1/streams/activity/readings?close=2030-01-01T00:00:00Z", ""},
	} {
		for _, tok := range []string{f.releaser, f.reader, f.other} {
			code, m, _ := f.do("POST", probe.path, tok, probe.body)
			if code != 403 {
				t.Fatalf("%s %q with a token that may not feed: %d %v", probe.path, probe.body, code, m)
			}
			if tok == f.releaser {
				bodies = append(bodies, m["error"].(string))
			}
		}
	}
	for _, b := range bodies {
		if b != "this token lacks the scope feed:activity" {
			t.Fatalf("the refusal depends on what was posted or stored: %q", b)
		}
	}
	// nothing was closed: the custodian's next reading of the same day is taken
	code, m, _ := f.do("POST", "/v1/streams/activity/readings", f.feeder, "series,time,state\nm1,2024-03-01T18:00:00Z,sit\n")
	if code != 200 || len(m["windows"].([]any)) != 0 {
		t.Fatalf("the custodian's reading after the refused probes: %d %v", code, m)
	}
	// the feeder reads what it fed, and cannot release
	if code, _, _ := f.do("GET", "/v1/streams/activity/windows", f.feeder, ""); code != 200 {
		t.Fatalf("feed:activity reads its stream: %d", code)
	}
	if code, _, _ := f.do("POST", "/v1/datasets/activity/releases", f.feeder, `{"epsilon": 1}`); code != 403 {
		t.Fatalf("feed:activity released: %d", code)
	}
}

// A dataset made by puff ledger init and puff stream init has no data
// source: its class Θ is the stream's, which GET /v1/datasets and
// /v1/datasets/NAME show and /v1/scale calibrates (the page's card said
// "no class yet" and its planner was empty; issue 34). σ is the stream's
// own at the length where it reaches its supremum, or its leakage
// bound's when smaller, as its windows are drawn.
func TestStreamDatasetHasItsClass(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if err := f.store.Init(ctx, ledger.Registration{Name: "meters", Budget: big.NewRat(1, 1)}); err != nil {
		t.Fatal(err)
	}
	reader := f.mk("read:meters")
	if code, m, _ := f.do("GET", "/v1/datasets/meters", reader, ""); code != 200 || m["class"] != nil {
		t.Fatalf("before the stream: %d %v", code, m)
	}
	class, err := markov.ParseClass(strings.NewReader(`{"states": ["off", "on"], "chains": [{"transition": [[0.8, 0.2], [0.1, 0.9]], "initial": "stationary"}]}`), "class")
	if err != nil {
		t.Fatal(err)
	}
	s, err := stream.Declare(reading.Spec{SeriesCol: "meter", Step: 3600}, "24h", 0.5, mechanism.Exact, "counts", class)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Init(ctx, f.store, "meters", s); err != nil {
		t.Fatal(err)
	}
	code, m, _ := f.do("GET", "/v1/datasets", reader, "")
	if code != 200 {
		t.Fatalf("%d %v", code, m)
	}
	var card map[string]any
	for _, d := range m["datasets"].([]any) {
		if d.(map[string]any)["name"] == "meters" {
			card = d.(map[string]any)
		}
	}
	cl, _ := card["class"].(map[string]any)
	if cl == nil || fmt.Sprint(cl["states"]) != "[off on]" || cl["chains"].(float64) != 1 {
		t.Fatalf("the stream dataset's class: %v", card)
	}
	code, m, _ = f.do("GET", "/v1/scale?dataset=meters&epsilon=0.5&method=exact", reader, "")
	// σ is the one the stream's windows are drawn with (issue 40): the
	// smaller of its MQM σ and its leakage bound for every length
	used := release.UsedSigma(release.StreamBase(class, release.Options{Epsilon: s.Epsilon, Method: s.Method, Query: s.Query}, s.Scale, s.Leakage()))
	if code != 200 || m["applicable"] != true || m["sigma"] != used || m["mqm_sigma"] != *s.Scale.Sigma || int(m["length"].(float64)) != s.Scale.Length {
		t.Fatalf("σ for the stream's class: %d %v, want σ %v (MQM %v) at length %d", code, m, used, *s.Scale.Sigma, s.Scale.Length)
	}
}
