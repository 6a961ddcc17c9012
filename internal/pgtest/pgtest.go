// Package pgtest gives tests a fresh PostgreSQL database on the server
// named by PUFF_TEST_POSTGRES (a postgres:// DSN; .ci/run starts a
// throw-away server and sets it). Without it, PostgreSQL tests are skipped.
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// Env is the variable holding the server's DSN.
const Env = "PUFF_TEST_POSTGRES"

// Available reports whether a server is configured.
func Available() bool { return os.Getenv(Env) != "" }

// DSN creates an empty database for the test and returns its DSN; the
// database is dropped when the test ends. It skips the test when no
// server is configured.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		t.Skipf("%s is not set: no PostgreSQL server for this test (see README, Tests)", Env)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "puff_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		t.Fatalf("creating test database on %s: %v", Env, err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// Stores runs f against a fresh SQLite ledger file and, when a server is
// configured, a fresh PostgreSQL database: one suite for both stores.
func Stores(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, filepath.Join(t.TempDir(), "ledger.db")) })
	t.Run("postgres", func(t *testing.T) { f(t, DSN(t)) })
}
