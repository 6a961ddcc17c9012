package mqm

import (
	"context"
	"fmt"
)

// stop lets a caller's context end a search part-way: the oracles check it
// every stopEvery influence evaluations. An evaluation costs from a memo
// lookup to a few products of k×k terms (a new power of P at most, under a
// second at the largest class release.Limits admits), so a search stops
// within about a second of its context ending, and the check itself costs
// nothing measurable (one counter, one ctx.Err per stopEvery).
//
// A stopped search unwinds by a panic of type stopped, recovered at the
// package's entry points (recoverStop) and by each worker of perChain;
// the oracle it stopped is never reused (Tables drops it).
type stop struct {
	ctx context.Context
	n   uint32
	hit bool // the search was stopped: the oracle is dropped
}

const stopEvery = 16

// stopped is the panic value of a stopped search.
type stopped struct{ err error }

func (s *stop) check() {
	if s.ctx == nil {
		return
	}
	if s.n++; s.n%stopEvery != 0 {
		return
	}
	if err := s.ctx.Err(); err != nil {
		s.hit = true
		panic(stopped{fmt.Errorf("mqm: the quilt search was stopped: %w", err)})
	}
}

// recoverStop turns a search stopped by its context into *err; any other
// panic goes on.
func recoverStop(err *error) {
	if r := recover(); r != nil {
		st, ok := r.(stopped)
		if !ok {
			panic(r)
		}
		*err = st.err
	}
}

// ctxErr is ctx's error as a stopped search returns it (nil: go on), for
// the checks before a search starts.
func ctxErr(ctx context.Context) error {
	if ctx == nil || ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("mqm: the quilt search was stopped: %w", ctx.Err())
}
