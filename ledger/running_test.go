package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// randomSpend draws a record for a random history: mixed mechanisms,
// series, segments that repeat, overlap or lie apart, quilts, σ, and
// (once per dataset) a stream.
func randomSpend(rng *rand.Rand, cl *markov.Class, stream bool, flavour int) *record.Release {
	kinds := [][]mechanism.Name{
		{mechanism.Exact, mechanism.Exact, mechanism.Approx},
		{mechanism.DP},
		{mechanism.Exact, mechanism.Approx, mechanism.DP, mechanism.GroupDP, mechanism.GK16},
	}[flavour]
	epss := []float64{0.1, 0.2, 0.25, 0.3, 0.5, 0.05}
	r := &record.Release{Mechanism: kinds[rng.IntN(len(kinds))], Epsilon: epss[rng.IntN(len(epss))], Class: cl.Hash(), Query: "counts"}
	if rng.IntN(8) > 0 {
		r.Sigma = []float64{0.5, 2, 10, 40}[rng.IntN(4)]
	}
	if stream {
		r.Stream = true
		r.Mechanism = []mechanism.Name{mechanism.Exact, mechanism.Pufferfish}[rng.IntN(2)]
		return r
	}
	series := []string{"", "x", "y", "z"}
	for range 1 + rng.IntN(3) {
		first := []int{1, 1, 5, 12, 20}[rng.IntN(5)]
		last := first + []int{0, 3, 5}[rng.IntN(3)]
		sg := record.Segment{Series: series[rng.IntN(len(series))], First: first, Last: last, Readings: last - first + 1}
		if r.Mechanism == mechanism.Approx && rng.IntN(3) > 0 {
			sg.Quilt = &compose.Quilt{A: 1 + rng.IntN(3), B: 1 + rng.IntN(3)}
		}
		r.Segments = append(r.Segments, sg)
	}
	if rng.IntN(80) == 0 {
		r.Segments = append(r.Segments, r.Segments[0]) // two entries of one name: Records refuses it
	}
	return r
}

