package mqm

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// DefaultMaxSearchWork is the estimated work (SearchWork, about a
// nanosecond of one core each) past which puff scale refuses the exact
// quilt search by default: about 30 s of one core.
const DefaultMaxSearchWork = 3e10

// The exact search's work, per chain of k states, is dominated by what it
// computes per distance d it visits (docs/math.md §4.4, the search's
// work): the power P^d (one k×k product while d is inside the table of
// powers, powers.limit; beyond it P^d is P^(L−1)·P^(d−L+1) with the second
// factor by repeated squaring, farProducts products), and the ratio tables
// of the right and left terms (k² pairs × k states each). Every
// evaluation of a quilt from those tables costs at most k², far less. So
//
//	SearchWork = Σ_θ Σ_{d=1}^{D} k³·(2 + products(d)),
//
// with D the farthest distance the search can visit: the walk visits no
// quilt of card above ε·σ_max (every score is at least card/ε), and the
// exact σ is at most MQMApprox's (the approx influence bounds the exact
// one), so D = min(T, ⌈1.1·ε·σ_approx⌉ + 16), or T when MQMApprox does not
// apply (a periodic or reducible class). σ_approx is only computed when
// the estimate with D = T is above refineFrom (its eigengap costs about
// k³, its walk far less than the exact one's).
const refineFrom = 1e9

// farProducts is the number of k×k products farAt spends on P^d when the
// table of powers holds limit entries (d ≥ limit).
func farProducts(d, limit int) float64 {
	e := uint(d - (limit - 1))
	return float64(bits.OnesCount(e) + bits.Len(e) - 1)
}

// distanceWork is the estimated work of one distance d at k states: its
// power and two ratio tables.
func distanceWork(d, k int) float64 {
	k3 := float64(k) * float64(k) * float64(k)
	p := 1.0
	if l := powersLimit(k); d >= l {
		p = farProducts(d, l)
	}
	return k3 * (2 + p)
}

func powersLimit(k int) int { return max(64, maxStoredBytes/(9*k*k+1)) }

// searchWork is Σ_θ Σ_{d=1}^{D} distanceWork(d, k_θ), in closed form
// (D may be 10⁹).
func searchWork(class *markov.Class, D int) float64 {
	byK := map[int]float64{}
	w := 0.0
	for _, ch := range class.Chains {
		k := ch.K()
		s, ok := byK[k]
		if !ok {
			k3 := float64(k) * float64(k) * float64(k)
			l := powersLimit(k)
			near := min(D, l-1) // d in [1, near]: one product each
			s = k3 * 3 * float64(near)
			if n := D - (l - 1); n > 0 { // d in [l, D]: e = d−l+1 in [1, n]
				s += k3 * (2*float64(n) + float64(onesUpTo(n)+bitLenUpTo(n)-n))
			}
			byK[k] = s
		}
		w += s
	}
	return w
}

// onesUpTo is Σ_{e=1}^{n} popcount(e).
func onesUpTo(n int) int {
	s := 0
	for i := 0; 1<<i <= n; i++ {
		half, cycle := 1<<i, 2<<i
		s += (n+1)/cycle*half + max(0, (n+1)%cycle-half)
	}
	return s
}

// bitLenUpTo is Σ_{e=1}^{n} bits.Len(e).
func bitLenUpTo(n int) int {
	s := 0
	for L := 1; 1<<(L-1) <= n; L++ {
		s += L * (min(n, 1<<L-1) - 1<<(L-1) + 1)
	}
	return s
}

// SearchWork estimates, before any work, the work (multiply-adds, about a
// nanosecond of one core each) of the exact quilt search (Scale with
// Exact) on class for T readings at ε, and the farthest distance D it
// assumes the search visits. The model (see refineFrom) counts the powers
// of P and the ratio tables of every distance up to D; the search counts
// the same work as it runs (WithMaxWork). ctx stops the estimate's own
// MQMApprox search.
func SearchWork(ctx context.Context, class *markov.Class, T int, eps float64) (work float64, D int, err error) {
	if err := checkArgs(class, T, eps); err != nil {
		return 0, 0, err
	}
	D = T
	if hopelessClass(class) {
		return 0, 0, nil // σ = T/ε at once
	}
	w := searchWork(class, D)
	if w <= refineFrom {
		return w, D, nil
	}
	r, err := ScaleContext(ctx, class, T, eps, Approx)
	if err != nil {
		if ctxErr(ctx) != nil {
			return 0, 0, err
		}
		return w, D, nil // approx does not apply: D = T
	}
	if d := 1.1*eps*r.Sigma + 16; d < float64(T) {
		D = int(math.Ceil(d))
		w = searchWork(class, D)
	}
	return w, D, nil
}

