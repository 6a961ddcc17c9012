package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// dialect is what differs between the two databases; everything else —
// schema, queries, the budget check — is shared.
type dialect struct {
	name string
	// types substituted into the migrations
	exact, serial string
	// lock takes the dataset's row lock inside a transaction (PostgreSQL:
	// SELECT ... FOR UPDATE; SQLite: nothing, BEGIN IMMEDIATE already holds
	// the database's write lock).
	lock string
	// rebind turns ? placeholders into the database's.
	rebind func(string) string
}

var sqliteDialect = dialect{
	name:  "sqlite",
	exact: "TEXT", // SQLite's NUMERIC affinity would store 0.1 as a REAL
	// AUTOINCREMENT: ids are never reused, so an export's ids are stable
	serial: "INTEGER PRIMARY KEY AUTOINCREMENT",
	rebind: func(q string) string { return q },
}

var postgresDialect = dialect{
	name:   "postgres",
	exact:  "NUMERIC",
	serial: "BIGSERIAL PRIMARY KEY",
	// The row lock must come first, in its own statement: a read of the
	// releases in the same statement would use a snapshot taken before
	// the lock wait and could overspend.
	lock: "SELECT 1 FROM datasets WHERE name = ? FOR UPDATE",
	rebind: func(q string) string {
		var b strings.Builder
		n := 0
		for _, c := range q {
			if c == '?' {
				n++
				fmt.Fprintf(&b, "$%d", n)
				continue
			}
			b.WriteRune(c)
		}
		return b.String()
	},
}

// migrations are applied in order, once each, by both stores; {exact} and
// {serial} are the dialect's types.
var migrations = []string{
	`CREATE TABLE datasets (
		name       TEXT PRIMARY KEY,
		budget     {exact} NOT NULL,
		class      TEXT,
		class_hash TEXT,
		created_at TEXT NOT NULL
	)`,
	`CREATE TABLE releases (
		id         {serial},
		dataset    TEXT NOT NULL REFERENCES datasets(name),
		created_at TEXT NOT NULL,
		token      TEXT NOT NULL DEFAULT '',
		mechanism  TEXT NOT NULL,
		epsilon    {exact} NOT NULL,
		class_hash TEXT NOT NULL,
		query      TEXT NOT NULL,
		record     TEXT NOT NULL,
		result     TEXT NOT NULL,
		spent      {exact} NOT NULL,
		rule       TEXT NOT NULL
	)`,
	`CREATE INDEX releases_dataset ON releases(dataset, id)`,
	// how the service reads the dataset's data (path and CSV options)
	`ALTER TABLE datasets ADD COLUMN source TEXT`,
	`CREATE TABLE tokens (
		id         TEXT PRIMARY KEY,
		hash       TEXT NOT NULL UNIQUE,
		scopes     TEXT NOT NULL,
		budget     {exact},
		created_at TEXT NOT NULL,
		revoked_at TEXT
	)`,
	`ALTER TABLE releases ADD COLUMN idem_key TEXT`,
	`ALTER TABLE releases ADD COLUMN request_hash TEXT`,
	`CREATE UNIQUE INDEX releases_idem ON releases(token, idem_key)`,
	`ALTER TABLE releases ADD COLUMN theorem TEXT`,
	// the time of the chain's first step, as the user wrote it (§4.10)
	`ALTER TABLE datasets ADD COLUMN origin TEXT`,
	// streams (docs/math.md §4.9): the settings and running state of a
	// dataset's stream, the files appended (by content hash) and every
	// released window, once each
	`CREATE TABLE streams (
		dataset    TEXT PRIMARY KEY REFERENCES datasets(name),
		release_id BIGINT NOT NULL,
		settings   TEXT NOT NULL,
		state      TEXT NOT NULL,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL
	)`,
	`CREATE TABLE stream_files (
		dataset    TEXT NOT NULL REFERENCES streams(dataset),
		hash       TEXT NOT NULL,
		created_at TEXT NOT NULL,
		PRIMARY KEY (dataset, hash)
	)`,
	`CREATE TABLE stream_windows (
		dataset    TEXT NOT NULL REFERENCES streams(dataset),
		idx        BIGINT NOT NULL,
		result     TEXT NOT NULL,
		created_at TEXT NOT NULL,
		PRIMARY KEY (dataset, idx)
	)`,
	// the running composition state (running.go, docs/math.md §4.11):
	// per dataset or token ("scope") a header, and one row per chain
	`CREATE TABLE compose_state (
		dataset TEXT NOT NULL REFERENCES datasets(name),
		scope   TEXT NOT NULL,
		last_id BIGINT NOT NULL,
		state   TEXT NOT NULL,
		spent   TEXT NOT NULL,
		rule    TEXT NOT NULL,
		theorem TEXT NOT NULL,
		PRIMARY KEY (dataset, scope)
	)`,
	`CREATE TABLE compose_chains (
		dataset TEXT NOT NULL REFERENCES datasets(name),
		scope   TEXT NOT NULL,
		chain   TEXT NOT NULL,
		ord     BIGINT NOT NULL,
		applies INTEGER NOT NULL,
		bound   TEXT NOT NULL,
		rule    TEXT NOT NULL,
		theorem TEXT NOT NULL,
		state   TEXT NOT NULL,
		PRIMARY KEY (dataset, scope, chain)
	)`,
	`CREATE INDEX releases_token ON releases(dataset, token, id)`,
	buildStatesMigration,
	`CREATE TABLE calibration_cache (
		ckey  TEXT PRIMARY KEY,
		value TEXT NOT NULL
	)`,
}

