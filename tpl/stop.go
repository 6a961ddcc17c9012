package tpl

import (
	"context"
	"fmt"
)

// stopper lets a caller's context end a computation part-way: the kernels
// and recursions count their work in it and look at the context every
// stopEvery units (about a millisecond), so a deadline, a signal or a gone
// client stops them within well under a second, and the look costs
// nothing measurable. A nil stopper (no context, or one that never ends)
// never stops.
type stopper struct {
	ctx context.Context
	n   int
}

// stopEvery is the work (pair prefixes, entries) between two looks at the
// context.
const stopEvery = 1 << 17

func newStopper(ctx context.Context) *stopper {
	if ctx == nil || ctx.Done() == nil {
		return nil
	}
	return &stopper{ctx: ctx}
}

// stopped is the panic that unwinds a stopped computation to its exported
// entry point (recoverStop).
type stopped struct{ cause error }

// tick counts w units of work and stops when the context has ended.
func (s *stopper) tick(w int) {
	if s == nil {
		return
	}
	s.n += w
	if s.n < stopEvery {
		return
	}
	s.n = 0
	s.check()
}

// check stops at once when the context has ended.
func (s *stopper) check() {
	if s != nil && s.ctx.Err() != nil {
		panic(stopped{cause: context.Cause(s.ctx)})
	}
}

// recoverStop turns a computation stopped by its context into *err (an
// error wrapping the context's cause); any other panic goes on.
func recoverStop(err *error) {
	if r := recover(); r != nil {
		st, ok := r.(stopped)
		if !ok {
			panic(r)
		}
		*err = fmt.Errorf("tpl: stopped: %w", st.cause)
	}
}