// LengthWithin is the longest length up to T whose estimate with D = T
// (every distance visited, whatever the class's mixing) is within max: a
// length the search is admitted at for sure (0: none).
func LengthWithin(class *markov.Class, T int, max float64) int {
	lo, hi := 0, T // searchWork(lo) ≤ max; hi: the candidate above
	if searchWork(class, hi) <= max {
		return hi
	}
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if searchWork(class, m) <= max {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// hopelessClass: every chain is periodic and irreducible under a
// stationary or "any" start, so the search answers T/ε without work
// (hopeless).
func hopelessClass(class *markov.Class) bool {
	for _, ch := range class.Chains {
		if ch.Init == markov.InitGiven {
			return false
		}
		if p, err := ch.Period(); err != nil || p <= 1 {
			return false
		}
	}
	return true
}

// WorkError is an exact quilt search refused (Running false: its estimate,
// SearchWork) or stopped (Running true: the work counted as it ran) over
// its work limit.
type WorkError struct {
	Work, Max float64
	Distances int // the estimate's farthest distance (0: running)
	Length    int
	Within    int // a length admitted for sure (LengthWithin; 0: none)
	Running   bool
}

func (e *WorkError) Error() string {
	secs := func(w float64) string {
		if s := w / 1e9; s < 120 {
			return fmt.Sprintf("≈ %.0f s", math.Ceil(s))
		} else {
			return fmt.Sprintf("≈ %.0f min", math.Ceil(s/60))
		}
	}
	if e.Running {
		return fmt.Sprintf("the exact quilt search was stopped: it passed %.2g multiply-adds (%s of one core), over --max-search-work %.2g (the class mixes slowly: each distance the search visits costs a power of P and its ratio tables, k³ each); raise the limit with --max-search-work, or use a shorter length, fewer states or --method approx", e.Work, secs(e.Work), e.Max)
	}
	shorter := "a shorter --length"
	if e.Within > 0 {
		shorter = fmt.Sprintf("--length %d or less (not %d)", e.Within, e.Length)
	}
	return fmt.Sprintf("the exact quilt search was refused: it would take about %.2g multiply-adds (%s of one core: %d distances, each a power of P and its ratio tables, k³ each), over --max-search-work %.2g; raise the limit with --max-search-work, or use %s, fewer states or --method approx", e.Work, secs(e.Work), e.Distances, e.Max, shorter)
}

// workBudget is the work limit a context carries (WithMaxWork), shared by
// every search under it.
type workBudget struct {
	max  float64
	used atomic.Uint64 // multiply-adds
}

type workKey struct{}

// WithMaxWork returns ctx with a limit on the exact searches' work under
// it (multiply-adds, counted as in SearchWork as powers and tables are
// computed, shared by every chain and search under ctx): past it a search
// stops with a *WorkError. max ≤ 0: no limit.
func WithMaxWork(ctx context.Context, max float64) context.Context {
	if !(max > 0) {
		return ctx
	}
	return context.WithValue(ctx, workKey{}, &workBudget{max: max})
}

// spend counts w multiply-adds against the context's work limit, and
// stops the search past it.
func (s *stop) spend(w float64) {
	if s.ctx == nil {
		return
	}
	if !s.budgetRead {
		s.budget, _ = s.ctx.Value(workKey{}).(*workBudget)
		s.budgetRead = true
	}
	b := s.budget
	if b == nil {
		return
	}
	if used := float64(b.used.Add(uint64(w))); used > b.max {
		s.hit = true
		panic(stopped{&WorkError{Work: used, Max: b.max, Running: true}})
	}
}
