package progress

import (
	"os"
	"strings"
	"sync"
	"testing"
)

func TestBar(t *testing.T) {
	var b strings.Builder
	bar := New(&b, "work", 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(bar.Step)
	}
	wg.Wait()
	out := b.String()
	if !strings.HasSuffix(out, "[####################] 100%\n") || strings.Count(out, "\r") != 4 {
		t.Fatalf("%q", out)
	}
	var none *Bar
	none.Step() // a nil bar is a no-op
	if New(nil, "x", 1) != nil {
		t.Fatal("a bar without a writer")
	}
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if Terminal(f) != nil {
		t.Fatal("a regular file taken for a terminal")
	}
}