// buildStatesMigration is not SQL: migrate runs buildStates, which folds
// every dataset's records into its running state.
const buildStatesMigration = "-- go: buildStates"

type sqlStore struct {
	db *sql.DB
	d  dialect
}

func (s *sqlStore) q(query string) string { return s.d.rebind(query) }

// GetCached returns the value PutCached stored under key (ok false: none):
// the calibration cache, computed scales that are slow to recompute (the
// pairwise leakage bound on dense chains, docs/math.md §8.11), keyed by
// everything they depend on. It is as trusted as the rest of the ledger.
func (s *sqlStore) GetCached(ctx context.Context, key string) ([]byte, bool, error) {
	var v string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT value FROM calibration_cache WHERE ckey = ?`), key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("ledger: calibration cache: %w", err)
	}
	return []byte(v), true, nil
}

// PutCached stores value under key, replacing what was there.
func (s *sqlStore) PutCached(ctx context.Context, key string, value []byte) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO calibration_cache (ckey, value) VALUES (?, ?) ON CONFLICT (ckey) DO UPDATE SET value = excluded.value`), key, string(value))
	if err != nil {
		return fmt.Errorf("ledger: calibration cache: %w", err)
	}
	return nil
}

// migrate applies the migrations not yet recorded in schema_migrations,
// each in its own transaction (concurrent openers serialise on it).
func (s *sqlStore) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`); err != nil {
		return fmt.Errorf("ledger: creating schema_migrations: %w", err)
	}
	for i, m := range migrations {
		version := i + 1
		err := s.tx(ctx, func(tx *sql.Tx) error {
			if s.d.name == "postgres" {
				// one migrator at a time across processes
				if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(727272)`); err != nil {
					return err
				}
			}
			var n int
			if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if m == buildStatesMigration {
				if err := s.buildStates(ctx, tx); err != nil {
					return err
				}
			} else {
				stmt := strings.NewReplacer("{exact}", s.d.exact, "{serial}", s.d.serial).Replace(m)
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version) VALUES (?)`), version)
			return err
		})
		if err != nil {
			return fmt.Errorf("ledger: migration %d: %w", version, err)
		}
	}
	var newest int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if newest > len(migrations) {
		return fmt.Errorf("ledger: the database has schema version %d, newer than this puff (%d): upgrade puff", newest, len(migrations))
	}
	return nil
}

// tx runs f in a transaction (SQLite: BEGIN IMMEDIATE, from the DSN's
// _txlock), committing when f returns nil.
func (s *sqlStore) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (s *sqlStore) Close() error { return s.db.Close() }

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func (s *sqlStore) Init(ctx context.Context, d Registration) error {
	name, budget, class := d.Name, d.Budget, d.Class
	if err := validName(name); err != nil {
		return err
	}
	if budget == nil || budget.Sign() <= 0 {
		return errors.New("ledger: the budget must be > 0")
	}
	if n, exact := budget.FloatPrec(); !exact || n > 30 {
		return fmt.Errorf("ledger: budget %s: want a decimal with at most 30 digits after the point", budget.RatString())
	}
	var classJSON, hash sql.NullString
	if class != nil {
		b, err := storableClass(name, class)
		if err != nil {
			return err
		}
		classJSON = sql.NullString{String: string(b), Valid: true}
		hash = sql.NullString{String: class.Hash(), Valid: true}
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if s.d.name == "postgres" {
			// one registration at a time: two names equal but for case
			// never both pass the check below (SQLite: BEGIN IMMEDIATE)
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(727273)`); err != nil {
				return fmt.Errorf("ledger: %w", err)
			}
		}
		var same []string
		rows, err := tx.QueryContext(ctx, s.q(`SELECT name FROM datasets WHERE lower(name) = lower(?)`), name)
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return fmt.Errorf("ledger: %w", err)
			}
			same = append(same, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		if slices.Contains(same, name) {
			return fmt.Errorf("ledger: dataset %q %w (its budget cannot be changed: a budget that could be raised protects nothing)", name, ErrExists)
		}
		if len(same) > 0 {
			return fmt.Errorf("ledger: dataset %q: a dataset %q %w, and names that differ only in case are one name", name, same[0], ErrExists)
		}
		var source, origin sql.NullString
		if len(d.Source) > 0 {
			source = sql.NullString{String: string(d.Source), Valid: true}
		}
		if d.Origin != "" {
			origin = sql.NullString{String: d.Origin, Valid: true}
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO datasets (name, budget, class, class_hash, created_at, source, origin) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			name, Decimal(budget), classJSON, hash, now(), source, origin)
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		// all or nothing: the row commits only if it reads back, so no
		// registration can leave a dataset that cannot be listed
		_, err = s.dataset(ctx, tx, name)
		return err
	})
}

