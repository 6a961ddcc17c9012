package serve

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// ListenAndServe returns nil once its context is done, and the listen
// error of an address it cannot bind.
func TestListenAndServe(t *testing.T) {
	ctx := context.Background()
	store, err := ledger.Open(ctx, filepath.Join(t.TempDir(), "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, err := New(Config{Store: store, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.ListenAndServe(ctx, "256.0.0.1:1"); err == nil {
		t.Fatal("listened on 256.0.0.1")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.ListenAndServe(done, "127.0.0.1:0"); err != nil {
		t.Fatalf("after the context: %v", err)
	}
}

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://puff:secret@db:5432/ledger": "postgres://puff:xxxxx@db:5432/ledger",
		"budget.db":                             "budget.db",
		"/var/lib/puff/ledger.db":               "/var/lib/puff/ledger.db",
	} {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}
