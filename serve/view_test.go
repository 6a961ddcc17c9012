package serve

import (
	"context"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Issue 39, item 4: a dataset as listed says what this token may do with
// it ("may": read, release, feed), so the page can disable what the token
// cannot do; a dataset whose data cannot be read says so (not "no class
// yet": its class is the ledger's), without a word of the data.
func TestDatasetViewSaysWhatTheTokenMayDoAndWhyItCannot(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	may := func(tok, name string) []string {
		t.Helper()
		_, body, _ := f.do("GET", "/v1/datasets", tok, "")
		for _, d := range body["datasets"].([]any) {
			if d := d.(map[string]any); d["name"] == name {
				var out []string
				for _, m := range d["may"].([]any) {
					out = append(out, m.(string))
				}
				return out
			}
		}
		t.Fatalf("%s not listed: %v", name, body)
		return nil
	}
	for _, c := range []struct {
		tok  string
		want []string
	}{
		{f.reader, []string{"read"}}, {f.releaser, []string{"read", "release"}}, {f.feeder, []string{"read", "feed"}}, {f.admin, []string{"read", "release", "feed"}},
	} {
		if got := may(c.tok, "activity"); !slices.Equal(got, c.want) {
			t.Errorf("may %v, want %v", got, c.want)
		}
	}
	if _, body, _ := f.do("GET", "/v1/datasets/activity", f.releaser, ""); !slices.Equal(toStrings(body["may"]), []string{"read", "release"}) {
		t.Errorf("GET activity as the releaser: may %v", body["may"])
	}
	// registered with a data file that is then gone
	data := filepath.Join(f.dir, "data", "gone.csv")
	os.WriteFile(data, []byte("series,time,state\na,1,x\na,2,y\na,3,secretstate\na,4,x\n"), 0o644)
	if code, body, _ := f.do("POST", "/v1/datasets", f.admin, `{"name": "gone", "data": "gone.csv", "class": "fit", "states": "x,y,secretstate", "budget": 1}`); code != 201 {
		t.Fatalf("%d %v", code, body)
	}
	os.WriteFile(data, []byte("series,time,state\na,1,x\na,1,secretvalue\n"), 0o644)
	// registered by puff ledger init, with a class and no data source
	ch, _ := markov.New([]string{"a", "b"}, [][]float64{{0.9, 0.1}, {0.2, 0.8}}, markov.InitStationary, nil)
	cl, _ := markov.NewClass(ch.States, ch)
	if err := f.store.Init(ctx, ledger.Registration{Name: "cli", Budget: big.NewRat(1, 1), Class: cl}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: f.store, DataDir: filepath.Join(f.dir, "data")}) // a fresh process: nothing cached
	if err != nil {
		t.Fatal(err)
	}
	g := *f
	g.srv = httptestServerT(t, s)
	_, body, _ := g.do("GET", "/v1/datasets", f.admin, "")
	views := map[string]map[string]any{}
	for _, d := range body["datasets"].([]any) {
		views[d.(map[string]any)["name"].(string)] = d.(map[string]any)
	}
	for name, want := range map[string]string{"gone": "can no longer be read", "cli": "no data source"} {
		v := views[name]
		msg, _ := v["data_error"].(string)
		if !strings.Contains(msg, want) || strings.Contains(msg, "secret") || v["class"] == nil {
			t.Errorf("%s: %v, want its class and data_error saying %q", name, v, want)
		}
	}
	if v := views["activity"]; v["data_error"] != nil {
		t.Errorf("activity: %v", v)
	}
}

func toStrings(v any) []string {
	var out []string
	a, _ := v.([]any)
	for _, x := range a {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func httptestServerT(t *testing.T, s *Server) *httptest.Server {
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}
