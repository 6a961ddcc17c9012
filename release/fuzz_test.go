package release

import (
	"bytes"
	"io"
	"testing"
)

// FuzzReadData: no input makes ReadData panic or hang; accepted data has
// states inside the declared list and strictly increasing offsets.
func FuzzReadData(f *testing.F) {
	ex, _ := io.ReadAll(ExampleData())
	f.Add(ex[:2000], false)
	f.Add([]byte("series,time,state\na,0,x\na,3,y\nb,1,x\n"), true)
	f.Add([]byte("\ufeffseries;time;state\na;1;x\n"), false)
	f.Add([]byte("x\ny\nx\n"), true)
	f.Add([]byte("series,time,state\na,1e300,x\na,-1e300,y\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, declared bool) {
		opts := DefaultCSV
		if declared {
			opts.States = []string{"x", "y"}
		}
		d, err := ReadData(bytes.NewReader(data), "fuzz.csv", opts)
		if err != nil {
			return
		}
		if declared && len(d.States) != 2 {
			t.Fatalf("states %v, declared x, y", d.States)
		}
		for s, seq := range d.Seqs {
			for _, v := range seq {
				if v < 0 || v >= len(d.States) {
					t.Fatalf("state index %d of %d", v, len(d.States))
				}
			}
			if d.Offsets != nil && d.Offsets[s] != nil {
				off := d.Offsets[s]
				if len(off) != len(seq) || off[0] != 0 {
					t.Fatalf("offsets %v for %d readings", off, len(seq))
				}
				for j := 1; j < len(off); j++ {
					if off[j] <= off[j-1] {
						t.Fatalf("offsets %v do not increase", off)
					}
				}
				_ = d.Observation(s) // must not panic
			}
		}
	})
}