// maxClassBytes is the largest class stored: what every reader of a class
// accepts (a variable so tests can lower it).
var maxClassBytes = strictjson.MaxInput

// storableClass is class's JSON as the ledger stores it, checked before
// it is stored: within the size every reader accepts
// (maxClassBytes) and read back to the same class (its hash), so a
// stored class can always be read.
func storableClass(name string, class *markov.Class) ([]byte, error) {
	b, err := class.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("ledger: dataset %q: class: %w", name, err)
	}
	if len(b) > maxClassBytes {
		return nil, fmt.Errorf("ledger: dataset %q: the class of %d states is %d bytes of JSON, over the ledger's limit of %d bytes; nothing was stored", name, len(class.States), len(b), maxClassBytes)
	}
	back, err := markov.ParseClass(bytes.NewReader(b), "of "+name)
	if err != nil {
		return nil, fmt.Errorf("ledger: dataset %q: the class does not read back (%v); nothing was stored", name, err)
	}
	if back.Hash() != class.Hash() {
		return nil, fmt.Errorf("ledger: dataset %q: the class does not read back to itself; nothing was stored", name)
	}
	return b, nil
}

// row is a dataset row.
type row struct {
	budget *big.Rat
	class  *markov.Class
	hash   string
	source json.RawMessage
	origin string
}

func (s *sqlStore) dataset(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, name string) (row, error) {
	var budget string
	var classJSON, hash, source, origin sql.NullString
	err := q.QueryRowContext(ctx, s.q(`SELECT budget, class, class_hash, source, origin FROM datasets WHERE name = ?`), name).Scan(&budget, &classJSON, &hash, &source, &origin)
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, fmt.Errorf("ledger: %w %q (create it with 'puff ledger init')", ErrUnknown, name)
	}
	if err != nil {
		return row{}, fmt.Errorf("ledger: %w", err)
	}
	r := row{origin: origin.String}
	var ok bool
	if source.Valid {
		r.source = json.RawMessage(source.String)
	}
	if r.budget, ok = new(big.Rat).SetString(budget); !ok {
		return row{}, fmt.Errorf("ledger: dataset %q %w: stored budget %q is not a number", name, ErrUnreadable, budget)
	}
	if classJSON.Valid {
		if r.class, err = markov.ParseClass(strings.NewReader(classJSON.String), "ledger class of "+name); err != nil {
			return row{}, fmt.Errorf("ledger: dataset %q %w: its stored class: %v", name, ErrUnreadable, err)
		}
		r.hash = hash.String
	}
	return r, nil
}

type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

