package query

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// Every query's answer, and the largest L1 change one reading makes, by
// enumerating every group of up to 4 readings over 3 levels and unknown
// values, computed here from the readings themselves (not from Answer):
// Answer agrees, Sensitivity is never below the largest change, and it is
// attained (no slack that would waste noise) for counts and relative.
func TestSensitivityByEnumeration(t *testing.T) {
	values := []float64{0, 5, 1} // unequal, non-monotone level values
	const k, unknown = 3, -1
	direct := func(name string, rs []int) []float64 {
		n := float64(len(rs))
		switch name {
		case "counts", "relative":
			out := make([]float64, k)
			for _, r := range rs {
				if r != unknown {
					out[r]++
				}
			}
			if name == "relative" {
				for i := range out {
					out[i] /= n
				}
			}
			return out
		}
		s := 0.0
		for _, r := range rs {
			if r == unknown {
				s += 2.5 // the midpoint of 0 and 5
			} else {
				s += values[r]
			}
		}
		return []float64{s / n}
	}
	group := func(rs []int) Group {
		g := Group{Counts: make([]float64, k), N: len(rs), Values: values}
		for _, r := range rs {
			if r != unknown {
				g.Counts[r]++
			}
		}
		return g
	}
	for _, name := range Names {
		q, err := Parse(name)
		if err != nil || q.Name() != name {
			t.Fatal(name, q, err)
		}
		for n := 1; n <= 4; n++ {
			worst, bound := 0.0, 0.0
			rs := make([]int, n)
			var rec func(i int)
			rec = func(i int) {
				if i < n {
					for v := unknown; v < k; v++ {
						rs[i] = v
						rec(i + 1)
					}
					return
				}
				g := group(rs)
				a, err := q.Answer(g)
				if err != nil {
					t.Fatal(err)
				}
				want := direct(name, rs)
				for j := range want {
					if math.Abs(a[j]-want[j]) > 1e-12 {
						t.Fatalf("%s %v: answer %v, want %v", name, rs, a, want)
					}
				}
				if bound, err = q.Sensitivity(g); err != nil {
					t.Fatal(err)
				}
				for p := range rs {
					old := rs[p]
					for v := unknown; v < k; v++ {
						rs[p] = v
						b := direct(name, rs)
						d := 0.0
						for j := range b {
							d += math.Abs(b[j] - want[j])
						}
						worst = max(worst, d)
					}
					rs[p] = old
				}
			}
			rec(0)
			if worst > bound*(1+1e-12) { // the test's own sums round too
				t.Errorf("%s, %d readings: one reading moves the answer by %g > sensitivity %g", name, n, worst, bound)
			}
			if name != "mean" && worst < bound*(1-1e-12) {
				t.Errorf("%s, %d readings: sensitivity %g is not attained (largest change %g)", name, n, bound, worst)
			}
		}
	}
	if _, err := Parse("median"); err == nil {
		t.Error("median was parsed")
	}
	if q, err := Parse(""); err != nil || q != Counts {
		t.Error(`"" is not counts`, q, err)
	}
	// empty groups: counts are noise only, the others undefined
	if _, err := Relative.Sensitivity(Group{Counts: []float64{0, 0}}); !IsEmpty(err) {
		t.Error("relative of nothing:", err)
	}
	if _, err := Mean.Answer(Group{Counts: []float64{0, 0}, Values: []float64{0, 1}}); !IsEmpty(err) {
		t.Error("mean of nothing:", err)
	}
	if _, err := Mean.Sensitivity(Group{Counts: []float64{1, 0}, N: 1}); err == nil {
		t.Error("a mean of states")
	}
}

// Sensitivities are rounded up: 2/3 and (0.3 − 0.1)/3 are not exact in
// binary, and the rounded quotient times N must not fall below the
// numerator.
func TestSensitivityRoundsUp(t *testing.T) {
	l, _ := Relative.Sensitivity(Group{Counts: []float64{1, 2}, N: 3})
	if l*3 < 2 {
		t.Errorf("2/3 rounded to %v, below", l)
	}
	m, _ := Mean.Sensitivity(Group{Counts: []float64{1, 2}, N: 3, Values: []float64{0.1, 0.3}})
	if m*3 < 0.3-0.1 || m < (0.3-0.1)/3 {
		t.Errorf("(0.3−0.1)/3 rounded to %v, below", m)
	}
}

// Profile cells, against the calendar of package time: every hour of
// 1969–1971 (negative hours too) falls in the cell named by its UTC
// weekday and hour.
func TestProfileCells(t *testing.T) {
	for _, kind := range Profiles {
		p, err := ParseProfile(kind)
		if err != nil || p.Name() != kind {
			t.Fatal(kind, err)
		}
		want := map[string]int{"hour-of-day": 24, "day-of-week": 7, "week-hour": 168}[kind]
		if len(p.Cells()) != want {
			t.Fatalf("%s: %d cells", kind, len(p.Cells()))
		}
		for h := int64(-366 * 24); h < 2*366*24; h += 7 {
			tm := time.Unix(h*3600, 0).UTC()
			day := tm.Weekday().String()[:3]
			name := map[string]string{"hour-of-day": fmt.Sprintf("%02d", tm.Hour()), "day-of-week": day, "week-hour": fmt.Sprintf("%s %02d", day, tm.Hour())}[kind]
			if got := p.Cells()[p.Cell(h)]; got != name {
				t.Fatalf("%s: hour %d (%v) in cell %q, want %q", kind, h, tm, got, name)
			}
		}
	}
	if _, err := ParseProfile("month"); err == nil {
		t.Error("month was parsed")
	}
}

// The transitions query's sensitivity 4 against enumeration: every
// sequence of 5 readings over 3 states and "unknown", every change of one
// reading; the transition counts (pairs of known readings one step
// apart) move by at most 4 in L1, and 4 is attained.
func TestTransitionsSensitivityByEnumeration(t *testing.T) {
	const k, n, unknown = 3, 5, 3
	count := func(rs []int) []float64 {
		out := make([]float64, k*k)
		for i := 1; i < len(rs); i++ {
			if rs[i-1] != unknown && rs[i] != unknown {
				out[rs[i-1]*k+rs[i]]++
			}
		}
		return out
	}
	L, err := Transitions.Sensitivity(Group{})
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	rs := make([]int, n)
	var walk func(i int)
	walk = func(i int) {
		if i == n {
			a := count(rs)
			for j := range n {
				old := rs[j]
				for v := range k + 1 {
					rs[j] = v
					b := count(rs)
					d := 0.0
					for c := range a {
						d += math.Abs(a[c] - b[c])
					}
					worst = math.Max(worst, d)
				}
				rs[j] = old
			}
			return
		}
		for v := range k + 1 {
			rs[i] = v
			walk(i + 1)
		}
	}
	walk(0)
	if worst > L || worst != 4 {
		t.Fatalf("largest L1 change %v, sensitivity %v", worst, L)
	}
	if got, _ := Transitions.Answer(Group{Counts: []float64{1, 2}}); len(got) != 2 || got[1] != 2 {
		t.Fatalf("answer %v", got)
	}
}
