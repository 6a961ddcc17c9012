package reading

import (
	"os"
	"path/filepath"
	"testing"
)

// The same file by any name is refused; another file, or one not made
// yet, is not.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sym, hard, other := filepath.Join(dir, "sym"), filepath.Join(dir, "hard"), filepath.Join(dir, "other")
	if err := os.Symlink(in, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{in, sym, hard, dir + "/./in.csv"} {
		if err := CheckOutput("out", out, [2]string{"class", ""}, [2]string{"data", in}); err == nil {
			t.Errorf("%s accepted", out)
		}
	}
	for _, out := range []string{other, filepath.Join(dir, "new")} {
		if err := CheckOutput("out", out, [2]string{"data", in}, [2]string{"ledger", "postgres://x"}); err != nil {
			t.Errorf("%s: %v", out, err)
		}
	}
}
