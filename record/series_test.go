package record

import "testing"

func TestSeriesCount(t *testing.T) {
	r := Release{Segments: []Segment{{Series: "a"}, {Series: "b"}, {Series: "a"}}}
	if n := r.SeriesCount(); n != 2 {
		t.Fatalf("%d series, want 2", n)
	}
	if n := (Release{Stream: true}).SeriesCount(); n != 0 {
		t.Fatalf("a stream's charge: %d series", n)
	}
}
