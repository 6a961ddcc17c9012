package serve

import (
	"context"
	"database/sql"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
