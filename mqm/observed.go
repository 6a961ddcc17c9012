package mqm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Observation says at which times of the chain X_1, X_2, … a sequence's
// readings were taken. The chain runs through every time step, observed or
// not; the released query reads only the observed readings.
//
// Why a sequence with missing readings is one chain, not several: the
// reading after a gap of g missing steps follows P^{g+1} from the one
// before it, so the pieces on either side of a gap are correlated and a
// secret in one piece leaks through the others. Marginalising the missing
// readings out of the chain leaves the observed readings Y_j = X_{t_j} as a
// (time-inhomogeneous) Markov chain with transitions P^{t_{j+1}−t_j} and
// marginals q·P^{t_j−1}. The Pufferfish framework on the observed readings
// (secrets Y_j = a, the query a function of Y only) is therefore exactly the
// Markov Quilt Mechanism ([SWC17] Thm 4.3) on that chain: a quilt of Y_j is
// {Y_{j−a}, Y_{j+b}}, its nearby set holds a+b−1 readings, and its
// max-influence is computed from P^{t_j−t_{j−a}}, P^{t_{j+b}−t_j} and the
// marginal at time t_j. Quilt nodes are observed readings without loss: a
// quilt node at an unobserved time between two readings has the same
// nearby count as the later reading and, by data processing, no smaller an
// influence. A long gap thus costs almost nothing: the influence across it
// is tiny, and the quilt node just after it separates the two sides.
type Observation struct {
	Start int   // time of the first reading (≥ 1)
	Len   int   // number of readings (≥ 1)
	Times []int // nil: consecutive times Start..Start+Len−1; else the reading times, strictly increasing, Times[0] = Start
}

// Consecutive is the observation of a chain segment of T readings starting
// at time start.
func Consecutive(start, T int) Observation { return Observation{Start: start, Len: T} }

// At returns a sequence observed at the given times (1-based, strictly
// increasing); consecutive times give the compact form.
func At(times []int) (Observation, error) {
	if len(times) == 0 {
		return Observation{}, errors.New("observation: no readings")
	}
	if times[0] < 1 {
		return Observation{}, fmt.Errorf("observation: time %d, want ≥ 1", times[0])
	}
	for j := 1; j < len(times); j++ {
		if times[j] <= times[j-1] {
			return Observation{}, fmt.Errorf("observation: times %d then %d do not increase", times[j-1], times[j])
		}
	}
	n := len(times)
	if times[n-1]-times[0] == n-1 {
		return Consecutive(times[0], n), nil
	}
	return Observation{Start: times[0], Len: n, Times: append([]int(nil), times...)}, nil
}

// Time returns the chain time of reading j (1-based).
func (ob Observation) Time(j int) int {
	if ob.Times == nil {
		return ob.Start + j - 1
	}
	return ob.Times[j-1]
}

// End is the time of the last reading.
func (ob Observation) End() int { return ob.Time(ob.Len) }

// Gaps is the number of missing steps between the first and last reading.
func (ob Observation) Gaps() int { return ob.End() - ob.Start + 1 - ob.Len }

func (ob Observation) check() error {
	if ob.Start < 1 || ob.Len < 1 {
		return fmt.Errorf("observation: start %d and %d readings, want ≥ 1 each", ob.Start, ob.Len)
	}
	if ob.Times != nil {
		if len(ob.Times) != ob.Len || ob.Times[0] != ob.Start {
			return errors.New("observation: times disagree with start and length")
		}
		if _, err := At(ob.Times); err != nil {
			return err
		}
	}
	return nil
}

// observedOracle answers influences of quilts in reading indices by
// translating them to chain times (see Observation).
type observedOracle struct {
	ob     Observation
	exact  *exactOracle
	approx *approxOracle
	// evals counts influence evaluations; past budget (> 0) the search
	// gives up and ScaleAt falls back to a bound.
	evals, budget int
}

func (o *observedOracle) over() bool { return o.budget > 0 && o.evals > o.budget }

// evalBudget bounds the influence evaluations (each O(k²)) of one exact
// search over a pattern of missing readings: about 10⁸ operations.
var evalBudget = func(k int) int { return max(100_000, 100_000_000/(k*k+1)) }

func (o *observedOracle) influence(j, a, b int) float64 {
	o.evals++
	n := o.ob.Len
	lo, ro := a == j, b == n-j+1
	t := o.ob.Time(j)
	dl, dr := 0, 0
	if !lo {
		dl = t - o.ob.Time(j-a)
	}
	if !ro {
		dr = o.ob.Time(j+b) - t
	}
	if o.exact != nil {
		return o.exact.eval(t, dl, dr, lo, ro)
	}
	return o.approx.eval(dl, dr, lo, ro)
}

// nodeMonotone: consecutive readings of a chain standing for every initial
// distribution keep the walk's domination argument (the set of marginals
// at time t only shrinks as t grows); with gaps the influence of a quilt
// depends on the gaps around the node, and a fixed initial distribution is
// never monotone.
func (o *observedOracle) nodeMonotone() bool {
	return o.ob.Times == nil && o.exact != nil && o.exact.ch.Init == markov.InitAny
}

