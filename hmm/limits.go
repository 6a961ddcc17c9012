package hmm

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Limits bound one verification's work and memory. Both are estimated up
// front from the model, the length and the arithmetic (Estimate), and a
// verification over either is refused before any work; the work is also
// counted as the search runs (pruning may visit more than the estimate's
// one path per secret pair) and the search stops at the limit.
type Limits struct {
	// MaxWork is the most word multiply-adds (64-bit words of the
	// exact numerators, or float64 operations) one verification may take
	// (0: DefaultMaxWork). CLI: puff verify --max-work.
	MaxWork float64
	// MaxMemory is the most bytes the search's forward vectors may hold
	// (0: no limit). CLI: puff verify --max-memory.
	MaxMemory float64
}

// DefaultMaxWork is a few seconds of one core (about 1e9 a second):
// the README's models fit, and examples/flu_hmm.json in exact arithmetic
// up to length 3000 (≈ 3.7e9); at length 5000 (≈ 1.4e10, a minute on a
// loaded machine, issue 39) it is refused.
const DefaultMaxWork = 4e9

// Options are how one verification runs: Context stops it (checked as
// the search runs, so a cancel or a deadline stops it within a second),
// Limits bound it. The zero value is no context and the default limits.
type Options struct {
	Context context.Context
	Limits  Limits
}

// unlimited are the options of the calls without Options (Loss, Check,
// LossFloat, Evaluate, Problem.Evaluate): no context and no work limit,
// bounded by maxExplored alone, as before Options.
var unlimited = Options{Limits: Limits{MaxWork: math.Inf(1)}}

func (o Options) maxWork() float64 {
	if o.Limits.MaxWork > 0 {
		return o.Limits.MaxWork
	}
	return DefaultMaxWork
}

// Cost is the up-front estimate of one verification.
type Cost struct {
	Work   float64 // word multiply-adds (float64 operations with float arithmetic)
	Memory float64 // bytes of the forward vectors held along the search's paths
}

// LimitError is a verification refused before any work, or stopped as it
// ran, for its size: it names the limit and the flag that raises it.
type LimitError struct {
	Limit    string // "work" or "memory"
	Estimate float64
	Max      float64
	Stopped  bool // counted as it ran (work), not estimated up front
	Length   int
	States   int
	Obs      int
	Pairs    int
	Float    bool
	StepBits int // exact: bits the numerators grow by at each step
}

func (e *LimitError) Error() string {
	arith := fmt.Sprintf("exact arithmetic (numerators grow by up to %d bits a step)", e.StepBits)
	if e.Float {
		arith = "float arithmetic"
	}
	what := fmt.Sprintf("lengths 1..%d over %d observations, %d states and %d secret pairs in %s", e.Length, e.Obs, e.States, e.Pairs, arith)
	if e.Limit == "memory" {
		return fmt.Sprintf("verification too large: %s hold about %.3g MB, over the limit of %.3g MB; use a shorter --length, or raise the limit with --max-memory", what, e.Estimate/1e6, e.Max/1e6)
	}
	if e.Stopped {
		return fmt.Sprintf("verification stopped at %.3g word multiply-adds, the limit of --max-work (%s; pruning visited more sequences than estimated); use a shorter --length, or raise the limit with --max-work", e.Max, what)
	}
	return fmt.Sprintf("verification too large: %s take about %.3g word multiply-adds, over the limit of %.3g; use a shorter --length or --arithmetic float, or raise the limit with --max-work", what, e.Estimate, e.Max)
}

// karatsuba is math/big's threshold (words) above which products are
// computed by Karatsuba's method.
const karatsuba = 40

// mulWork is the word multiply-adds of a product of two s-word numbers.
func mulWork(s float64) float64 {
	if s < karatsuba {
		return s * s
	}
	return karatsuba * karatsuba * math.Pow(s/karatsuba, math.Log2(3))
}

// costModel prices one visit of the search at a depth.
type costModel struct {
	k, m, nnz, pairs int
	stepBits         int // 0: float arithmetic
}

func newCostModel(m *Model, pairs, stepBits int) costModel {
	nnz := 0
	for _, row := range m.Trans {
		nnz += len(row)
	}
	return costModel{k: len(m.States), m: len(m.Obs), nnz: nnz, pairs: pairs, stepBits: stepBits}
}