func (s *sqlStore) entries(ctx context.Context, q querier, name string) ([]Entry, error) {
	rows, err := q.QueryContext(ctx, s.q(`SELECT id, created_at, token, record, result, spent, rule FROM releases WHERE dataset = ? ORDER BY id`), name)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var created, rec, res, spent string
		if err := rows.Scan(&e.ID, &created, &e.Token, &rec, &res, &spent, &e.Rule); err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		e.Dataset = name
		if e.Time, err = time.Parse(time.RFC3339Nano, created); err != nil {
			return nil, fmt.Errorf("ledger: release %d %w: time %q: %w", e.ID, ErrUnreadable, created, err)
		}
		if err := json.Unmarshal([]byte(rec), &e.Record); err != nil {
			return nil, fmt.Errorf("ledger: release %d %w: record: %w", e.ID, ErrUnreadable, err)
		}
		e.Result = json.RawMessage(res)
		sp, ok := new(big.Rat).SetString(spent)
		if !ok {
			return nil, fmt.Errorf("ledger: release %d %w: spent %q is not a number", e.ID, ErrUnreadable, spent)
		}
		e.Spent = number(guarantee.Up(sp))
		out = append(out, e)
	}
	return out, rows.Err()
}

// state composes a dataset's recorded releases (plus extra, if any).
func state(ctx context.Context, name string, r row, entries []Entry, extra *record.Release) (State, error) {
	st := State{Dataset: name, Budget: r.budget, Spent: guarantee.None(), Releases: len(entries), ClassHash: r.hash}
	var recs []*record.Release
	for i := range entries {
		recs = append(recs, &entries[i].Record)
	}
	if extra != nil {
		recs = append(recs, extra)
	}
	if len(recs) == 0 {
		return st, nil
	}
	v, err := compose.RecordsContext(ctx, r.class, recs)
	if cerr := ctx.Err(); cerr != nil {
		return State{}, cerr
	}
	if err != nil {
		return State{}, fmt.Errorf("ledger: dataset %q: %w", name, err)
	}
	st.Spent = v.Guarantee
	return st, nil
}

func (s *sqlStore) Dataset(ctx context.Context, name string) (State, error) {
	var st State
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		r, err := s.dataset(ctx, tx, name)
		if err != nil {
			return err
		}
		// the running state when it is current (a read-only transaction
		// does not rebuild it), else the records composed
		sc, err := s.loadScope(ctx, tx, name, nil, r, false, nil)
		if err == nil && sc != nil && !sc.rebuilt && !sc.run.Full {
			st = sc.state(name, r, r.budget)
			return nil
		}
		es, err := s.entries(ctx, tx, name)
		if err != nil {
			return err
		}
		if st, err = state(ctx, name, r, es, nil); err != nil {
			// the recorded releases no longer compose
			return fmt.Errorf("%w (%w)", err, ErrUnreadable)
		}
		return nil
	})
	return st, err
}

// readTx reads in one transaction, so a dataset and its releases are one
// snapshot.
func (s *sqlStore) readTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: s.d.name == "postgres"})
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer tx.Rollback()
	return f(tx)
}

func (s *sqlStore) Datasets(ctx context.Context) ([]State, error) {
	var names []string
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM datasets ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ledger: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	var out []State
	for _, n := range names {
		st, err := s.Dataset(ctx, n)
		if errors.Is(err, ErrUnreadable) {
			// one unreadable dataset never hides the others
			st = State{Dataset: n, Err: err}
		} else if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func (s *sqlStore) Entries(ctx context.Context, name string) ([]Entry, error) {
	var es []Entry
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.dataset(ctx, tx, name); err != nil {
			return err
		}
		var err error
		es, err = s.entries(ctx, tx, name)
		return err
	})
	return es, err
}

func (s *sqlStore) Spend(ctx context.Context, sp Spend, draw func() (json.RawMessage, error)) (Receipt, error) {
	eps, err := checkSpend(sp)
	if err != nil {
		return Receipt{}, err
	}
	var out Receipt
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.lockDataset(ctx, tx, sp.Dataset); err != nil {
			return err
		}
		r, err := s.dataset(ctx, tx, sp.Dataset)
		if err != nil {
			return err
		}
		if sp.IdempotencyKey != "" {
			// inside the dataset's lock: a concurrent repeat waits and
			// then finds this one
			if rc, ok, err := s.replay(ctx, tx, sp, r); err != nil || ok {
				out = rc
				return err
			}
		}
		if err := s.settleClass(ctx, tx, sp, &r); err != nil {
			return err
		}
		would, tokWould, err := s.within(ctx, tx, sp, r, eps)
		if err != nil {
			return err
		}
		result, err := draw()
		if err != nil {
			return err
		}
		if !json.Valid(result) {
			return errors.New("ledger: the release's result is not JSON")
		}
		id, err := s.insertRelease(ctx, tx, sp, eps, result, would.spent)
		if err != nil {
			return err
		}
		if sp.Stream != nil {
			if err := s.createStream(ctx, tx, sp.Dataset, id, sp.Stream); err != nil {
				return err
			}
		}
		if err := s.write(ctx, tx, sp.Dataset, would, id); err != nil {
			return err
		}
		if tokWould != nil {
			if err := s.write(ctx, tx, sp.Dataset, tokWould, id); err != nil {
				return err
			}
		}
		out = Receipt{State: State{Dataset: sp.Dataset, Budget: r.budget, Spent: would.spent, Releases: would.run.Records, ClassHash: r.hash}, ID: id, Result: result}
		return nil
	})
	if err != nil {
		return Receipt{}, err
	}
	return out, nil
}

