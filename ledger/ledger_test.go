package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/record"
)

func testClass(t testing.TB, stay float64) *markov.Class {
	ch, err := markov.New([]string{"a", "b"}, [][]float64{{stay, 1 - stay}, {0.3, 0.7}}, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := markov.NewClass(ch.States, ch)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func rec(cl *markov.Class, eps float64, segs ...record.Segment) *record.Release {
	if len(segs) == 0 {
		segs = []record.Segment{{Series: "s1", First: 1, Last: 100, Readings: 100}}
	}
	return &record.Release{Mechanism: mechanism.Exact, Epsilon: eps, Class: cl.Hash(), Query: "counts", Segments: segs}
}

func open(t *testing.T, dsn string, create bool) Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, create)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func result(s string) func() (json.RawMessage, error) {
	return func() (json.RawMessage, error) { return json.RawMessage(s), nil }
}

func TestTenTenthsFitABudgetOfOne(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		cl := testClass(t, 0.9)
		if err := s.Init(ctx, Registration{Name: "house", Budget: big.NewRat(1, 1), Class: cl}); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			rc, err := s.Spend(ctx, Spend{Dataset: "house", Class: cl, Record: rec(cl, 0.1)}, result(fmt.Sprintf(`{"n": %d}`, i)))
			st := rc.State
			if err != nil {
				t.Fatalf("release %d: %v", i+1, err)
			}
			if want := big.NewRat(int64(i+1), 10); st.Spent.Epsilon.Cmp(want) != 0 || st.Releases != i+1 || st.Spent.Rule != "mqm-sequential" && i > 0 {
				t.Fatalf("after %d: spent %v by %s, %d releases", i+1, st.Spent.Epsilon, st.Spent.Rule, st.Releases)
			}
		}
		drawn := false
		_, err := s.Spend(ctx, Spend{Dataset: "house", Class: cl, Record: rec(cl, 0.1)}, func() (json.RawMessage, error) {
			drawn = true
			return json.RawMessage(`{}`), nil
		})
		var ref *Refused
		if !errors.As(err, &ref) || !errors.Is(err, ErrRefused) || drawn {
			t.Fatalf("11th release: %v (drawn %v)", err, drawn)
		}
		if ref.State.Spent.Epsilon.Cmp(big.NewRat(1, 1)) != 0 || ref.Would.Epsilon.Cmp(big.NewRat(11, 10)) != 0 || ref.State.Remaining().Sign() != 0 {
			t.Fatalf("refusal %+v", ref)
		}
		es, err := s.Entries(ctx, "house")
		if err != nil || len(es) != 10 {
			t.Fatalf("%d entries, %v", len(es), err)
		}
		for i, e := range es {
			if string(e.Result) != fmt.Sprintf(`{"n": %d}`, i) && string(e.Result) != fmt.Sprintf(`{"n":%d}`, i) {
				t.Fatalf("entry %d result %s", i, e.Result)
			}
			if e.Record.Epsilon != 0.1 || len(e.Record.Segments) != 1 || e.Record.Segments[0].Last != 100 {
				t.Fatalf("entry %d record %+v", i, e.Record)
			}
		}
		js, _ := json.Marshal(es[9])
		var back struct {
			Spent float64 `json:"spent"`
		}
		if json.Unmarshal(js, &back) != nil || back.Spent != 1 {
			t.Fatalf("entry JSON %s", js)
		}
		st, err := s.Dataset(ctx, "house")
		if err != nil {
			t.Fatal(err)
		}
		js, _ = json.Marshal(st)
		if string(js) != `{"dataset":"house","spent":1,"budget":1,"remaining":0,"rule":"mqm-sequential","theorem":"[SC17] Theorem III.7","releases":10,"class_hash":"`+cl.Hash()+`"}` {
			t.Fatalf("state JSON %s", js)
		}
	})
}

