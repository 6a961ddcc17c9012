package tabular

import (
	"bytes"
	"testing"
)

func TestPrintf(t *testing.T) {
	var b bytes.Buffer
	if err := Printf(&b, "a\t%s\nlonger\t%d\n", "x", 2); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "a       x\nlonger  2\n"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}
