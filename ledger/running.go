package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// The running composition state (compose.Running, docs/math.md §4.11),
// kept per dataset and per token with a budget ("scope"): a header row in
// compose_state (the dataset-wide state, its verdict and the id of the
// last release folded in) and one row per chain (series) in
// compose_chains. A spend reads the header, the chains its record touches
// and every chain's best claim (a few columns), and writes back the
// header and the touched chains, in its own transaction under the
// dataset's lock. When the header's last id is not the scope's last
// release (a ledger from before the state, or a writer that did not keep
// it), the state is rebuilt from the records first.

// datasetScope is the dataset's own scope; tokenScope a token's.
const datasetScope = ""

func tokenScope(id string) string { return "token:" + id }

// scope is one scope's state as read in a transaction.
type scope struct {
	name    string
	token   *string // nil: every release of the dataset; else this token's
	lastID  int64
	run     compose.Running
	spent   guarantee.Guarantee       // the verdict over the releases folded in
	chains  map[string]*compose.Chain // the chains loaded (all, when rebuilt)
	rebuilt bool
}

// state is the scope's verdict as a State.
func (sc *scope) state(dataset string, r row, budget *big.Rat) State {
	return State{Dataset: dataset, Budget: budget, Spent: sc.spent, Releases: sc.run.Records, ClassHash: r.hash}
}

// maxID is the id of the scope's last release (0: none).
func (s *sqlStore) maxID(ctx context.Context, q querier, dataset string, token *string) (int64, error) {
	// ORDER BY ... LIMIT 1: one step down the index in both databases
	var id int64
	var err error
	if token == nil {
		err = q.QueryRowContext(ctx, s.q(`SELECT id FROM releases WHERE dataset = ? ORDER BY id DESC LIMIT 1`), dataset).Scan(&id)
	} else {
		err = q.QueryRowContext(ctx, s.q(`SELECT id FROM releases WHERE dataset = ? AND token = ? ORDER BY id DESC LIMIT 1`), dataset, *token).Scan(&id)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	return id, nil
}

// loadScope reads a scope's state, rebuilding it from the records when it
// is missing or behind. Without create, a missing state is not built:
// nil, nil.
func (s *sqlStore) loadScope(ctx context.Context, q querier, dataset string, token *string, r row, create bool, entries func() ([]Entry, error)) (*scope, error) {
	sc := &scope{name: datasetScope, token: token}
	if token != nil {
		sc.name = tokenScope(*token)
	}
	var state, spent string
	err := q.QueryRowContext(ctx, s.q(`SELECT last_id, state, spent, rule, theorem FROM compose_state WHERE dataset = ? AND scope = ?`), dataset, sc.name).
		Scan(&sc.lastID, &state, &spent, &sc.spent.Rule, &sc.spent.Theorem)
	found := err == nil
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if !create {
			return nil, nil
		}
	case err != nil:
		return nil, fmt.Errorf("ledger: %w", err)
	}
	last, err := s.maxID(ctx, q, dataset, token)
	if err != nil {
		return nil, err
	}
	if found && last == sc.lastID {
		if err := json.Unmarshal([]byte(state), &sc.run); err != nil {
			return nil, fmt.Errorf("ledger: dataset %q: running state: %w", dataset, err)
		}
		var ok bool
		if sc.spent.Epsilon, ok = new(big.Rat).SetString(spent); !ok {
			return nil, fmt.Errorf("ledger: dataset %q: running state: spent %q is not a number", dataset, spent)
		}
		sc.chains = map[string]*compose.Chain{}
		return sc, nil
	}
	if entries == nil {
		return nil, nil // behind, and not to be rebuilt here
	}
	es, err := entries()
	if err != nil {
		return nil, err
	}
	if token != nil {
		es = mine(es, *token)
	}
	sc.fold(ctx, dataset, r, es)
	sc.lastID = last
	return sc, nil
}

// mine is a token's entries.
func mine(es []Entry, token string) []Entry {
	var out []Entry
	for _, e := range es {
		if e.Token == token {
			out = append(out, e)
		}
	}
	return out
}