// The ledger's total is compose's verdict over the recorded records: here
// two series and, in one series, disjoint segments (the parallel rule).
func TestSpentIsTheComposedGuarantee(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		cl := testClass(t, 0.6)
		if err := s.Init(ctx, Registration{Name: "d", Budget: big.NewRat(5, 1)}); err != nil {
			t.Fatal(err)
		}
		recs := []*record.Release{
			rec(cl, 0.5, record.Segment{Series: "x", First: 1, Last: 50, Readings: 50}, record.Segment{Series: "y", First: 1, Last: 80, Readings: 80}),
			rec(cl, 0.25, record.Segment{Series: "x", First: 60, Last: 90, Readings: 31}),
			rec(cl, 0.25, record.Segment{Series: "x", First: 1, Last: 50, Readings: 50}),
		}
		for i, r := range recs {
			rc, err := s.Spend(ctx, Spend{Dataset: "d", Class: cl, Record: r}, result(`[1]`))
			st := rc.State
			if err != nil {
				t.Fatal(err)
			}
			want, err := compose.Records(cl, recs[:i+1])
			if err != nil {
				t.Fatal(err)
			}
			if st.Spent.Epsilon.Cmp(want.Epsilon) != 0 || st.Spent.Rule != want.Rule {
				t.Fatalf("after %d: %v by %s, compose says %v by %s", i+1, st.Spent.Epsilon, st.Spent.Rule, want.Epsilon, want.Rule)
			}
		}
		st, err := s.Dataset(ctx, "d")
		if err != nil || st.Spent.Rule != "mqm-parallel" || st.ClassHash != cl.Hash() {
			t.Fatalf("%+v %v", st, err)
		}
		// the parallel rule: own ε (0.75 on [1, 50]) plus a positive influence term
		if st.Spent.Epsilon.Cmp(big.NewRat(3, 4)) <= 0 || st.Spent.Epsilon.Cmp(big.NewRat(1, 1)) > 0 {
			t.Fatalf("spent %v", guarantee.Up(st.Spent.Epsilon))
		}
	})
}

func TestRefusals(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		if _, err := Open(ctx, dsn+"-missing", false); dsn[0] == '/' && err == nil {
			t.Fatal("a missing SQLite file opened without create")
		}
		s := open(t, dsn, true)
		cl, other := testClass(t, 0.9), testClass(t, 0.8)
		if err := s.Init(ctx, Registration{Name: "d", Budget: big.NewRat(1, 1), Class: cl}); err != nil {
			t.Fatal(err)
		}
		if err := s.Init(ctx, Registration{Name: "d", Budget: big.NewRat(2, 1), Class: cl}); err == nil {
			t.Fatal("a dataset was created twice (its budget could be raised)")
		}
		for _, bad := range []string{"", "a/b", "tab\there"} {
			if err := s.Init(ctx, Registration{Name: bad, Budget: big.NewRat(1, 1)}); err == nil {
				t.Errorf("name %q accepted", bad)
			}
		}
		if err := s.Init(ctx, Registration{Name: "third", Budget: big.NewRat(1, 3)}); err == nil {
			t.Error("budget 1/3 accepted (not a decimal)")
		}
		if _, err := s.Spend(ctx, Spend{Dataset: "nope", Class: cl, Record: rec(cl, 0.1)}, result(`{}`)); !errors.Is(err, ErrUnknown) {
			t.Errorf("unknown dataset: %v", err)
		}
		if _, err := s.Spend(ctx, Spend{Dataset: "d", Class: other, Record: rec(other, 0.1)}, result(`{}`)); err == nil {
			t.Error("a release under another class was accepted")
		}
		if _, err := s.Spend(ctx, Spend{Dataset: "d", Class: cl, Record: rec(cl, 0.1)}, func() (json.RawMessage, error) {
			return nil, errors.New("sampler failed")
		}); err == nil || err.Error() != "sampler failed" {
			t.Errorf("draw error: %v", err)
		}
		if _, err := s.Spend(ctx, Spend{Dataset: "d", Class: cl, Record: rec(cl, 0.1)}, result(`not json`)); err == nil {
			t.Error("a non-JSON result was recorded")
		}
		if es, _ := s.Entries(ctx, "d"); len(es) != 0 {
			t.Fatalf("failed releases left %d entries", len(es))
		}
		if _, err := s.Spend(ctx, Spend{Dataset: "d", Class: cl, Record: rec(cl, 1.5)}, result(`{}`)); !errors.Is(err, ErrRefused) {
			t.Errorf("ε above the budget: %v", err)
		}
		sts, err := s.Datasets(ctx)
		if err != nil || len(sts) != 1 || sts[0].Spent.Epsilon.Sign() != 0 || sts[0].Spent.Rule != "none" {
			t.Fatalf("%+v %v", sts, err)
		}
	})
}

