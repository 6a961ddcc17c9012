package logfile_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/ledger/logfile"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
)

// A log written by puff release --log moves into a durable ledger: every
// dataset with its class, every release in order, and the ledger's total
// equals the log's (the worst chain's best rule, exact rationals), on
// SQLite and PostgreSQL. Importing again, or over budget, changes nothing.
func TestImportLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "releases.json")
	type rel struct {
		dataset string
		eps     float64
		exact   string
		m       mechanism.Name
	}
	rels := []rel{{"act", 0.5, "", mechanism.Exact}, {"act", 1.0 / 3, "1/3", mechanism.Exact}, {"other", 0.25, "", mechanism.Approx}, {"act", 0.1, "1/10", mechanism.Exact}, {"other", 0.25, "", mechanism.Approx}}
	for _, r := range rels {
		class, rec := exampleRelease(t, r.eps, r.m)
		rec.EpsilonExact = r.exact
		if _, err := logfile.Append(path, r.dataset, class, rec); err != nil {
			t.Fatal(err)
		}
	}
	// the log's own answer, per dataset: the worst of its chains
	gs, err := logfile.Guarantees(path, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*big.Rat{}
	for _, g := range gs {
		ds, _, _ := strings.Cut(g.Dataset, "/")
		if w := want[ds]; w == nil || g.Best.Epsilon.Cmp(w) > 0 {
			want[ds] = g.Best.Epsilon
		}
	}
	// written out, not computed: 1/2 + 1/3 + 1/10 and 1/4 + 1/4 by mqm-sequential
	if want["act"].Cmp(big.NewRat(14, 15)) != 0 || want["other"].Cmp(big.NewRat(1, 2)) != 0 {
		t.Fatalf("the log composes to %v and %v", want["act"], want["other"])
	}
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := ledger.Open(ctx, dsn, true)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := importLog(ctx, s, path, big.NewRat(9, 10), ""); err == nil || !strings.Contains(err.Error(), `dataset "act"`) || !strings.Contains(err.Error(), "over the budget 0.9") {
			t.Fatalf("over budget: %v", err)
		}
		if sts, _ := s.Datasets(ctx); len(sts) != 0 {
			t.Fatalf("a refused import registered %v", sts)
		}
		sts, err := importLog(ctx, s, path, big.NewRat(1, 1), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(sts) != 2 || sts[0].Dataset != "act" || sts[1].Dataset != "other" {
			t.Fatalf("imported %v", sts)
		}
		for _, st := range sts {
			if st.Spent.Epsilon.Cmp(want[st.Dataset]) != 0 || st.Spent.Rule != "mqm-sequential" {
				t.Errorf("%s: the ledger spent %v by %s, the log %v", st.Dataset, st.Spent.Epsilon, st.Spent.Rule, want[st.Dataset])
			}
			es, err := s.Entries(ctx, st.Dataset)
			if n := map[string]int{"act": 3, "other": 2}[st.Dataset]; err != nil || len(es) != n || st.Releases != n {
				t.Errorf("%s: %d entries, %d releases (%v)", st.Dataset, len(es), st.Releases, err)
			}
		}
		// the ledger goes on from there: 1/15 more fills "act" exactly
		class, rec := exampleRelease(t, 1.0/15, mechanism.Exact)
		rec.EpsilonExact = "1/15"
		rc, err := s.Spend(ctx, ledger.Spend{Dataset: "act", Class: class, Record: rec}, func() (json.RawMessage, error) { return json.RawMessage("{}"), nil })
		if err != nil || rc.State.Spent.Epsilon.Cmp(big.NewRat(1, 1)) != 0 {
			t.Fatalf("after import: %v, %v", rc.State.Spent, err)
		}
		if _, err := importLog(ctx, s, path, big.NewRat(5, 1), "other"); !errors.Is(err, ledger.ErrExists) {
			t.Fatalf("a second import: %v", err)
		}
		if _, err := importLog(ctx, s, path, big.NewRat(5, 1), "nobody"); err == nil || !strings.Contains(err.Error(), `no dataset "nobody"`) {
			t.Fatalf("an unknown dataset: %v", err)
		}
	})
}

func importLog(ctx context.Context, s ledger.Store, path string, budget *big.Rat, only string) ([]ledger.State, error) {
	m, err := logfile.ReadMigration(path, budget, only)
	if err != nil {
		return nil, err
	}
	return m.Into(ctx, s)
}

// A log is read up to strictjson.MaxInput bytes: a device or a runaway
// file is refused, not read into memory without end.
func TestImportReadsABoundedLog(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	if _, err := logfile.ReadMigration("/dev/zero", big.NewRat(1, 1), ""); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("reading /dev/zero: %v", err)
	}
	if _, err := logfile.ReadMigration(filepath.Join(t.TempDir(), "none.json"), big.NewRat(1, 1), ""); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing log: %v", err)
	}
}