// checkSpend is Spend's check of its argument, before any transaction; it
// returns the exact ε the record is charged (record.Release.Charge).
func checkSpend(sp Spend) (*big.Rat, error) {
	if sp.Record == nil || len(sp.Record.Segments) == 0 && !sp.Record.Stream || sp.Class == nil {
		return nil, errors.New("ledger: nothing to record")
	}
	if sp.Record.Stream != (sp.Stream != nil) {
		return nil, errors.New("ledger: a stream's charge comes with the stream's settings, and only it")
	}
	if sp.Record.Class != sp.Class.Hash() {
		return nil, errors.New("ledger: the record was calibrated for another class than the one given")
	}
	eps := sp.Record.Charge()
	if eps == nil || eps.Sign() <= 0 {
		return nil, fmt.Errorf("ledger: ε = %v: want a finite number > 0", sp.Record.Epsilon)
	}
	return eps, nil
}

// lockDataset takes the dataset's row lock for the transaction (PostgreSQL;
// SQLite serialises writers by itself).
func (s *sqlStore) lockDataset(ctx context.Context, tx *sql.Tx, dataset string) error {
	if s.d.lock == "" {
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, s.q(s.d.lock), dataset).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("ledger: %w %q (create it with 'puff ledger init')", ErrUnknown, dataset)
	}
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// replay is the recorded release of a repeated idempotency key (ok), with
// the dataset's state as it was right after it: nothing is drawn again.
// A key used for a different request is ErrKeyReused.
func (s *sqlStore) replay(ctx context.Context, tx *sql.Tx, sp Spend, r row) (Receipt, bool, error) {
	var id int64
	var dataset, hash, result, spent, rule, theorem string
	err := tx.QueryRowContext(ctx, s.q(`SELECT id, dataset, COALESCE(request_hash, ''), result, spent, rule, COALESCE(theorem, '') FROM releases WHERE token = ? AND idem_key = ?`),
		sp.Token, sp.IdempotencyKey).Scan(&id, &dataset, &hash, &result, &spent, &rule, &theorem)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Receipt{}, false, nil
	case err != nil:
		return Receipt{}, false, fmt.Errorf("ledger: %w", err)
	case dataset != sp.Dataset || hash != sp.RequestHash:
		return Receipt{}, false, ErrKeyReused
	}
	st := State{Dataset: dataset, Budget: r.budget, Spent: guarantee.Guarantee{Rule: rule, Theorem: theorem}, ClassHash: r.hash}
	var ok bool
	if st.Spent.Epsilon, ok = new(big.Rat).SetString(spent); !ok {
		return Receipt{}, false, fmt.Errorf("ledger: release %d: spent %q is not a number", id, spent)
	}
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM releases WHERE dataset = ? AND id <= ?`), dataset, id).Scan(&st.Releases); err != nil {
		return Receipt{}, false, fmt.Errorf("ledger: %w", err)
	}
	return Receipt{State: st, ID: id, Result: json.RawMessage(result), Replayed: true}, true, nil
}

// settleClass makes the spend's class the dataset's: the first release
// sets it; a release under another Θ is refused (a budget spent under one
// Θ says nothing under another).
func (s *sqlStore) settleClass(ctx context.Context, tx *sql.Tx, sp Spend, r *row) error {
	hash := sp.Class.Hash()
	if r.class != nil {
		if r.hash != hash {
			return fmt.Errorf("ledger: dataset %q is recorded with class Θ %s, this release is calibrated for %s: a budget spent under one Θ says nothing under another (use the dataset's class, or another dataset)", sp.Dataset, r.hash, hash)
		}
		return nil
	}
	b, err := storableClass(sp.Dataset, sp.Class)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE datasets SET class = ?, class_hash = ? WHERE name = ?`), string(b), hash, sp.Dataset); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	r.class, r.hash = sp.Class, hash
	return nil
}