// fold builds the state from the records, and its verdict.
func (sc *scope) fold(ctx context.Context, dataset string, r row, es []Entry) {
	sc.run, sc.chains, sc.rebuilt = compose.Running{}, map[string]*compose.Chain{}, true
	for i := range es {
		if sc.run.Full || sc.run.Add(r.class, &es[i].Record, sc.chains) != nil {
			sc.run.Full = true
		}
	}
	sc.run.Records = len(es)
	sc.spent = guarantee.None()
	if len(es) == 0 {
		return
	}
	v, err := sc.run.VerdictContext(ctx, r.class, bests(sc.chains, nil))
	if sc.run.Full || err != nil {
		sc.run.Full, sc.chains = true, nil
		st, err := state(ctx, dataset, r, es, nil)
		if err != nil {
			return // Full: every read recomposes, and meets the error
		}
		sc.spent = st.Spent
		return
	}
	sc.spent = v.Guarantee
}

// bests is every chain's best claim: the stored ones, replaced by those
// of the chains in memory.
func bests(chains map[string]*compose.Chain, stored []compose.Best) []compose.Best {
	var out []compose.Best
	for _, b := range stored {
		if chains[b.Chain] == nil {
			out = append(out, b)
		}
	}
	for name, c := range chains {
		b := c.Best
		b.Chain = name
		out = append(out, b)
	}
	return out
}

