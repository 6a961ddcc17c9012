package markov

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadClassFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(p, []byte(`{"states": ["a", "b"], "chains": [{"transition": [[0.9, 0.1], [0.2, 0.8]]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadClassFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.States) != 2 || c.States[1] != "b" || len(c.Chains) != 1 || c.Chains[0].P[0][1] != 0.1 {
		t.Fatalf("read %+v", c)
	}
	if _, err := ReadClassFile(p + ".missing"); err == nil || !strings.HasPrefix(err.Error(), "class: open ") {
		t.Fatalf("missing file: %v", err)
	}
}
