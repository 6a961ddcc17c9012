package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"path/filepath"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// BenchmarkSpend is accepted releases per second, one process, on a ledger
// already holding n releases of 10 series each (the built-in example's
// shape): the transaction, the composition (through the running state,
// docs/math.md §4.11: flat in n) and the durable commit. Run with
// -benchtime 50x so n barely grows.
func BenchmarkSpend(b *testing.B) {
	for _, c := range []struct {
		store string
		n     int
	}{{"sqlite", 10}, {"sqlite", 1000}, {"sqlite", 10000}, {"postgres", 10}, {"postgres", 1000}, {"postgres", 10000}} {
		store := c.store
		b.Run(fmt.Sprintf("%s/recorded=%d", store, c.n), func(b *testing.B) {
			dsn := filepath.Join(b.TempDir(), "bench.db")
			if store == "postgres" {
				dsn = pgtest.DSN(b)
			}
			ctx := context.Background()
			s, err := Open(ctx, dsn, true)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			cl := testClass(b, 0.9)
			if err := s.Init(ctx, Registration{Name: "d", Budget: big.NewRat(1e6, 1), Class: cl}); err != nil {
				b.Fatal(err)
			}
			var segs []record.Segment
			for i := range 10 {
				segs = append(segs, record.Segment{Series: string(rune('a' + i)), First: 1, Last: 480, Readings: 480})
			}
			r := rec(cl, 0.001, segs...)
			res := json.RawMessage(`{"histogram": [1, 2, 3]}`)
			for range c.n {
				if _, err := s.Spend(ctx, Spend{Dataset: "d", Class: cl, Record: r}, func() (json.RawMessage, error) { return res, nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Spend(ctx, Spend{Dataset: "d", Class: cl, Record: r}, func() (json.RawMessage, error) { return res, nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
