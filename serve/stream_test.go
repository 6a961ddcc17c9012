package serve

import (
	"context"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/stream"
)

// The stream endpoints: appends release each closing window once, with
// the same tokens and roles as releases; late readings are 400s that store
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
		s, err := stream.Declare(release.Spec{States: "sleep,sit,walk,run"}, "1h", 1, mechanism.Exact, "counts", class)
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
		}{{"", 401}, {f.reader, 403}, {f.other, 403}} {
			if code, _, _ := f.do("POST", "/v1/streams/activity/readings", c.token, day); code != c.want {
				t.Fatalf("token %q: %d, want %d", c.token, code, c.want)
			}
		}
		code, m, _ := f.do("POST", "/v1/streams/activity/readings", f.releaser, day, "Content-Type", "text/csv")
		if code != 200 {
			t.Fatalf("%d %v", code, m)
		}
		wins := m["windows"].([]any)
		if len(wins) != 1 || wins[0].(map[string]any)["observations"].(float64) != 3 || len(wins[0].(map[string]any)["histogram"].([]any)) != 4 {
			t.Fatalf("windows %v", wins)
		}
		if code, m, _ = f.do("POST", "/v1/streams/activity/readings", f.releaser, day); code != 200 || m["duplicate"] != true || len(m["windows"].([]any)) != 0 {
			t.Fatalf("the same body again: %d %v", code, m)
		}
		if code, m, _ = f.do("POST", "/v1/streams/activity/readings", f.releaser, "series,time,state\np3,600,sit\n"); code != 400 || !strings.Contains(m["error"].(string), "readings:2") {
			t.Fatalf("a late reading: %d %v", code, m)
		}
		if code, m, _ = f.do("POST", "/v1/streams/activity/readings?close=7200", f.releaser, ""); code != 200 || len(m["windows"].([]any)) != 1 {
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
