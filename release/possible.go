package release

import (
	"errors"
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// possible answers whether readings are possible under a class: whether
// some chain of it can go from state x to state y in n steps
// (P^n(x, y) > 0), and can start its chain in x (the start law q > 0, or
// q·P^n > 0 for a first reading n steps into the chain). Only the supports
// matter, so chains with the same supports are one; powers are computed
// by squaring, once per chain and number of steps.
type possible struct {
	k      int
	chains []*support
}

type support struct {
	pow   map[int][]bool // n → support of P^n (k×k, row-major)
	start []bool         // support of q; nil: any start
}

func newPossible(class *markov.Class, anyStart bool) *possible {
	k := len(class.States)
	pp := &possible{k: k}
	seen := map[string]bool{}
	for _, ch := range class.Chains {
		s := &support{pow: map[int][]bool{}}
		p1 := make([]bool, k*k)
		key := make([]byte, 0, k*k+k)
		for x, row := range ch.P {
			for y, v := range row {
				p1[x*k+y] = v > 0
				key = append(key, map[bool]byte{true: '1', false: '0'}[v > 0])
			}
		}
		if !anyStart && ch.Init != markov.InitAny {
			if q, err := ch.Initial(); err == nil { // else: no law known, any start
				s.start = make([]bool, k)
				for x, v := range q {
					s.start[x] = v > 0
				}
			}
		}
		key = append(key, '/')
		for _, b := range s.start {
			key = append(key, map[bool]byte{true: '1', false: '0'}[b])
		}
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		s.pow[1] = p1
		pp.chains = append(pp.chains, s)
	}
	return pp
}

// power is the support of P^n, n ≥ 0.
func (pp *possible) power(s *support, n int) []bool {
	if m, ok := s.pow[n]; ok {
		return m
	}
	k := pp.k
	var m []bool
	if n == 0 {
		m = make([]bool, k*k)
		for x := range k {
			m[x*k+x] = true
		}
	} else {
		h := pp.power(s, n/2)
		m = boolProduct(h, h, k)
		if n%2 == 1 {
			m = boolProduct(m, s.pow[1], k)
		}
	}
	s.pow[n] = m
	return m
}

func boolProduct(a, b []bool, k int) []bool {
	out := make([]bool, k*k)
	for x := range k {
		for z := range k {
			if !a[x*k+z] {
				continue
			}
			for y := range k {
				out[x*k+y] = out[x*k+y] || b[z*k+y]
			}
		}
	}
	return out
}

// step says whether some chain goes from x to y in n steps.
func (pp *possible) step(x, y, n int) bool {
	for _, s := range pp.chains {
		if pp.power(s, n)[x*pp.k+y] {
			return true
		}
	}
	return false
}

// first says whether some chain is in x at chain time n+1.
func (pp *possible) first(x, n int) bool {
	for _, s := range pp.chains {
		if s.start == nil {
			return true
		}
		m := pp.power(s, n)
		for x0, ok := range s.start {
			if ok && m[x0*pp.k+x] {
				return true
			}
		}
	}
	return false
}

// checkPossible refuses data that is impossible under the class (issue
// 39): a series whose first reading with a value is in a state no chain
// of the class can start in (a fixed or stationary start; with "any"
// start, or opts.UnknownStart, every state can), or a reading whose state
// no chain of the class reaches from the series' previous reading with a
// value in the steps between them (P^g(x, y) = 0 for every chain, g the
// steps: 1 for consecutive readings, more over missing steps; a reading
// without a value constrains nothing). A guarantee for the class says
// nothing of such data. The error names the series and the reading (its
// time as written, when kept), never a state.
func checkPossible(data *reading.Data, class *markov.Class, opts Options) error {
	pp := newPossible(class, opts.UnknownStart)
	for s, seq := range data.Seqs {
		prev, prevAt := reading.Unknown, 0
		start := 0 // chain time of the first reading, from 0
		if data.Starts != nil {
			start = data.Starts[s] - 1
		}
		for j, v := range seq {
			if v == reading.Unknown {
				continue
			}
			at := j
			if data.Offsets != nil && data.Offsets[s] != nil {
				at = data.Offsets[s][j]
			}
			var what string
			switch {
			case prev == reading.Unknown:
				if !pp.first(v, start+at) {
					what = "its state has probability 0 at that point of the chain under every chain of the class (their start)"
				}
			case !pp.step(prev, v, at-prevAt):
				what = fmt.Sprintf("its state cannot follow the state of the series' previous reading with a value, %d step(s) earlier, under any chain of the class (probability 0)", at-prevAt)
			}
			if what != "" {
				where := fmt.Sprintf("reading %d of series %q", j+1, data.Series[s])
				if data.TimeText != nil && data.TimeText[s] != nil {
					where += fmt.Sprintf(" (time %s)", data.TimeText[s][j])
				}
				return fmt.Errorf("%s: %s: %w", where, what, errImpossible)
			}
			prev, prevAt = v, at
		}
	}
	return nil
}

// errImpossible ends checkPossible's errors.
var errImpossible = errors.New("the data is impossible under the class, so no guarantee for the class holds for it; check the class")

// anyStart says every state is a possible start under some chain.
func (pp *possible) anyStart() bool {
	for x := range pp.k {
		if !pp.first(x, 0) {
			return false
		}
	}
	return true
}

// checkPossibleCounts is checkPossible's check of consecutive readings
// from a stream's transition counts (reading.ReadSummaryTransitions:
// counts[x][y] readings in y right after one in x), which name no line.
func checkPossibleCounts(counts [][]float64, class *markov.Class) error {
	pp := newPossible(class, true)
	for x, row := range counts {
		for y, c := range row {
			if c > 0 && !pp.step(x, y, 1) {
				return fmt.Errorf("a reading's state cannot follow the state of the reading right before it in its series under any chain of the class (probability 0; a release in windows, --window, names the first such reading): %w", errImpossible)
			}
		}
	}
	return nil
}
