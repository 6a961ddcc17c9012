package bdp

import (
	"slices"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/reading"
)

// listSource returns its values in turn.
type listSource struct{ v []uint64 }

func (l *listSource) Uint64() uint64 {
	x := l.v[0]
	l.v = l.v[1:]
	return x
}

// Each sequence draws for its known readings first, then a fair coin for
// each missing one (-1 here); every reading of the output is 0 or 1.
func TestSanitizeSeqs(t *testing.T) {
	flip, keep := uint64(0), ^uint64(0) // u = 0 < ⌈ρ·2⁵³⌉ flips; the top value never does
	lowHalf, highHalf := uint64(1)<<63-1, uint64(1)<<63
	seqs := [][]int{{1, -1, 0}, {-1, 1}}
	src := &listSource{[]uint64{flip, keep, lowHalf, keep, highHalf}}
	got, err := SanitizeSeqs(seqs, -1, 0.25, src)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{0, 1, 0}, {0, 1}}
	if len(got) != 2 || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Errorf("got %v, want %v", got, want)
	}
	if len(src.v) != 0 {
		t.Errorf("%d draws left over", len(src.v))
	}
	if _, err := SanitizeSeqs([][]int{{2}}, -1, 0.25, nil); err == nil {
		t.Error("a reading 2 was sanitized")
	}
}

// The coin for a missing value is fair to the last bit: a draw flips the
// fixed 0 exactly when it falls in the lower half of the range (the top
// bit 0), and a known reading is flipped with its own probability (the
// missing marker here is reading.Unknown, as puff local sanitize passes).
func TestSanitizeSeqsCoinIsFair(t *testing.T) {
	seq := []int{1, reading.Unknown, 0, reading.Unknown}
	lowHalf, highHalf := uint64(1)<<63-1, uint64(1)<<63
	// draws go to the known readings first, then to the missing ones
	for _, c := range []struct {
		draws []uint64
		want  []int
	}{
		{[]uint64{highHalf, highHalf, lowHalf, highHalf}, []int{1, 1, 0, 0}},
		{[]uint64{0, ^uint64(0), highHalf, lowHalf}, []int{0, 0, 0, 1}},
	} {
		got, err := SanitizeSeqs([][]int{seq}, reading.Unknown, 0.2, &listSource{slices.Clone(c.draws)})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[0], c.want) {
			t.Errorf("draws %x: %v, want %v", c.draws, got[0], c.want)
		}
	}
}