// storedBests reads every chain's best claim of a scope.
func (s *sqlStore) storedBests(ctx context.Context, q querier, dataset, scope string) ([]compose.Best, error) {
	rows, err := q.QueryContext(ctx, s.q(`SELECT chain, ord, applies, bound, rule, theorem FROM compose_chains WHERE dataset = ? AND scope = ?`), dataset, scope)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer rows.Close()
	var out []compose.Best
	for rows.Next() {
		var b compose.Best
		var applies int
		var bound string
		if err := rows.Scan(&b.Chain, &b.Order, &applies, &bound, &b.Rule, &b.Theorem); err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		b.Applies = applies != 0
		if b.Applies {
			var ok bool
			if b.Epsilon, ok = new(big.Rat).SetString(bound); !ok {
				return nil, fmt.Errorf("ledger: dataset %q: chain %q: bound %q is not a number", dataset, b.Chain, bound)
			}
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// loadChains reads the state of the named chains (those that exist).
func (s *sqlStore) loadChains(ctx context.Context, q querier, dataset, scope string, names []string, into map[string]*compose.Chain) error {
	var need []any
	for _, n := range names {
		if into[n] == nil {
			need = append(need, n)
		}
	}
	if len(need) == 0 {
		return nil
	}
	args := append([]any{dataset, scope}, need...)
	rows, err := q.QueryContext(ctx, s.q(`SELECT chain, state FROM compose_chains WHERE dataset = ? AND scope = ? AND chain IN (?`+strings.Repeat(", ?", len(need)-1)+`)`), args...)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, state string
		if err := rows.Scan(&name, &state); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		c := new(compose.Chain)
		if err := json.Unmarshal([]byte(state), c); err != nil {
			return fmt.Errorf("ledger: dataset %q: chain %q: %w", dataset, name, err)
		}
		into[name] = c
	}
	return rows.Err()
}

// step is a scope's state after the new record: what Spend checks and,
// once the release is recorded, writes.
type step struct {
	sc     *scope
	run    compose.Running
	chains map[string]*compose.Chain
	spent  guarantee.Guarantee
}

// advance composes the record into the scope. It falls back to composing
// the records (entries) where the running state cannot answer
// (compose.ErrFull), and then marks the scope to be composed from its
// records from then on.
func (s *sqlStore) advance(ctx context.Context, q querier, dataset string, sc *scope, r row, rec *record.Release, entries func() ([]Entry, error)) (*step, error) {
	st := &step{sc: sc, run: sc.run, chains: sc.chains}
	full := sc.run.Full
	if !full {
		if err := s.loadChains(ctx, q, dataset, sc.name, compose.Touches(rec), st.chains); err != nil {
			return nil, err
		}
		if err := st.run.Add(r.class, rec, st.chains); err != nil {
			if !errors.Is(err, compose.ErrFull) {
				return nil, err
			}
			full = true
		}
	}
	if !full {
		var stored []compose.Best
		if !sc.rebuilt {
			var err error
			if stored, err = s.storedBests(ctx, q, dataset, sc.name); err != nil {
				return nil, err
			}
		}
		v, err := st.run.VerdictContext(ctx, r.class, bests(st.chains, stored))
		switch {
		case err == nil:
			st.spent = v.Guarantee
			return st, nil
		case !errors.Is(err, compose.ErrFull):
			return nil, err
		}
	}
	// the records, composed from scratch
	es, err := entries()
	if err != nil {
		return nil, err
	}
	if sc.token != nil {
		es = mine(es, *sc.token)
	}
	w, err := state(ctx, dataset, r, es, rec)
	if err != nil {
		return nil, err
	}
	st.run = sc.run
	st.run.Full = true
	st.run.Records = len(es) + 1
	st.chains = nil
	st.spent = w.Spent
	return st, nil
}

// write stores the scope's state after the release id.
func (s *sqlStore) write(ctx context.Context, tx *sql.Tx, dataset string, st *step, id int64) error {
	js, err := json.Marshal(st.run)
	if err != nil {
		return err
	}
	return s.writeState(ctx, tx, dataset, st.sc.name, id, js, st.spent, st.chains, st.sc.rebuilt || st.run.Full)
}

func (s *sqlStore) writeState(ctx context.Context, tx *sql.Tx, dataset, scope string, lastID int64, run []byte, spent guarantee.Guarantee, chains map[string]*compose.Chain, replace bool) error {
	if replace {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM compose_chains WHERE dataset = ? AND scope = ?`), dataset, scope); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO compose_state (dataset, scope, last_id, state, spent, rule, theorem) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (dataset, scope) DO UPDATE SET last_id = excluded.last_id, state = excluded.state, spent = excluded.spent, rule = excluded.rule, theorem = excluded.theorem`),
		dataset, scope, lastID, string(run), spent.Epsilon.RatString(), spent.Rule, spent.Theorem); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	// one statement for up to 500 chains (9 parameters each)
	names := make([]string, 0, len(chains))
	for name := range chains {
		names = append(names, name)
	}
	slices.Sort(names)
	for len(names) > 0 {
		n := min(len(names), 500)
		args := make([]any, 0, 9*n)
		for _, name := range names[:n] {
			c := chains[name]
			js, err := json.Marshal(c)
			if err != nil {
				return err
			}
			applies, bound := 0, ""
			if c.Best.Applies {
				applies, bound = 1, c.Best.Epsilon.RatString()
			}
			args = append(args, dataset, scope, name, c.Order, applies, bound, c.Best.Rule, c.Best.Theorem, string(js))
		}
		values := "(?, ?, ?, ?, ?, ?, ?, ?, ?)" + strings.Repeat(", (?, ?, ?, ?, ?, ?, ?, ?, ?)", n-1)
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO compose_chains (dataset, scope, chain, ord, applies, bound, rule, theorem, state) VALUES `+values+`
			ON CONFLICT (dataset, scope, chain) DO UPDATE SET applies = excluded.applies, bound = excluded.bound, rule = excluded.rule, theorem = excluded.theorem, state = excluded.state`),
			args...); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		names = names[n:]
	}
	return nil
}

// buildStates is the migration that builds the running state of every
// dataset from its records (old ledgers keep working: a state that is
// missing or behind is also rebuilt on use).
func (s *sqlStore) buildStates(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM datasets ORDER BY name`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range names {
		r, err := s.dataset(ctx, tx, n)
		if err != nil {
			return err
		}
		sc, err := s.loadScope(ctx, tx, n, nil, r, true, func() ([]Entry, error) { return s.entries(ctx, tx, n) })
		if err != nil {
			return err
		}
		js, err := json.Marshal(sc.run)
		if err != nil {
			return err
		}
		if err := s.writeState(ctx, tx, n, sc.name, sc.lastID, js, sc.spent, sc.chains, true); err != nil {
			return err
		}
	}
	return nil
}
