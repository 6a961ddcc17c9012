package logfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// Migration is the releases of a log file (written by puff release
// --log) to move into a durable ledger, each dataset with Budget: the
// migration away from the JSON log. What the log composed, the ledger
// composes the same way (package compose; the leakage rule only for
// releases whose σ the log keeps, those logged since issue 40).
type Migration struct {
	Path     string
	Budget   *big.Rat
	Datasets []compose.Recorded
}

// ReadMigration reads the log file at path (only the dataset named, when
// only is not "") and checks, before any ledger is touched, that it was
// written by puff release --log (compose.Unappend) and that each
// dataset's total is within budget.
func ReadMigration(path string, budget *big.Rat, only string) (*Migration, error) {
	raw, err := readLog(path)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	var lg compose.Log
	if err := strictjson.Decode(raw, path, &lg); err != nil {
		return nil, err
	}
	all, err := compose.Unappend(&lg, path)
	if err != nil {
		return nil, err
	}
	var todo []compose.Recorded
	for _, d := range all {
		if only == "" || d.Dataset == only {
			todo = append(todo, d)
		}
	}
	if len(todo) == 0 {
		return nil, fmt.Errorf("%s: no dataset %q in the log", path, only)
	}
	for _, d := range todo {
		v, err := compose.Records(d.Class, d.Records)
		if err != nil {
			return nil, fmt.Errorf("%s: dataset %q: %w", path, d.Dataset, err)
		}
		if v.Epsilon.Cmp(budget) > 0 {
			return nil, fmt.Errorf("%s: dataset %q: the log's releases total ε = %s by %s, over the budget %s: nothing imported", path, d.Dataset, ledger.Decimal(v.Epsilon), v.Rule, ledger.Decimal(budget))
		}
	}
	return &Migration{Path: path, Budget: budget, Datasets: todo}, nil
}

// Into registers each dataset of m in the ledger s with its budget and
// class and spends each of its releases in order, one transaction each,
// as if it had been released through the ledger (the log keeps no noisy
// results: recorded as null). Nothing is written unless every dataset is
// new to the ledger; a later failure (the ledger's own, e.g. a lost
// connection) leaves the datasets imported so far and says how many.
func (m *Migration) Into(ctx context.Context, s ledger.Store) ([]ledger.State, error) {
	todo := m.Datasets
	for _, d := range todo {
		if _, err := s.Definition(ctx, d.Dataset); err == nil {
			return nil, fmt.Errorf("ledger: dataset %q %w: nothing imported (import into another ledger; --dataset imports one dataset of the log)", d.Dataset, ledger.ErrExists)
		} else if !errors.Is(err, ledger.ErrUnknown) {
			return nil, err
		}
	}
	var out []ledger.State
	for i, d := range todo {
		if err := s.Init(ctx, ledger.Registration{Name: d.Dataset, Budget: m.Budget, Class: d.Class}); err != nil {
			return out, fmt.Errorf("%w (imported: %d of %d datasets)", err, i, len(todo))
		}
		var rc ledger.Receipt
		var err error
		for j, rec := range d.Records {
			rc, err = s.Spend(ctx, ledger.Spend{Dataset: d.Dataset, Class: d.Class, Record: rec}, func() (json.RawMessage, error) {
				return json.RawMessage("null"), nil
			})
			if err != nil {
				return out, fmt.Errorf("dataset %q: release %d of %d: %w (imported: %d of %d datasets)", d.Dataset, j+1, len(d.Records), err, i, len(todo))
			}
		}
		out = append(out, rc.State)
	}
	return out, nil
}