// Goroutines with their own connections (the test of processes is in
// cmd/puff): 8 × 5 releases of 0.1 on a budget of 1 → exactly 10 accepted.
func TestConcurrentSpendsNeverOverspend(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s0 := open(t, dsn, true)
		cl := testClass(t, 0.9)
		if err := s0.Init(ctx, Registration{Name: "d", Budget: big.NewRat(1, 1), Class: cl}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		accepted, refused := 0, 0
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				s, err := Open(ctx, dsn, false)
				if err != nil {
					t.Error(err)
					return
				}
				defer s.Close()
				for range 5 {
					_, err := s.Spend(ctx, Spend{Dataset: "d", Class: cl, Record: rec(cl, 0.1)}, result(`{}`))
					mu.Lock()
					switch {
					case err == nil:
						accepted++
					case errors.Is(err, ErrRefused):
						refused++
					default:
						t.Error(err)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		es, err := s0.Entries(ctx, "d")
		if accepted != 10 || refused != 30 || len(es) != 10 || err != nil {
			t.Fatalf("accepted %d, refused %d, %d rows (%v)", accepted, refused, len(es), err)
		}
	})
}

// The same with a token's own budget (0.5 inside the dataset's 1): the
// token's running state is kept under the dataset's lock too, so exactly
// 5 of its releases are accepted.
func TestConcurrentTokenSpendsNeverOverspend(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s0 := open(t, dsn, true)
		cl := testClass(t, 0.9)
		if err := s0.Init(ctx, Registration{Name: "d", Budget: big.NewRat(1, 1), Class: cl}); err != nil {
			t.Fatal(err)
		}
		_, tok, err := s0.CreateToken(ctx, []string{"release:d"}, big.NewRat(1, 2))
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		accepted, refused := 0, 0
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				s, err := Open(ctx, dsn, false)
				if err != nil {
					t.Error(err)
					return
				}
				defer s.Close()
				for range 3 {
					_, err := s.Spend(ctx, Spend{Dataset: "d", Class: cl, Record: rec(cl, 0.1), Token: tok.ID, TokenBudget: tok.Budget}, result(`{}`))
					mu.Lock()
					switch {
					case err == nil:
						accepted++
					case errors.Is(err, ErrRefused):
						refused++
					default:
						t.Error(err)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		st, err := s0.Dataset(ctx, "d")
		if accepted != 5 || refused != 13 || err != nil || st.Releases != 5 || st.Spent.Epsilon.Cmp(big.NewRat(1, 2)) != 0 {
			t.Fatalf("accepted %d, refused %d, state %+v (%v)", accepted, refused, st, err)
		}
	})
}

func TestParseBudget(t *testing.T) {
	for s, ok := range map[string]bool{"1": true, "0.1": true, "2.5": true, "1/4": true, "1/3": false, "0": false, "-1": false, "NaN": false, "x": false, "1e400": false, "1e-1000000000": false, "2.5e1": false} {
		if _, err := ParseBudget(s); (err == nil) != ok {
			t.Errorf("ParseBudget(%q): %v", s, err)
		}
	}
}

func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		r    *big.Rat
		want string
	}{
		{big.NewRat(0, 1), "0"}, {big.NewRat(1, 1), "1"}, {big.NewRat(10, 1), "10"}, {big.NewRat(1, 10), "0.1"},
		{big.NewRat(5, 2), "2.5"}, {big.NewRat(1, 3), "0.33333333333333337"},
	} {
		if got := Decimal(c.r); got != c.want {
			t.Errorf("Decimal(%v) = %q, want %q", c.r, got, c.want)
		}
	}
}

