package mqm

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
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
	ctx  context.Context
	n    uint32
	hit  bool      // the search was stopped: the oracle is dropped
	heap time.Time // when the live heap was last read
	// the context's work limit (WithMaxWork; nil: none), read once
	budget     *workBudget
	budgetRead bool
}

const stopEvery = 16

// heapEvery: the live heap is read at most this often (a read costs about
// a microsecond; the tables grow by megabytes a second at most).
const heapEvery = 50 * time.Millisecond

// maxLiveHeap is the most live heap (bytes, as of the last garbage
// collection) a search may grow the process to (0: no bound): past it the
// search stops with a *MemoryError. The searches' tables grow with the
// distances visited (k² floats each), so a slowly mixing class at a large
// length would otherwise grow without end. The heap is the process's, so
// searches running at once share the bound; the process may hold up to
// about twice it before a collection shows it.
var maxLiveHeap atomic.Uint64

// DefaultMaxMemory is the default bound on the live heap of a search
// (SetMaxMemory): 2 GiB.
const DefaultMaxMemory = 2 << 30

func init() { maxLiveHeap.Store(DefaultMaxMemory) }

// SetMaxMemory sets the bound on the live heap past which every search
// stops with a *MemoryError (0: none); the CLI's --max-memory and puff
// serve's set it.
func SetMaxMemory(bytes uint64) { maxLiveHeap.Store(bytes) }

// MemoryError is a search stopped at the memory bound (SetMaxMemory).
type MemoryError struct{ Live, Max uint64 }

func (e *MemoryError) Error() string {
	return fmt.Sprintf("the quilt search was stopped: it grew the live heap to %d MB, over the limit of %d MB (its tables grow with the distances it visits: a slowly mixing class at a large length); raise the limit with --max-memory, or use a shorter length, fewer states or --method approx", e.Live>>20, e.Max>>20)
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
var liveMu sync.Mutex

// liveHeap is the live heap as of the last garbage collection.
func liveHeap() uint64 {
	liveMu.Lock()
	defer liveMu.Unlock()
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return liveSample[0].Value.Uint64()
}

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
	if now := time.Now(); now.Sub(s.heap) >= heapEvery {
		s.heap = now
		if m := maxLiveHeap.Load(); m > 0 {
			if live := liveHeap(); live > m {
				s.hit = true
				panic(stopped{&MemoryError{Live: live, Max: m}})
			}
		}
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