// within composes the record with the dataset's releases and, for a token
// with a budget of its own, with the token's: the guarantees they would
// have (would, tokWould: nil without a token budget), or a *Refused when
// either exceeds its budget. It reads the running composition states
// (running.go, docs/math.md §4.11); the records are read only to rebuild
// a state or where the state hands the composition back to them.
func (s *sqlStore) within(ctx context.Context, tx *sql.Tx, sp Spend, r row, eps *big.Rat) (would, tokWould *step, err error) {
	var es []Entry
	read := false
	entries := func() ([]Entry, error) {
		if !read {
			var err error
			if es, err = s.entries(ctx, tx, sp.Dataset); err != nil {
				return nil, err
			}
			read = true
		}
		return es, nil
	}
	before := func(sc *scope, budget *big.Rat) (State, error) {
		if !sc.run.Full {
			return sc.state(sp.Dataset, r, budget), nil
		}
		all, err := entries()
		if err != nil {
			return State{}, err
		}
		if sc.token != nil {
			all = mine(all, *sc.token)
		}
		return state(ctx, sp.Dataset, row{budget: budget, class: r.class, hash: r.hash}, all, nil)
	}
	dsc, err := s.loadScope(ctx, tx, sp.Dataset, nil, r, true, entries)
	if err != nil {
		return nil, nil, err
	}
	if would, err = s.advance(ctx, tx, sp.Dataset, dsc, r, sp.Record, entries); err != nil {
		return nil, nil, err
	}
	if would.spent.Epsilon.Cmp(r.budget) > 0 {
		st, err := before(dsc, r.budget)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, &Refused{State: st, Requested: eps, Would: would.spent}
	}
	if sp.TokenBudget == nil {
		return would, nil, nil
	}
	// kept only for spends with a token budget: a spend without one leaves
	// it behind, and it is rebuilt when next used
	tok := sp.Token
	tsc, err := s.loadScope(ctx, tx, sp.Dataset, &tok, r, true, entries)
	if err != nil {
		return nil, nil, err
	}
	if tokWould, err = s.advance(ctx, tx, sp.Dataset, tsc, r, sp.Record, entries); err != nil {
		return nil, nil, err
	}
	if tokWould.spent.Epsilon.Cmp(sp.TokenBudget) > 0 {
		st, err := before(tsc, sp.TokenBudget)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, &Refused{State: st, Requested: eps, Would: withRule(tokWould.spent, tokWould.spent.Rule+" (this token's own budget)")}
	}
	return would, tokWould, nil
}

// insertRelease records the release with its noisy result and the
// dataset's guarantee after it.
func (s *sqlStore) insertRelease(ctx context.Context, tx *sql.Tx, sp Spend, eps *big.Rat, result json.RawMessage, after guarantee.Guarantee) (int64, error) {
	rec, err := json.Marshal(sp.Record)
	if err != nil {
		return 0, err
	}
	var key, reqHash sql.NullString
	if sp.IdempotencyKey != "" {
		key = sql.NullString{String: sp.IdempotencyKey, Valid: true}
		reqHash = sql.NullString{String: sp.RequestHash, Valid: true}
	}
	var id int64
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO releases (dataset, created_at, token, mechanism, epsilon, class_hash, query, record, result, spent, rule, idem_key, request_hash, theorem) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		sp.Dataset, now(), sp.Token, string(sp.Record.Mechanism), Decimal(eps), sp.Class.Hash(), sp.Record.QueryName(), string(rec), string(result), spentText(after.Epsilon), after.Rule, key, reqHash, after.Theorem).Scan(&id)
	if err != nil {
		if sp.IdempotencyKey != "" && strings.Contains(strings.ToLower(err.Error()), "unique") {
			return 0, ErrKeyReused // the key was used on another dataset
		}
		return 0, fmt.Errorf("ledger: %w", err)
	}
	return id, nil
}

// spentText stores a composed ε exactly when it is a short decimal, else
// rounded up.
func spentText(r *big.Rat) string { return Decimal(r) }

func (s *sqlStore) Definition(ctx context.Context, name string) (Registration, error) {
	r, err := s.dataset(ctx, s.db, name)
	if err != nil {
		return Registration{}, err
	}
	return Registration{Name: name, Budget: r.budget, Class: r.class, Source: r.source, Origin: r.origin}, nil
}