// ScaleAt is Scale for a sequence observed at the times ob: σ_max of the
// Markov Quilt Mechanism for a 1-Lipschitz query of the observed readings,
// secrets being the observed readings (see Observation for the proof).
// Result.Node and Result.Quilt count readings, not time steps. A segment
// that starts at time s > 1 is calibrated from the marginal q·P^{s−1}
// (Consecutive(s, T)); a stationary chain gives the same σ at every start.
func ScaleAt(class *markov.Class, ob Observation, eps float64, m Method) (Result, error) {
	return scaleAt(context.Background(), nil, class, ob, eps, m)
}

// ScaleAtContext is ScaleAt stopped when ctx ends (as ScaleContext).
func ScaleAtContext(ctx context.Context, class *markov.Class, ob Observation, eps float64, m Method) (Result, error) {
	return scaleAt(ctx, nil, class, ob, eps, m)
}

func scaleAt(ctx context.Context, tables *Tables, class *markov.Class, ob Observation, eps float64, m Method) (_ Result, err error) {
	defer recoverStop(&err)
	if err := ctxErr(ctx); err != nil {
		return Result{}, err
	}
	if err := ob.check(); err != nil {
		return Result{}, err
	}
	if err := checkArgs(class, ob.Len, eps); err != nil {
		return Result{}, err
	}
	if err := checkMethod(m); err != nil {
		return Result{}, err
	}
	n := ob.Len
	if m == Approx {
		p, err := ApproxParameters(class)
		if err != nil {
			return Result{}, err
		}
		ap := &approxOracle{T: n, piMin: p.PiMin, gap: p.Gap, reversible: p.Reversible, stop: stop{ctx: ctx}}
		if ob.Times == nil {
			// The bound does not depend on the start.
			return toResult(search(ap, n, eps), n, 0, &p), nil
		}
		var r nodeResult
		if math.IsInf(ap.delta(ob.End()-ob.Start), 1) {
			r = trivial(n, eps)
		} else {
			r = scan(&observedOracle{ob: ob, approx: ap, budget: evalBudget(1)}, n, eps)
		}
		if r.partial {
			return spanBound(ctx, class, ob, eps, m)
		}
		return toResult(r, n, 0, &p), nil
	}
	res, err := perChain(class, n, func(ch *markov.Chain) (nodeResult, error) {
		inner, done, err := tables.oracle(ctx, ch, ob.End())
		if err != nil {
			return nodeResult{}, err
		}
		defer done()
		var r nodeResult
		switch {
		case ob.Times == nil && (ob.Start == 1 || ch.Init == markov.InitStationary):
			inner.T = n
			r = search(inner, n, eps)
		case hopeless(inner, n):
			r = trivial(n, eps)
		default:
			o := &observedOracle{ob: ob, exact: inner, budget: evalBudget(ch.K())}
			if o.nodeMonotone() {
				r = walk(o, n, eps)
			} else {
				r = scan(o, n, eps)
			}
		}
		return r, inner.nan
	})
	if err == nil && res.partial {
		return spanBound(ctx, class, ob, eps, m)
	}
	return res, err
}

// spanBound is the fallback when the exact search over a pattern of
// missing readings exceeds its budget: σ for the whole span observed,
// every missing reading counted as if present. It is an upper bound on the
// exact σ — any quilt of the full chain is a quilt of the observed
// readings, and its nearby set holds no more readings than time steps
// (docs/math.md §4.6) — so the guarantee holds with a little more noise.
func spanBound(ctx context.Context, class *markov.Class, ob Observation, eps float64, m Method) (Result, error) {
	r, err := scaleAt(ctx, nil, class, Consecutive(ob.Start, ob.End()-ob.Start+1), eps, m)
	if err != nil {
		return Result{}, err
	}
	r.UpperBound = true
	return r, nil
}

func trivial(n int, eps float64) nodeResult {
	return nodeResult{sigma: float64(n) / eps, node: 1, quilt: Quilt{1, n}}
}

// perChain runs one search per chain of the class, up to GOMAXPROCS at a
// time, and returns the worst (the class-level σ_max is the maximum over θ).
func perChain(class *markov.Class, n int, f func(ch *markov.Chain) (nodeResult, error)) (Result, error) {
	results := make([]nodeResult, len(class.Chains))
	errs := make([]error, len(class.Chains))
	// Workers take the next chain from a shared counter: no channel
	// hand-off (and no goroutine wake-up) per chain, which dominated
	// classes of many small chains.
	var wg sync.WaitGroup
	var next atomic.Int64
	for range min(runtime.GOMAXPROCS(0), len(class.Chains)) {
		wg.Go(func() {
			for {
				c := int(next.Add(1) - 1)
				if c >= len(class.Chains) {
					return
				}
				r, err := func() (_ nodeResult, err error) {
					defer recoverStop(&err) // a stopped search, on this goroutine
					return f(class.Chains[c])
				}()
				if err != nil {
					errs[c] = fmt.Errorf("chain %d: %w", c, err)
					continue
				}
				results[c] = r
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Result{}, err
	}
	top := 0
	for c, r := range results {
		if r.partial {
			return Result{partial: true}, nil
		}
		if r.sigma > results[top].sigma {
			top = c
		}
	}
	return toResult(results[top], n, top, nil), nil
}
