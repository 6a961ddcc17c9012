package mqm

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// tiny is the smallest probability the oracle takes at face value. A
// structurally positive entry of P^d (or of a marginal) computed below tiny
// may have lost its relative precision to underflow: a product that falls
// below the normal range is rounded with an absolute error up to 2^−1074,
// which is no longer small relative to the entry. Above tiny = 2^−900 the
// accumulated absolute error of d·k such roundings (< 2^−1000 for any size
// this package accepts) is far below the relative allowance. Below tiny the
// oracle only uses safe bounds: such an entry in a denominator makes the
// ratio +Inf (the quilt is unusable), in a numerator it is replaced by the
// upper bound 2·tiny. Zero entries that are structurally positive are
// treated the same way; an entry is impossible only when the exact zero
// pattern (boolean matrix powers) says so.
const tiny = 0x1p-900

// power is one P^d with its exact zero pattern. The values live in a gonum
// matrix (blocked products, 1.6× faster than a plain loop at k = 51); v
// holds its rows as views.
type power struct {
	d *mat.Dense
	v [][]float64
	z [][]bool // z[x][y]: P^d(x,y) > 0 in exact arithmetic
}

func denseRows(d *mat.Dense) [][]float64 {
	k, _ := d.Dims()
	v := make([][]float64, k)
	for i := range k {
		v[i] = d.RawRowView(i)
	}
	return v
}

func identityPower(k int) power {
	d := mat.NewDense(k, k, nil)
	p := power{d: d, v: denseRows(d), z: make([][]bool, k)}
	for i := range p.z {
		d.Set(i, i, 1)
		p.z[i] = make([]bool, k)
		p.z[i][i] = true
	}
	return p
}

func basePower(ch *markov.Chain) power {
	k := ch.K()
	d := ch.Dense()
	p := power{d: d, v: denseRows(d), z: make([][]bool, k)}
	for x := range k {
		p.z[x] = make([]bool, k)
		for y, v := range ch.P[x] {
			p.z[x][y] = v > 0
		}
	}
	return p
}

// product is a·b. Entries are sums of non-negative products, so a
// structural zero is computed as exactly 0 in any summation order, and the
// relative error bound of the allowance holds for any order.
func product(a, b *mat.Dense) (*mat.Dense, [][]float64) { return productW(a, b, 0) }

// productW is product on at most workers goroutines (0: GOMAXPROCS); the
// same result whatever the number (gemm.go).
func productW(a, b *mat.Dense, workers int) (*mat.Dense, [][]float64) {
	k, _ := a.Dims()
	c := mat.NewDense(k, k, nil)
	if k >= gonumFrom {
		ra, rb, rc := a.RawMatrix(), b.RawMatrix(), c.RawMatrix()
		if haveKernel && ra.Stride == k && rb.Stride == k && rc.Stride == k {
			mulIntoW(rc.Data, ra.Data, rb.Data, k, workers) // gonum's result, bit for bit (gemm.go)
		} else {
			c.Mul(a, b)
		}
		return c, denseRows(c)
	}
	// small matrices: a plain loop beats the blocked product's overhead
	v := denseRows(c)
	for i, row := range v {
		for l, x := range a.RawRowView(i) {
			if x == 0 {
				continue
			}
			for j, y := range b.RawRowView(l) {
				row[j] += x * y
			}
		}
	}
	return c, v
}

// gonumFrom is the size from which gonum's product is faster (measured:
// 0.6 µs loop vs 1.6 µs gonum at k = 4; 57 vs 35 µs at k = 51).
const gonumFrom = 16

// mul returns a·b for both the values and the patterns.
func mul(a, b power) power {
	d, v := product(a.d, b.d)
	return power{d: d, v: v, z: mulPattern(a.z, b.z)}
}

