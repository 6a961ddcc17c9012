package release

import (
	"context"
	"fmt"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/tpl/pairwise"
)

// Limits bound the size of one release. They are checked before any σ is
// computed or any noise drawn, from the data's times alone, so a request
// for, say, one window per second of a half-year of minute readings is
// refused at once instead of running for minutes and gigabytes.
type Limits struct {
	// MaxWindows is the most calendar windows one release may have
	// (0: DefaultMaxWindows). CLI: --max-windows; puff serve:
	// --max-windows (the server's own limit, not the client's).
	MaxWindows int
	// MaxCells is the most released numbers, windows × bins (0:
	// DefaultMaxCells). CLI: --max-cells; puff serve: --max-cells.
	MaxCells int
	// MaxLeakageWork is the most multiply-adds the pairwise leakage bound
	// (docs/math.md §8.11) may take, estimated up front from the chain's
	// sparsity (0: DefaultMaxLeakageWork), and the most operations of the
	// scalar recursion's unbounded bound (tpl.Work); beyond it a bound is
	// not computed and the calibration says why. CLI: --max-leakage-work.
	MaxLeakageWork float64
	// MaxStates is the most states (bins, levels) a class may have (0:
	// DefaultMaxStates), checked before the data are read, a chain is
	// fitted or any σ computed: a fit and the quilt search hold k×k
	// matrices, and each product of them costs k³. CLI: --max-states
	// (puff release, puff scale); puff serve: --max-states.
	MaxStates int
	// MaxSearchWork is the most work (multiply-adds, about a nanosecond
	// of one core each) puff scale's exact quilt search may take,
	// estimated up front (mqm.SearchWork: its distances × the powers of
	// P and ratio tables, k³ each) and counted as it runs (mqm.WithMaxWork)
	// (0: DefaultMaxSearchWork). CLI: puff scale --max-search-work.
	MaxSearchWork float64
}

// Default limits: the README's examples and a day per window of the
// bundled half-year of UCI minute readings (181 windows × 51 levels =
// 9,231 cells) fit with room to spare; an hour per window of it (4,344 ×
// 51 = 221,544 cells, ≈ 45 MB of JSON) still fits.
const (
	DefaultMaxWindows = 10000
	DefaultMaxCells   = 500000
	// DefaultMaxLeakageWork: about 30 s of one core (pairwise.DefaultMaxWork)
	DefaultMaxLeakageWork = pairwise.DefaultMaxWork
	// DefaultMaxStates: 51 levels (the README) to a few hundred states
	// fit with room to spare; at 1000 states one product of P's powers
	// takes about a second on one core, and the search's tables hold
	// about StateBytes(1000) ≈ 0.61 GB.
	DefaultMaxStates = 1000
	// DefaultMaxSearchWork: about 30 s of one core (mqm.DefaultMaxSearchWork)
	DefaultMaxSearchWork = mqm.DefaultMaxSearchWork
)

// StateBytes estimates the memory of the exact quilt search on a class of
// k states: its table of P's powers dominates — 256 MiB, or 64 distances
// of k×k floats and their support patterns (9·k² bytes each) when that is
// more (mqm's powers) — with a few k×k work tables besides. It is the
// bound puff release --help states.
func StateBytes(k int) float64 {
	k2 := float64(k) * float64(k)
	return max(256<<20, 64*9*k2) + 4*8*k2
}

// bytesPerWindow and bytesPerCell estimate the JSON of a windowed report
// (measured: 181 windows of 51 bins print 1.86 MB with --json).
const (
	bytesPerWindow = 2000
	bytesPerCell   = 200
)

func (l Limits) windows() int {
	if l.MaxWindows > 0 {
		return l.MaxWindows
	}
	return DefaultMaxWindows
}

func (l Limits) leakageWork() float64 {
	if l.MaxLeakageWork > 0 {
		return l.MaxLeakageWork
	}
	return DefaultMaxLeakageWork
}

func (l Limits) searchWork() float64 {
	if l.MaxSearchWork > 0 {
		return l.MaxSearchWork
	}
	return DefaultMaxSearchWork
}

// CheckSearchWork refuses, before any work, an exact quilt search on
// class for T readings at ε whose estimated work (mqm.SearchWork) is over
// l's limit, with the estimate and the flag that raises it; it returns
// ctx carrying the limit, so the search stops at it as it runs.
func (l Limits) CheckSearchWork(ctx context.Context, class *markov.Class, T int, eps float64) (context.Context, error) {
	w, d, err := mqm.SearchWork(ctx, class, T, eps)
	if err != nil {
		return ctx, err
	}
	if w > l.searchWork() {
		return ctx, &mqm.WorkError{Work: w, Max: l.searchWork(), Distances: d, Length: T, Within: mqm.LengthWithin(class, T, l.searchWork())}
	}
	return mqm.WithMaxWork(ctx, l.searchWork()), nil
}

