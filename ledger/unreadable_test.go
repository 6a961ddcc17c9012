package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

// bigClass is a chain on k states (its JSON grows as k²).
func bigClass(t *testing.T, k int) *markov.Class {
	t.Helper()
	P := make([][]float64, k)
	for i := range P {
		P[i] = make([]float64, k)
		P[i][i] = 0.5
		P[i][(i+1)%k] += 0.5
	}
	ch, err := markov.New(nil, P, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := markov.NewClass(ch.States, ch)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// A class over the size every reader accepts is refused before anything
// is stored: the dataset does not exist afterwards and the listing holds
// the others (before, it was stored, and every listing failed with
// "larger than 67108864 bytes").
func TestInitRefusesAClassItCouldNotReadBack(t *testing.T) {
	defer func(n int) { maxClassBytes = n }(maxClassBytes)
	maxClassBytes = 4000
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		if err := s.Init(ctx, Registration{Name: "good", Budget: big.NewRat(1, 1), Class: testClass(t, 0.9)}); err != nil {
			t.Fatal(err)
		}
		err := s.Init(ctx, Registration{Name: "slow", Budget: big.NewRat(1, 1), Class: bigClass(t, 80)})
		if err == nil || !strings.Contains(err.Error(), "over the ledger's limit of 4000 bytes") || !strings.Contains(err.Error(), "80 states") {
			t.Fatalf("Init of an oversized class: %v", err)
		}
		if _, err := s.Dataset(ctx, "slow"); !errors.Is(err, ErrUnknown) {
			t.Fatalf("the refused dataset exists: %v", err)
		}
		sts, err := s.Datasets(ctx)
		if err != nil || len(sts) != 1 || sts[0].Dataset != "good" || sts[0].Err != nil {
			t.Fatalf("Datasets = %+v, %v", sts, err)
		}
		// a class set by the first release is checked the same way
		if err := s.Init(ctx, Registration{Name: "later", Budget: big.NewRat(1, 1)}); err != nil {
			t.Fatal(err)
		}
		cl := bigClass(t, 80)
		_, err = s.Spend(ctx, Spend{Dataset: "later", Class: cl, Record: rec(cl, 0.1)}, result(`{}`))
		if err == nil || !strings.Contains(err.Error(), "over the ledger's limit") {
			t.Fatalf("Spend setting an oversized class: %v", err)
		}
		if st, err := s.Dataset(ctx, "later"); err != nil || st.Releases != 0 || st.ClassHash != "" {
			t.Fatalf("after the refused spend: %+v, %v", st, err)
		}
	})
}

// A dataset whose stored class cannot be read (as one stored by an
// earlier version) is listed with its error among the others, by the
// store, puff ledger show's listing (text and JSON), and export writes the
// others before failing.
func TestOneUnreadableDatasetHidesNoOther(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		cl := testClass(t, 0.9)
		for _, n := range []string{"a", "slow", "z"} {
			if err := s.Init(ctx, Registration{Name: n, Budget: big.NewRat(1, 1), Class: cl}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Spend(ctx, Spend{Dataset: n, Class: cl, Record: rec(cl, 0.25)}, result(`{"x":1}`)); err != nil {
				t.Fatal(err)
			}
		}
		ss := s.(*sqlStore)
		if _, err := ss.db.ExecContext(ctx, ss.q(`UPDATE datasets SET class = ? WHERE name = ?`), `{"states": ["a"`, "slow"); err != nil {
			t.Fatal(err)
		}
		sts, err := s.Datasets(ctx)
		if err != nil || len(sts) != 3 {
			t.Fatalf("Datasets = %+v, %v", sts, err)
		}
		for i, want := range []string{"a", "slow", "z"} {
			st := sts[i]
			if st.Dataset != want || (st.Err != nil) != (want == "slow") {
				t.Fatalf("Datasets[%d] = %+v", i, st)
			}
			if want != "slow" && st.Spent.Epsilon.Cmp(big.NewRat(1, 4)) != 0 {
				t.Fatalf("%s spent %v", want, st.Spent.Epsilon)
			}
		}
		if !errors.Is(sts[1].Err, ErrUnreadable) {
			t.Fatalf("the bad dataset's error %v does not wrap ErrUnreadable", sts[1].Err)
		}
		l, err := List(ctx, s, "")
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := l.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "cannot be read: its stored class") || !strings.Contains(text.String(), "\na ") || !strings.Contains(text.String(), "\nz ") {
			t.Fatalf("listing:\n%s", text.String())
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Datasets []map[string]any `json:"datasets"`
		}
		if err := json.Unmarshal(b, &got); err != nil || len(got.Datasets) != 3 || got.Datasets[1]["error"] == nil || got.Datasets[0]["spent"] == nil || got.Datasets[2]["error"] != nil {
			t.Fatalf("JSON listing %s (%v)", b, err)
		}
		var out bytes.Buffer
		err = Export(ctx, s, &out, "", true)
		if !errors.Is(err, ErrUnreadable) || strings.Count(out.String(), "\n") != 2 {
			t.Fatalf("export: %v\n%s", err, out.String())
		}
	})
}
