package mqm

import (
	"context"
	"fmt"
	"sync"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Tables lets ScaleAt and Influence calls on the same chains share each
// chain's exact oracle: its powers P^d, its term tables and, for a
// stationary chain, its influences, which depend on the distances only. A
// windowed release asks for σ of many segments of one chain, and its
// composition for the influence across every gap, and would otherwise
// rebuild them each time. Results are the same as without Tables (bit
// for bit, except that a fixed-start chain's marginals may be reached by a
// different product order). Safe for concurrent use: calls on one chain
// take turns. At most maxTables chains are kept (then all are dropped). A
// chain is known by its pointer, so it must not be modified once used
// with t (no package modifies a Chain after building it).
type Tables struct {
	mu sync.Mutex
	m  map[*markov.Chain]*tableEntry
}

// maxTables bounds the chains a Tables keeps (each oracle holds its
// tables: tens of MB for 51 states).
const maxTables = 4

type tableEntry struct {
	mu sync.Mutex
	o  *exactOracle
}

// NewTables returns empty shared tables.
func NewTables() *Tables { return &Tables{m: map[*markov.Chain]*tableEntry{}} }

// oracle returns ch's oracle set up for a search over a chain of length T,
// for the caller's exclusive use until done is called. A nil Tables gives
// a fresh oracle. An oracle that met an undefined influence is dropped, so
// no later call sees a value cached from it.
func (t *Tables) oracle(ctx context.Context, ch *markov.Chain, T int) (o *exactOracle, done func(), err error) {
	if t == nil {
		o, err := newExactOracle(ch, T)
		if o != nil {
			o.stop = stop{ctx: ctx}
		}
		return o, func() {}, err
	}
	t.mu.Lock()
	e := t.m[ch]
	if e == nil {
		if len(t.m) >= maxTables {
			clear(t.m)
		}
		e = &tableEntry{}
		t.m[ch] = e
	}
	t.mu.Unlock()
	e.mu.Lock()
	if e.o == nil {
		if e.o, err = newExactOracle(ch, T); err != nil {
			e.mu.Unlock()
			return nil, nil, err
		}
	}
	o = e.o
	o.T, o.evals, o.budget, o.stop = T, 0, 0, stop{ctx: ctx}
	return o, func() {
		if o.nan != nil || o.stop.hit {
			e.o = nil // a stopped search's oracle is never reused
		}
		e.mu.Unlock()
	}, nil
}

// ScaleAt is the package ScaleAt with the chains' oracles shared through t.
func (t *Tables) ScaleAt(class *markov.Class, ob Observation, eps float64, m Method) (Result, error) {
	return scaleAt(context.Background(), t, class, ob, eps, m)
}

// ScaleAtContext is ScaleAt stopped when ctx ends (as ScaleContext).
func (t *Tables) ScaleAtContext(ctx context.Context, class *markov.Class, ob Observation, eps float64, m Method) (Result, error) {
	return scaleAt(ctx, t, class, ob, eps, m)
}

// Influence is the package Influence with the chain's oracle shared
// through t (nil: a fresh oracle).
func (t *Tables) Influence(ch *markov.Chain, i, a, b int) (float64, error) {
	if i < 1 || a < 0 || b < 0 || a >= i {
		return 0, fmt.Errorf("influence: node %d with left distance %d and right distance %d is not a quilt", i, a, b)
	}
	o, done, err := t.oracle(nil, ch, i+b)
	if err != nil {
		return 0, err
	}
	defer done()
	e := o.eval(i, a, b, a == 0, b == 0)
	if o.nan != nil {
		return 0, o.nan
	}
	return e, nil
}