func (l Limits) states() int {
	if l.MaxStates > 0 {
		return l.MaxStates
	}
	return DefaultMaxStates
}

// CheckStates refuses a class of k states over l's limit before any work,
// with an estimate of what it would cost.
func (l Limits) CheckStates(k int) error {
	if k > l.states() {
		return &LimitError{Limit: "states", Max: l.states(), Bins: k}
	}
	return nil
}

func (l Limits) cells() int {
	if l.MaxCells > 0 {
		return l.MaxCells
	}
	return DefaultMaxCells
}

// LimitError is a release refused for its size before any work: it names
// the limit, the size asked for and how to raise the limit.
type LimitError struct {
	Limit   string // "windows", "cells" or "states"
	Max     int    // the limit
	Windows int    // windows of the release (at least this many when Partial)
	Partial bool   // counting stopped past the limit
	Bins    int
	Width   time.Duration // 0: no windows
}

// Field is the option that raises the limit: max_windows, max_cells or
// max_states.
func (e *LimitError) Field() string { return "max_" + e.Limit }

func (e *LimitError) Error() string {
	if e.Limit == "states" {
		return fmt.Sprintf("class too large: %d states (bins), over the limit of %d states: fitting a chain and calibrating the noise hold %d×%d matrices (≈ %.2g GB) and each product of them costs %d³ operations; declare fewer states or levels, or raise the limit with --max-states (puff release, puff scale; puff serve --max-states for the service)",
			e.Bins, e.Max, e.Bins, e.Bins, StateBytes(e.Bins)/1e9, e.Bins)
	}
	atLeast := ""
	if e.Partial {
		atLeast = "at least "
	}
	cells := e.Windows * e.Bins
	what := fmt.Sprintf("%d bins", e.Bins)
	if e.Width > 0 {
		what = fmt.Sprintf("window %v makes %s%d windows × %d bins = %s%d released numbers", e.Width, atLeast, e.Windows, e.Bins, atLeast, cells)
	}
	est := float64(e.Windows*bytesPerWindow+cells*bytesPerCell) / 1e6
	flag := "--max-" + e.Limit
	return fmt.Sprintf("release too large: %s (%s≈ %.3g MB of JSON), over the limit of %d %s; choose a wider window or fewer levels, or raise the limit with %s (puff release; puff serve %s for the service)",
		what, atLeast, est, e.Max, e.Limit, flag, flag)
}

// checkLimits refuses a release over the limits before any work: bins is
// the number of bins (the class's states), width the window (0: one
// release). Counting the windows stops as soon as a limit is passed, so
// it costs at most one pass over the times.
func checkLimits(data *reading.Data, bins int, width time.Duration, loc *time.Location, l Limits) error {
	if bins > l.cells() {
		return &LimitError{Limit: "cells", Max: l.cells(), Windows: 1, Bins: bins}
	}
	if width <= 0 || data == nil || data.Times == nil || width < time.Second {
		return nil // planWindows refuses what has no windows
	}
	maxW := min(l.windows(), l.cells()/max(bins, 1))
	seen := map[int64]struct{}{}
	for _, ts := range data.Times {
		last, have := int64(0), false
		for _, t := range ts {
			k := WindowOf(t, width, loc)
			if have && k == last {
				continue
			}
			last, have = k, true
			seen[k] = struct{}{}
			if len(seen) > maxW {
				return limitError(len(seen), bins, width, l, true)
			}
		}
	}
	return nil
}

func limitError(windows, bins int, width time.Duration, l Limits, partial bool) error {
	e := &LimitError{Limit: "windows", Max: l.windows(), Windows: windows, Partial: partial, Bins: bins, Width: width}
	if windows <= l.windows() {
		e.Limit, e.Max = "cells", l.cells()
	}
	return e
}

// ctxErr is the options' context's error (nil without a context): long
// computations check it between windows and between series' patterns, so
// a gone client or a timeout stops them.
func (o *Options) context() context.Context {
	if o.Context == nil {
		return context.Background()
	}
	return o.Context
}

func (o *Options) ctxErr() error {
	if o.Context == nil {
		return nil
	}
	if err := o.Context.Err(); err != nil {
		return fmt.Errorf("release stopped: %w", context.Cause(o.Context))
	}
	return nil
}