// words is the size of a forward vector's entry at depth d: ≤ D^(2d+1),
// the common denominator's power (one transition and one emission per
// step over the initial numerator).
func (c costModel) words(d int) float64 {
	return math.Ceil(float64((2*d+1)*c.stepBits) / 64)
}

// visit is the work of one visit at depth d: a step and an emission of
// the forward vectors, their sums, and the comparisons of ratios (two
// products each) that offer and the pruning bound make.
func (c costModel) visit(d int) float64 {
	if c.stepBits == 0 {
		return visitOverhead + float64(c.nnz+7*c.k+4)
	}
	s := c.words(d)
	return visitOverhead + float64(c.nnz+3*c.k)*s + float64(2+4*c.k)*mulWork(s)
}

// visitOverhead is a visit's cost besides its arithmetic (allocations,
// locks), in word multiply-adds: about a microsecond.
const visitOverhead = 1000

// estimate is the cost of lengths 1..n when pruning keeps one path per
// secret pair: at every depth its node's m children are visited (twice
// with exact arithmetic: the search and the canonical witness's pass),
// and each worker holds the forward vectors of its path's every depth.
func (c costModel) estimate(n int) Cost {
	passes := 2.0
	if c.stepBits == 0 {
		passes = 1
	}
	workers := float64(min(runtime.GOMAXPROCS(0), max(c.pairs*c.m, 1)))
	var est Cost
	for d := 1; d <= n; d++ {
		est.Work += passes * float64(c.m*c.pairs) * c.visit(d)
		entry := 8.0 // a float64
		if c.stepBits > 0 {
			entry = 8*c.words(d) + 40 // a big.Int's words and header
		}
		est.Memory += workers * 4 * float64(c.k) * entry
	}
	return est
}

// check refuses the estimate of lengths 1..n over the options' limits and
// returns the meter that counts the work as the search runs.
func (o Options) check(c costModel, n int) (*meter, error) {
	if err := o.refuse(c.estimate(n), c, n); err != nil {
		return nil, err
	}
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	return &meter{ctx: ctx, cost: c, max: o.maxWork(), over: o.limitError(c, n)}, nil
}

func (o Options) limitError(c costModel, n int) *LimitError {
	return &LimitError{Limit: "work", Max: o.maxWork(), Stopped: true, Length: n, States: c.k, Obs: c.m, Pairs: c.pairs, Float: c.stepBits == 0, StepBits: 2 * c.stepBits}
}

// refuse refuses an estimate over o's limits (c describes the search).
func (o Options) refuse(est Cost, c costModel, n int) error {
	e := o.limitError(c, n)
	e.Stopped, e.Estimate = false, est.Work
	if est.Work > e.Max {
		return e
	}
	if o.Limits.MaxMemory > 0 && est.Memory > o.Limits.MaxMemory {
		e.Limit, e.Estimate, e.Max = "memory", est.Memory, o.Limits.MaxMemory
		return e
	}
	return nil
}

// meter counts a search's work as it runs and stops it past the limit or
// when its context ends.
type meter struct {
	ctx     context.Context
	cost    costModel
	max     float64
	over    *LimitError
	mu      sync.Mutex
	work    atomic.Int64
	calls   atomic.Int64
	stopped atomic.Bool
	err     error
}

// add counts a visit at depth d; false when the search must stop.
func (t *meter) add(d int) bool {
	if t == nil {
		return true
	}
	if t.stopped.Load() {
		return false
	}
	w := t.cost.visit(d)
	if float64(t.work.Add(int64(math.Ceil(w)))) > t.max {
		t.stop(t.over)
		return false
	}
	if t.calls.Add(1)%64 == 0 || w > 1e5 {
		if err := t.ctx.Err(); err != nil {
			t.stop(fmt.Errorf("verification stopped: %w", context.Cause(t.ctx)))
			return false
		}
	}
	return true
}

func (t *meter) stop(err error) {
	t.mu.Lock()
	if t.err == nil {
		t.err = err
	}
	t.mu.Unlock()
	t.stopped.Store(true)
}

// Err is why the search stopped (nil: it did not).
func (t *meter) Err() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}