func mulPattern(a, b [][]bool) [][]bool {
	k := len(a)
	out := make([][]bool, k)
	// full[l]: row l of b is all true, and so is every row of the
	// product that reaches it (exact: a boolean OR)
	full := make([]bool, k)
	for l, row := range b {
		full[l] = !slices.Contains(row, false)
	}
	for i := range k {
		row := make([]bool, k)
		for l, in := range a[i] {
			if !in {
				continue
			}
			if full[l] {
				for j := range row {
					row[j] = true
				}
				break
			}
			for j, bz := range b[l] {
				row[j] = row[j] || bz
			}
		}
		out[i] = row
	}
	return out
}

func samePattern(a, b [][]bool) bool {
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func samePower(a, b power) bool {
	for i := range a.v {
		for j := range a.v[i] {
			if a.v[i][j] != b.v[i][j] || a.z[i][j] != b.z[i][j] {
				return false
			}
		}
	}
	return true
}

// maxStoredBytes caps the memory of the sequential table of powers; larger
// distances are computed by repeated squaring on demand.
const maxStoredBytes = 256 << 20

// powers computes P^d for d ≥ 0: a sequential table P^0, P^1, … (one
// product per new distance, the common case of a search that walks d
// upwards) up to a memory cap, and repeated squaring beyond it.
//
// For k ≥ pipeFrom the table is produced by a second goroutine that runs
// a few distances ahead of the largest one asked (pipeAhead), so that the
// products of the next powers overlap the search's own work on the last
// ones (two cores: the powers were a third of the cpu at 201 states, and
// the search waited for each). It computes the same sequence — the same
// products of the same operands in the same order, and the same
// convergence test — so every entry is the one the sequential table holds
// (docs/math.md §4.2, arithmetic that changes no bit (i)). Entries [0, n)
// are complete and never change; the search reads them without locks.
// known reports the table as a sequential computation would hold it after
// the same requests, so the searches' decisions (surelyFeasible) do not
// depend on how far ahead the producer ran.
type powers struct {
	base      power
	table     []power
	converged bool // table's last entry equals every later power
	// zFixed: the table's last pattern equals the one before it, so every
	// later pattern is the same (z_{d+1} = z_d·z_1 = z_{d−1}·z_1 = z_d).
	zFixed bool
	limit  int // table length cap
	far    map[int]power
	// charge, when set, is told the work of each power before it is
	// computed (work.go: distanceWork's power part); charged: the table
	// entries below it have been charged.
	charge  func(float64)
	charged int

	// pipelined production (bg): table has length limit from the start
	// and n entries are complete; the producer owns table[n:], zFixed,
	// and (until stopped) converged.
	bg      bool
	n       atomic.Int64
	asked   int // 1 + the largest distance asked (the search's goroutine only)
	wanted  int // the largest want sent (the search's goroutine only)
	mu      sync.Mutex
	cond    sync.Cond
	want    int     // produce while n ≤ want
	running bool    // a producer goroutine runs
	stopped bool    // converged or at the cap: nothing more to produce
	job     *mulJob // the product in progress (shared with a waiting search)
	// post, when set, is run by the producer on each complete entry,
	// in order, whenever it has no power to produce (posted: the next)
	post   func(d int, pw power)
	posted int
}

// setPost sets the function the producer runs on each new entry.
func (p *powers) setPost(f func(d int, pw power)) {
	p.mu.Lock()
	p.post = f
	if f != nil && p.bg && !p.running {
		p.running = true
		go p.produce()
	}
	p.mu.Unlock()
}

// pipeFrom is the least number of states for which powers are produced
// ahead on a second goroutine (a product of 48 states takes ≈ 10 µs on
// one core, far above a goroutine hand-over); pipeAhead is how many
// distances ahead of the largest one asked it runs. Variables so tests
// can compare both ways on small chains.
var (
	pipeFrom  = 48
	pipeAhead = 2
)

func newPowers(ch *markov.Chain) *powers {
	k := ch.K()
	p := &powers{base: basePower(ch), table: []power{identityPower(k)},
		limit: max(64, maxStoredBytes/(9*k*k+1)), far: map[int]power{}}
	if k >= pipeFrom && runtime.GOMAXPROCS(0) > 1 {
		p.bg = true
		p.table = append(make([]power, 0, p.limit), p.table[0])[:p.limit]
		p.n.Store(1)
		p.cond.L = &p.mu
	}
	return p
}

// step is the product after last, with its pattern; conv: it equals last,
// so every later power does too (every later product is the same float
// computation on the same input, hence the same result).
func (p *powers) step(last power, workers int) (next power, conv bool) {
	d, v := productW(last.d, p.base.d, workers)
	next = power{d: d, v: v, z: last.z}
	if !p.zFixed {
		next.z = mulPattern(last.z, p.base.z)
		p.zFixed = samePattern(next.z, last.z)
	}
	return next, samePower(next, last)
}

// count is the number of complete table entries.
func (p *powers) count() int {
	if p.bg {
		return int(p.n.Load())
	}
	return len(p.table)
}

// known returns the length of the table and its converged flag as the
// sequential computation holds them after the requests made so far.
func (p *powers) known() (int, bool) {
	if !p.bg {
		return len(p.table), p.converged
	}
	n := p.count()
	if p.asked <= n {
		return p.asked, false
	}
	// asked beyond the complete entries: production has stopped there
	p.mu.Lock()
	defer p.mu.Unlock()
	return n, p.converged
}

// produce computes table entries while n ≤ want (a search waiting for
// one computes part of it: stepShared), then runs post on the entries
// without it, then exits (a new one starts when more are wanted).
func (p *powers) produce() {
	for {
		p.mu.Lock()
		n := int(p.n.Load())
		if n > p.want || p.stopped {
			// nothing to produce: run post on the next entry without it
			if p.post != nil && p.posted < n {
				d, post := p.posted, p.post
				p.posted++
				p.mu.Unlock()
				post(d, p.table[d])
				continue
			}
			p.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		next, conv := p.stepShared(p.table[n-1])
		p.mu.Lock()
		if conv {
			p.converged, p.stopped = true, true
		} else {
			p.table[n] = next
			p.n.Store(int64(n + 1))
			p.stopped = n+1 >= p.limit
		}
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

// ensure makes table entries [0, d] complete, or production stopped
// (pipelined table).
func (p *powers) ensure(d int) {
	p.asked = max(p.asked, d+1)
	n := int(p.n.Load())
	if d < n && d+pipeAhead <= p.wanted {
		return
	}
	p.mu.Lock()
	if w := d + pipeAhead; w > p.want {
		p.want = w
		if !p.running && !p.stopped {
			p.running = true
			go p.produce()
		}
	}
	p.wanted = p.want
	for int(p.n.Load()) <= d && !p.stopped {
		if j := p.job; j != nil && j.left() {
			// help with the product in progress instead of idling
			p.mu.Unlock()
			j.work()
			p.mu.Lock()
			continue
		}
		p.cond.Wait()
	}
	p.mu.Unlock()
}

// stepShared is step with the product shared: its row chunks are posted
// (job) so that the search, when it waits for this power, computes some
// of them. Each entry is computed by one goroutine in the same order, so
// the product is the same as on one (gemm.go).
func (p *powers) stepShared(last power) (power, bool) {
	k, _ := last.d.Dims()
	ra, rb := last.d.RawMatrix(), p.base.d.RawMatrix()
	if k < parFrom || !haveKernel || ra.Stride != k || rb.Stride != k {
		return p.step(last, 1)
	}
	c := mat.NewDense(k, k, nil)
	j := &mulJob{c: c.RawMatrix().Data, a: ra.Data, b: rb.Data, k: k, chunks: min(8, k/6)}
	p.mu.Lock()
	p.job = j
	p.cond.Broadcast()
	p.mu.Unlock()
	j.work()
	for j.done.Load() < int32(j.chunks) {
		runtime.Gosched() // a chunk the search took is being finished
	}
	p.mu.Lock()
	p.job = nil
	p.mu.Unlock()
	next := power{d: c, v: denseRows(c), z: last.z}
	if !p.zFixed {
		next.z = mulPattern(last.z, p.base.z)
		p.zFixed = samePattern(next.z, last.z)
	}
	return next, samePower(next, last)
}

// mulJob is a product c = a·b whose row chunks are claimed by the
// goroutines that work on it (mulInto's partition into chunks).
type mulJob struct {
	c, a, b    []float64
	k, chunks  int
	next, done atomic.Int32
}

// left reports whether a chunk is still unclaimed.
func (j *mulJob) left() bool { return int(j.next.Load()) < j.chunks }

// work claims and computes chunks until none is left.
func (j *mulJob) work() {
	tiles := j.k / 6
	for {
		w := int(j.next.Add(1)) - 1
		if w >= j.chunks {
			return
		}
		r0, r1 := tiles*w/j.chunks*6, tiles*(w+1)/j.chunks*6
		if w == j.chunks-1 {
			r1 = j.k // the last chunk takes the rows below the last tile
		}
		mulRows(j.c, j.a, j.b, j.k, r0, r1)
		j.done.Add(1)
	}
}

func (p *powers) at(d int) power {
	if p.charge != nil {
		p.chargeFor(d)
	}
	if p.bg {
		p.ensure(d)
		n := p.count()
		if d < n {
			return p.table[d]
		}
		// production stopped before d: converged or at the cap
		p.mu.Lock()
		conv := p.converged
		p.mu.Unlock()
		if conv {
			return p.table[n-1]
		}
		return p.farAt(d, n)
	}
	for len(p.table) <= d && !p.converged && len(p.table) < p.limit {
		next, conv := p.step(p.table[len(p.table)-1], 0)
		if conv {
			p.converged = true
			break
		}
		p.table = append(p.table, next)
	}
	if d < len(p.table) {
		return p.table[d]
	}
	if p.converged {
		return p.table[len(p.table)-1]
	}
	return p.farAt(d, len(p.table))
}

// chargeFor charges the products that at(d) computes: the table's
// entries up to d, or farAt's products beyond the table (unless cached).
func (p *powers) chargeFor(d int) {
	k := float64(len(p.base.v))
	k3 := k * k * k
	if d < p.limit {
		if d >= p.charged {
			p.charge(k3 * float64(d+1-max(p.charged, 1)))
			p.charged = d + 1
		}
		return
	}
	if p.charged < p.limit {
		p.charge(k3 * float64(p.limit-max(p.charged, 1)))
		p.charged = p.limit
	}
	if _, ok := p.far[d]; !ok {
		p.charge(k3 * farProducts(d, p.limit))
	}
}

// farAt is P^d beyond the table's n entries (cached).
func (p *powers) farAt(d, n int) power {
	if r, ok := p.far[d]; ok {
		return r
	}
	// P^d = P^(L−1) · P^(d−L+1) with the second factor by squaring.
	L := n - 1
	r := p.table[L]
	e, sq := d-L, p.base
	for e > 0 {
		if e&1 == 1 {
			r = mul(r, sq)
		}
		e >>= 1
		if e > 0 {
			sq = mul(sq, sq)
		}
	}
	if len(p.far) > 64 {
		clear(p.far)
	}
	p.far[d] = r
	return r
}

// ratioBound folds an upper bound on p/q into a running maximum m (seen:
// m holds a value). sp, sq say whether p and q are structurally positive.
// Both impossible: no outcome, skipped. q impossible, p possible: +Inf.
// p impossible: ratio 0 (exactly, with no division: q may have
// underflowed to 0, and 0/0 would be NaN). Entries below tiny are bounded
// as described there.
func ratioBound(m float64, seen bool, p, q float64, sp, sq bool) (float64, bool) {
	switch {
	case !sp && !sq:
		return m, seen
	case !sq:
		return math.Inf(1), true
	case !sp:
		if !seen {
			return 0, true
		}
		return m, true // m ≥ 0
	case q < tiny:
		return math.Inf(1), true
	case p < tiny:
		p = 2 * tiny
	}
	if r := p / q; !seen || r > m {
		return r, true
	}
	return m, true
}
