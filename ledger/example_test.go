package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// A dataset registered with a budget of ε = 2.5, then three releases of
// the built-in example at ε = 1 each. The ledger composes every recorded
// release with the new one before any noise is drawn: each release is
// calibrated by the temporal leakage bound (less noise than MQM's), so
// two compose by the dp-leakage rule to a little over 2, and the third
// would bring the total over the budget and is refused, with nothing
// drawn or recorded.
// (A seeded source makes the example reproducible; real releases use
// crypto/rand.)
func ExampleStore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)
	store, err := ledger.Open(ctx, filepath.Join(dir, "budget.db"), true)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	class, _ := markov.ParseClass(release.ExampleClass(), "example class")
	if err := store.Init(ctx, ledger.Registration{Name: "activity", Budget: big.NewRat(5, 2), Class: class}); err != nil {
		fmt.Println(err)
		return
	}
	src := rand.NewChaCha8([32]byte{7})
	for i := 1; i <= 3; i++ {
		req := release.Request{CSV: reading.DefaultCSV, Class: class,
			Options: release.Options{Epsilon: 1, Method: mechanism.Exact, Source: src}}
		req.CSV.States = class.States
		p, err := release.Prepare(release.ExampleData(), "example", req, 0)
		if err != nil {
			fmt.Println(err)
			return
		}
		drawn := false
		rc, err := store.Spend(ctx, ledger.Spend{Dataset: "activity", Class: p.Class, Record: p.Record}, func() (json.RawMessage, error) {
			drawn = true
			out, err := p.Draw()
			if err != nil {
				return nil, err
			}
			return json.Marshal(out)
		})
		var refused *ledger.Refused
		switch {
		case errors.As(err, &refused):
			fmt.Printf("release %d refused (noise drawn: %v)\n", i, drawn)
		case err != nil:
			fmt.Println(err)
			return
		default:
			fmt.Printf("release %d recorded: spent %s of %s, remaining %s\n", i,
				ledger.Decimal(rc.State.Spent.Epsilon), ledger.Decimal(rc.State.Budget), ledger.Decimal(rc.State.Remaining()))
		}
	}
	st, _ := store.Dataset(ctx, "activity")
	fmt.Printf("%d releases recorded, spent %s by %s\n", st.Releases, ledger.Decimal(st.Spent.Epsilon), st.Spent.Rule)
	// Output:
	// release 1 recorded: spent 1 of 2.5, remaining 1.5
	// release 2 recorded: spent 2.0197390274571476 of 2.5, remaining 0.4802609725428524
	// release 3 refused (noise drawn: false)
	// 2 releases recorded, spent 2.0197390274571476 by dp-leakage
}
