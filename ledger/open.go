package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// Open opens the ledger at dsn: a postgres:// or postgresql:// URL
// (PostgreSQL), or else the path of a SQLite file. create allows a missing
// SQLite file to be created (puff ledger init); otherwise a missing file is
// an error, so a typo never starts an empty ledger with a fresh budget.
// The schema is migrated to this version on open.
func Open(ctx context.Context, dsn string, create bool) (Store, error) {
	if dsn == "" {
		return nil, errors.New("ledger: no DSN (a SQLite file path or a postgres:// URL)")
	}
	var s *sqlStore
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("ledger: connecting to %s: %w", redact(dsn), err)
		}
		s = &sqlStore{db: db, d: postgresDialect}
	} else {
		if strings.ContainsAny(dsn, "?#") {
			return nil, fmt.Errorf("ledger: SQLite path %q: '?' and '#' are not allowed in the file name", dsn)
		}
		switch fi, err := os.Stat(dsn); {
		case errors.Is(err, fs.ErrNotExist) && !create:
			return nil, fmt.Errorf("ledger: %s does not exist (create the ledger with 'puff ledger init --ledger %s --dataset NAME --budget E')", dsn, dsn)
		case err == nil && !fi.Mode().IsRegular():
			return nil, fmt.Errorf("ledger: %s is not a regular file", dsn)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("ledger: %w", err)
		}
		// Pragmas in the DSN apply to every pooled connection. WAL with
		// synchronous=FULL makes a commit durable before Spend returns;
		// _txlock=immediate makes every transaction BEGIN IMMEDIATE, so a
		// read-then-write debit holds the write lock from its first read
		// (deferred transactions would fail with SQLITE_BUSY when two
		// writers upgrade at once).
		u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: dsn}).EscapedPath()}
		q := "_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_txlock=immediate"
		db, err := sql.Open("sqlite", u.String()+"?"+q)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("ledger: opening %s: %w", dsn, err)
		}
		// One connection per process: SQLite has one writer at a time, and
		// writers of one process queueing on a Go mutex are served in
		// order, where several connections would poll the file lock with
		// the busy handler's growing sleeps (measured: 6 releases/s with 20
		// concurrent clients). Other processes still wait on the lock.
		db.SetMaxOpenConns(1)
		s = &sqlStore{db: db, d: sqliteDialect}
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("%s: %w", redact(dsn), err)
	}
	return s, nil
}

// redact hides a password in a DSN for error messages.
func redact(dsn string) string {
	if !strings.Contains(dsn, "://") {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "the PostgreSQL DSN"
	}
	return u.Redacted()
}