// TestSpendEqualsRecomposition: on random histories (mixed rules, series,
// a stream, tokens with and without budgets, both stores), every spend's
// decision and total are compose.Records' over the recorded releases
// plus the new one — accepted with exactly its rational, rule and theorem
// when within the budget (and the token's), refused with its total
// otherwise, an error when Records has no rule — and Dataset reports
// Records' total after every spend. Records composes the records from
// scratch: the oracle the running state must equal. Now and then the
// stored state is deleted (an old ledger, or a writer that did not keep
// it) or a budgeted token spends without its budget: the state is rebuilt
// from the records. Two stores (as two processes) take turns at spending.
func TestSpendEqualsRecomposition(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		s2 := open(t, dsn, false) // a second process on the same ledger
		histories, spends := 24, 16
		if testing.Short() {
			histories = 6
		}
		classes := []*markov.Class{testClass(t, 0.9), testClass(t, 0.3)}
		{
			ch, err := markov.New([]string{"a", "b"}, [][]float64{{0.6, 0.4}, {0.6, 0.4}}, markov.InitStationary, nil)
			if err != nil {
				t.Fatal(err)
			}
			ind, err := markov.NewClass(ch.States, ch)
			if err != nil {
				t.Fatal(err)
			}
			classes = append(classes, ind)
		}
		_, tokB, err := s.CreateToken(ctx, []string{"release:*"}, big.NewRat(7, 10))
		if err != nil {
			t.Fatal(err)
		}
		_, tokN, err := s.CreateToken(ctx, []string{"release:*"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tokens := []Token{{}, tokB, tokN}
		outcomes := map[string]int{}
		for h := range histories {
			rng := rand.New(rand.NewPCG(uint64(h), 4))
			cl := classes[h/3%len(classes)]
			name := fmt.Sprintf("d%d", h)
			budget := big.NewRat(int64(1+rng.IntN(3)), 1)
			if err := s.Init(ctx, Registration{Name: name, Budget: budget, Class: cl}); err != nil {
				t.Fatal(err)
			}
			var all []*record.Release
			owner := []string{}
			hasStream := false
			for i := range spends {
				stream := !hasStream && rng.IntN(10) == 0
				rec := randomSpend(rng, cl, stream, h%3)
				tok := tokens[rng.IntN(len(tokens))]
				sp := Spend{Dataset: name, Class: cl, Record: rec, Token: tok.ID, TokenBudget: tok.Budget}
				if tok.Budget != nil && rng.IntN(5) == 0 {
					sp.TokenBudget = nil // the token's state falls behind
				}
				if stream {
					sp.Stream = &StreamInit{Settings: []byte(`{}`), State: []byte(`{}`)}
				}
				if rng.IntN(8) == 0 {
					dropState(t, s, name)
				}
				// the oracle
				next := append(all[:len(all):len(all)], rec)
				want, werr := compose.Records(cl, next)
				var mine []*record.Release
				for j, r := range all {
					if owner[j] == tok.ID {
						mine = append(mine, r)
					}
				}
				tw, twerr := compose.Records(cl, append(mine, rec))
				spender := s
				if rng.IntN(2) == 0 {
					spender = s2
				}
				rc, err := spender.Spend(ctx, sp, result(`{}`))
				var ref *Refused
				switch {
				case werr != nil:
					if err == nil || errors.As(err, &ref) || err.Error() != fmt.Sprintf("ledger: dataset %q: %v", name, werr) {
						t.Fatalf("history %d spend %d: Records: %v; Spend: %v", h, i, werr, err)
					}
					outcomes["error"]++
				case want.Epsilon.Cmp(budget) > 0:
					if !errors.As(err, &ref) || ref.Would.Epsilon.Cmp(want.Epsilon) != 0 || ref.Would.Rule != want.Rule {
						t.Fatalf("history %d spend %d: Records %v by %s over %v; Spend: %v", h, i, want.Epsilon, want.Rule, budget, err)
					}
					outcomes["refused"]++
				case sp.TokenBudget != nil && twerr != nil:
					if err == nil || errors.As(err, &ref) {
						t.Fatalf("history %d spend %d: the token's records: %v; Spend: %v", h, i, twerr, err)
					}
					outcomes["token error"]++
				case sp.TokenBudget != nil && tw.Epsilon.Cmp(sp.TokenBudget) > 0:
					if !errors.As(err, &ref) || ref.Would.Epsilon.Cmp(tw.Epsilon) != 0 || ref.Would.Rule != tw.Rule+" (this token's own budget)" {
						t.Fatalf("history %d spend %d: the token's Records %v by %s; Spend: %v", h, i, tw.Epsilon, tw.Rule, err)
					}
					outcomes["refused (token)"]++
				default:
					if err != nil {
						t.Fatalf("history %d spend %d: Records %v by %s within %v; Spend: %v", h, i, want.Epsilon, want.Rule, budget, err)
					}
					st := rc.State
					if st.Spent.Epsilon.Cmp(want.Epsilon) != 0 || st.Spent.Rule != want.Rule || st.Spent.Theorem != want.Theorem || st.Releases != len(next) {
						t.Fatalf("history %d spend %d: Spend %v by %s (%s), %d releases; Records %v by %s (%s), %d", h, i, st.Spent.Epsilon, st.Spent.Rule, st.Spent.Theorem, st.Releases, want.Epsilon, want.Rule, want.Theorem, len(next))
					}
					all, owner = next, append(owner, tok.ID)
					hasStream = hasStream || stream
					outcomes["accepted "+want.Rule]++
				}
				st, err := s.Dataset(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				if len(all) > 0 {
					now, err := compose.Records(cl, all)
					if err != nil {
						t.Fatal(err)
					}
					if st.Spent.Epsilon.Cmp(now.Epsilon) != 0 || st.Spent.Rule != now.Rule || st.Spent.Theorem != now.Theorem || st.Releases != len(all) {
						t.Fatalf("history %d after spend %d: Dataset %v by %s, %d releases; Records %v by %s, %d", h, i, st.Spent.Epsilon, st.Spent.Rule, st.Releases, now.Epsilon, now.Rule, len(all))
					}
				} else if st.Spent.Epsilon.Sign() != 0 || st.Spent.Rule != "none" {
					t.Fatalf("history %d: nothing recorded, Dataset says %v by %s", h, st.Spent.Epsilon, st.Spent.Rule)
				}
			}
		}
		t.Logf("outcomes: %v", outcomes)
		if !testing.Short() {
			for _, o := range []string{"refused", "accepted mqm-parallel", "accepted mqm-sequential", "accepted dp-leakage"} {
				if outcomes[o] == 0 {
					t.Errorf("no spend ended %q: the generator misses it", o)
				}
			}
		}
	})
}

// dropState deletes a dataset's stored running state, as a ledger from
// before it has none.
func dropState(t *testing.T, s Store, dataset string) {
	t.Helper()
	db := s.(*sqlStore)
	for _, q := range []string{`DELETE FROM compose_chains WHERE dataset = ?`, `DELETE FROM compose_state WHERE dataset = ?`} {
		if _, err := db.db.Exec(db.q(q), dataset); err != nil {
			t.Fatal(err)
		}
	}
}

// An old ledger (the schema before the running state, releases recorded)
// is migrated on open: the migration builds every dataset's state from its
// records, and the totals are what they were.
func TestMigrationBuildsTheRunningState(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		cl := testClass(t, 0.6)
		for _, n := range []string{"a", "b"} {
			if err := s.Init(ctx, Registration{Name: n, Budget: big.NewRat(10, 1), Class: cl}); err != nil {
				t.Fatal(err)
			}
		}
		recs := []*record.Release{
			rec(cl, 0.5, record.Segment{Series: "x", First: 1, Last: 50, Readings: 50}, record.Segment{Series: "y", First: 1, Last: 80, Readings: 80}),
			rec(cl, 0.25, record.Segment{Series: "x", First: 60, Last: 90, Readings: 31}),
			rec(cl, 0.25, record.Segment{Series: "x", First: 1, Last: 50, Readings: 50}),
		}
		for _, r := range recs {
			if _, err := s.Spend(ctx, Spend{Dataset: "a", Class: cl, Record: r}, result(`[1]`)); err != nil {
				t.Fatal(err)
			}
		}
		before, err := s.Dataset(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		// back to the old schema: no running state, no token index
		db := s.(*sqlStore)
		old := len(migrations) - 5
		for _, q := range []string{`DROP TABLE calibration_cache`, `DROP TABLE compose_chains`, `DROP TABLE compose_state`, `DROP INDEX releases_token`, fmt.Sprintf(`DELETE FROM schema_migrations WHERE version > %d`, old)} {
			if _, err := db.db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		s2 := open(t, dsn, false)
		db2 := s2.(*sqlStore)
		var n int
		if err := db2.db.QueryRow(`SELECT COUNT(*) FROM compose_state`).Scan(&n); err != nil || n != 2 {
			t.Fatalf("%d states after the migration (%v), want one per dataset", n, err)
		}
		var chains int
		if err := db2.db.QueryRow(db2.q(`SELECT COUNT(*) FROM compose_chains WHERE dataset = ?`), "a").Scan(&chains); err != nil || chains != 2 {
			t.Fatalf("%d chains (%v), want x and y", chains, err)
		}
		after, err := s2.Dataset(ctx, "a")
		if err != nil || after.Spent.Epsilon.Cmp(before.Spent.Epsilon) != 0 || after.Spent.Rule != before.Spent.Rule || after.Releases != 3 {
			t.Fatalf("after the migration %+v (%v), before %+v", after, err, before)
		}
		// the state read is the migrated one, not a recomposition
		sc, err := db2.loadScope(ctx, db2.db, "a", nil, row{class: cl}, false, nil)
		if err != nil || sc == nil || sc.rebuilt || sc.run.Records != 3 {
			t.Fatalf("state %+v %v", sc, err)
		}
		more := rec(cl, 0.25, record.Segment{Series: "y", First: 90, Last: 99, Readings: 10})
		rc, err := s2.Spend(ctx, Spend{Dataset: "a", Class: cl, Record: more}, result(`[2]`))
		if err != nil {
			t.Fatal(err)
		}
		want, err := compose.Records(cl, append(recs, more))
		if err != nil || rc.State.Spent.Epsilon.Cmp(want.Epsilon) != 0 || rc.State.Spent.Rule != want.Rule {
			t.Fatalf("spend after migration: %v by %s; Records %v by %s (%v)", rc.State.Spent.Epsilon, rc.State.Spent.Rule, want.Epsilon, want.Rule, err)
		}
	})
}
