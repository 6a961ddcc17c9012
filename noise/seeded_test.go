package noise

import "testing"

// A seed gives one stream of words, another seed another.
func TestSeeded(t *testing.T) {
	a, b, c := Seeded(7), Seeded(7), Seeded(8)
	same := 0
	for i := 0; i < 100; i++ {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		if x != y {
			t.Fatalf("word %d: seed 7 gave %x and %x", i, x, y)
		}
		if x == z {
			same++
		}
	}
	if same > 1 {
		t.Fatalf("seeds 7 and 8 agree on %d of 100 words", same)
	}
}
