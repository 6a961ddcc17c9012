package reading

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Levels discretise numeric readings into public, data-independent bins:
// level i holds values in [Edges[i], Edges[i+1]) (the last level includes
// its upper edge). Values below Edges[0] or above the last edge go to the
// end levels and are counted (Data.Clipped). Bins computed from the data
// itself (quantiles, observed min and max) are not offered: their edges
// would reveal the data.
type Levels struct {
	Edges  []float64 // increasing, len = number of levels + 1
	Values []float64 // each level's value for the mean query (default: midpoints)
}

// equalWidth is N equal-width levels over [lo, hi] (--levels LO:HI:N).
func equalWidth(lo, hi float64, n int) (*Levels, error) {
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("levels: need finite LO < HI, got %v:%v", lo, hi)
	}
	if n < 1 || n > maxLevels {
		return nil, fmt.Errorf("levels: %d levels, want 1..%d", n, maxLevels)
	}
	e := make([]float64, n+1)
	for i := range e {
		e[i] = lo + (hi-lo)*float64(i)/float64(n)
	}
	e[n] = hi
	return withMidpoints(e), nil
}

// maxLevels is the most levels a discretisation may have.
const maxLevels = 10000

// ParseLevels reads "LO:HI:N".
func ParseLevels(s string) (*Levels, error) {
	p := strings.Split(s, ":")
	if len(p) != 3 {
		return nil, fmt.Errorf("levels %q: want LO:HI:N", s)
	}
	lo, err1 := strconv.ParseFloat(strings.TrimSpace(p[0]), 64)
	hi, err2 := strconv.ParseFloat(strings.TrimSpace(p[1]), 64)
	n, err3 := strconv.Atoi(strings.TrimSpace(p[2]))
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, fmt.Errorf("levels %q: want LO:HI:N with numbers LO < HI and a whole N", s)
	}
	return equalWidth(lo, hi, n)
}

// parseEdges reads "e1,e2,...,em" (m ≥ 2, increasing): m−1 levels.
func parseEdges(s string) (*Levels, error) {
	var e []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("edges %q: %q is not a finite number", s, f)
		}
		if len(e) > 0 && !(v > e[len(e)-1]) {
			return nil, fmt.Errorf("edges %q: must increase", s)
		}
		e = append(e, v)
	}
	if len(e) < 2 || len(e)-1 > maxLevels {
		return nil, fmt.Errorf("edges %q: want 2..%d edges", s, maxLevels+1)
	}
	return withMidpoints(e), nil
}

func withMidpoints(e []float64) *Levels {
	l := &Levels{Edges: e}
	for i := 0; i+1 < len(e); i++ {
		l.Values = append(l.Values, (e[i]+e[i+1])/2)
	}
	return l
}

// SetValues replaces the level values used by the mean query.
func (l *Levels) SetValues(s string) error {
	var v []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("level values %q: %q is not a finite number", s, f)
		}
		v = append(v, x)
	}
	if len(v) != l.N() {
		return fmt.Errorf("level values: %d given for %d levels", len(v), l.N())
	}
	l.Values = v
	return nil
}

// N is the number of levels.
func (l *Levels) N() int { return len(l.Edges) - 1 }

// Names are the levels' state names "0".."N−1" (a class for numeric data
// uses them as its states).
func (l *Levels) Names() []string {
	out := make([]string, l.N())
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

// Level returns the level of v and whether v was outside the bounds.
func (l *Levels) Level(v float64) (int, bool) {
	n := l.N()
	switch {
	case v < l.Edges[0]:
		return 0, true
	case v > l.Edges[n]:
		return n - 1, true
	case v == l.Edges[n]:
		return n - 1, false
	}
	// largest i with Edges[i] ≤ v
	lo, hi := 0, n
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if l.Edges[m] <= v {
			lo = m
		} else {
			hi = m
		}
	}
	return lo, false
}

// isMissing reports whether a value field marks a missing reading: empty,
// "?", "NA" or "NaN" (any case).
func isMissing(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "?", "na", "nan":
		return true
	}
	return false
}