func TestTokensAndIdempotency(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		cl := testClass(t, 0.9)
		if err := s.Init(ctx, Registration{Name: "d", Budget: big.NewRat(1, 1), Class: cl}); err != nil {
			t.Fatal(err)
		}
		secret, tok, err := s.CreateToken(ctx, []string{"release:d"}, big.NewRat(3, 10))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Authenticate(ctx, secret)
		if err != nil || got.ID != tok.ID || !got.Can("release:d") || !got.Can("read:d") || got.Can("admin") || got.Can("release:e") || got.Budget.Cmp(big.NewRat(3, 10)) != 0 {
			t.Fatalf("%+v %v", got, err)
		}
		for _, bad := range []string{"", secret + "x", secret[:len(secret)-1] + "0", "puff_" + tok.ID + "_" + fmt.Sprintf("%064d", 0)} {
			if bad == secret {
				continue
			}
			if _, err := s.Authenticate(ctx, bad); !errors.Is(err, ErrBadToken) {
				t.Errorf("secret %q: %v", bad, err)
			}
		}
		if _, _, err := s.CreateToken(ctx, []string{"write:d"}, nil); err == nil {
			t.Error("scope write:d accepted")
		}
		// idempotency: the repeat returns the recorded result, draws nothing
		draws := 0
		draw := func() (json.RawMessage, error) {
			draws++
			return json.RawMessage(fmt.Sprintf(`{"draw": %d}`, draws)), nil
		}
		sp := Spend{Dataset: "d", Class: cl, Record: rec(cl, 0.1), Token: tok.ID, TokenBudget: got.Budget, IdempotencyKey: "k1", RequestHash: "h1"}
		a, err := s.Spend(ctx, sp, draw)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Spend(ctx, sp, draw)
		if err != nil || !b.Replayed || b.ID != a.ID || string(b.Result) != string(a.Result) || draws != 1 || b.State.Spent.Epsilon.Cmp(a.State.Spent.Epsilon) != 0 || b.State.Releases != 1 {
			t.Fatalf("repeat: %+v %v (draws %d)", b, err, draws)
		}
		other := sp
		other.RequestHash = "h2"
		if _, err := s.Spend(ctx, other, draw); !errors.Is(err, ErrKeyReused) {
			t.Fatalf("key reused with another request: %v", err)
		}
		// the token's own budget (0.3) binds before the dataset's (1)
		for _, k := range []string{"k2", "k3"} {
			sp.IdempotencyKey = k
			if _, err := s.Spend(ctx, sp, draw); err != nil {
				t.Fatal(err)
			}
		}
		sp.IdempotencyKey = "k4"
		if _, err := s.Spend(ctx, sp, draw); !errors.Is(err, ErrRefused) || draws != 3 {
			t.Fatalf("over the token budget: %v (draws %d)", err, draws)
		}
		es, _ := s.Entries(ctx, "d")
		if len(es) != 3 || es[0].Token != tok.ID {
			t.Fatalf("%d entries", len(es))
		}
		if err := s.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, secret); !errors.Is(err, ErrBadToken) {
			t.Fatalf("revoked token: %v", err)
		}
		if err := s.RevokeToken(ctx, tok.ID); err == nil {
			t.Fatal("revoked twice")
		}
		ts, err := s.Tokens(ctx)
		if err != nil || len(ts) != 1 || ts[0].Revoked == nil {
			t.Fatalf("%+v %v", ts, err)
		}
	})
}

// The calibration cache keeps a value per key across openings of the
// ledger, replaces it on a second put, and answers "none" for a key never
// put; on SQLite and PostgreSQL.
func TestCalibrationCache(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		c, ok := s.(interface {
			GetCached(context.Context, string) ([]byte, bool, error)
			PutCached(context.Context, string, []byte) error
		})
		if !ok {
			t.Fatal("the store has no calibration cache")
		}
		if _, found, err := c.GetCached(ctx, "k"); found || err != nil {
			t.Fatalf("empty cache: %v %v", found, err)
		}
		for _, v := range []string{`{"sigma": 1}`, `{"sigma": 2}`} {
			if err := c.PutCached(ctx, "k", []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		c2 := open(t, dsn, false).(interface {
			GetCached(context.Context, string) ([]byte, bool, error)
		})
		if v, found, err := c2.GetCached(ctx, "k"); !found || err != nil || string(v) != `{"sigma": 2}` {
			t.Fatalf("reopened: %q %v %v", v, found, err)
		}
	})
}
