package epsilon

import (
	"flag"
	"math"
	"testing"
)

func TestFlag(t *testing.T) {
	var _ flag.Value = (*Flag)(nil)
	f := NewFlag("")
	if !math.IsNaN(f.Float()) || f.String() != "" {
		t.Fatalf("unset: %v %q", f.Float(), f.String())
	}
	if err := f.Set("ln(2)"); err != nil || f.String() != "ln(2)" || math.Abs(f.Float()-math.Ln2) > 1e-15 {
		t.Fatalf("ln(2): %v %q %v", err, f.String(), f.Float())
	}
	if err := f.Set("0"); err == nil || f.String() != "ln(2)" {
		t.Fatalf("0 was taken: %v, now %q", err, f.String())
	}
	if g := NewFlag("1/2"); g.Float() != 0.5 {
		t.Fatalf("default 1/2: %v", g.Float())
	}
}
