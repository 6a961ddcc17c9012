package mechanism

import (
	"flag"
	"testing"
)

func TestFlag(t *testing.T) {
	var _ flag.Value = (*Flag)(nil)
	f := &Flag{Name: Exact}
	if err := f.Set("approx"); err != nil || f.Name != Approx || f.String() != "approx" {
		t.Fatalf("approx: %v %v", err, f.Name)
	}
	if err := f.Set("nosuch"); err == nil || f.Name != Approx {
		t.Fatalf("nosuch was taken: %v, now %v", err, f.Name)
	}
}
