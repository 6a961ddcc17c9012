package hmm

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/big"
	"runtime"
	"sync"

	"github.com/pufferfish-privacy/pufferfish/internal/progress"
)

// DPMechanism is a mechanism that runs once on one of Inputs inputs and
// reports one of Outputs, with the differential-privacy secret pairs:
// point masses on two neighbouring inputs (the adversary knows everything
// but which of the two it is). As an HMM it is the oneShot model with one
// point-mass Secret per neighbour pair (Model); Loss computes the same
// exact answer without building either, streaming the pairs.
type DPMechanism struct {
	Inputs  int
	Outputs []string
	// Name names input x in reports and witnesses.
	Name func(x int) string
	// Dist returns a function giving input x's output distribution
	// (len(Outputs) rationals summing to 1). Every goroutine calls Dist
	// once, so the function it returns may keep unsynchronised state (a
	// memo). Entries may be shared between inputs and are read only:
	// sharing is what lets Loss compare each distinct pair of values once.
	// A returned slice must stay as it is after later calls (Loss holds
	// input x's while it asks for its neighbours').
	Dist func() func(x int) []*big.Rat
	// Neighbours calls yield(y) for the neighbours y listed under x: every
	// unordered neighbour pair is listed under exactly one of its inputs,
	// and the order (x ascending, then the calls' order) is the secrets'
	// order.
	Neighbours func(x int, yield func(y int))
	// Pairs, when not 0, is the number of neighbour pairs Neighbours
	// lists (then Loss and Model do not count them first).
	Pairs int64
	// Progress, when not nil, receives a progress bar of Loss's blocks.
	Progress io.Writer
	// Context, when not nil, stops Loss between blocks when it ends.
	Context context.Context
	// Interned, when not nil, is Dist and Neighbours by interned value:
	// a faster equivalent that Loss uses instead (Model still uses Dist
	// and Neighbours). Every goroutine calls it once.
	Interned func() DPInterned
}

// DPInterned gives a mechanism's distributions as floats (internFloat)
// and, only when Loss needs the exact values, as small integer ids, one
// per distinct *big.Rat, so that Loss compares floats and ids instead of
// hashing or multiplying rationals.
type DPInterned struct {
	// Visit calls self with input x's distribution as floats (one per
	// output, each internFloat of the rational), then yield(y, f) for
	// each neighbour y listed under x, in Neighbours' order, with y's.
	// The slices are read only and valid during the call only.
	Visit func(x int, self func(f []float64), yield func(y int, f []float64))
	// IDs returns, during a yield, the ids of x's and y's rationals for
	// output o.
	IDs func(o int) (p, q int32)
	// Value returns the rational of an id: the same id always gives the
	// same pointer, and the rational Dist gives at that place.
	Value func(id int32) *big.Rat
}

// internFloat is r as DPInterned's floats: 0 exactly when r is 0, NaN
// when r is below 2⁻¹⁰⁰⁰ (then Loss compares exactly), otherwise the
// float64 nearest r.
func internFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	if r.Sign() != 0 && !(f >= 0x1p-1000) {
		return math.NaN()
	}
	return f
}

// Size limits of a DPMechanism: Model refuses more than maxModelPairs
// secret pairs (each is a Secret in memory), Loss more than MaxStreamed
// (pair, output) ratios.
const (
	maxModelPairs = 1 << 22
	MaxStreamed   = 1 << 29
	// MaxInterned is MaxStreamed for mechanisms with Interned, whose
	// ratios cost a few nanoseconds each: Noisy Max's 15 queries (3.2·10⁹
	// ratios) took 17 s of cpu (2026-11-25, BENCHMARKS.md), so 2³² take
	// well under a minute.
	MaxInterned = 1 << 32
)

// pairs counts the neighbour pairs.
func (d *DPMechanism) pairs() int64 {
	if d.Pairs != 0 {
		return d.Pairs
	}
	var n int64
	for x := range d.Inputs {
		d.Neighbours(x, func(int) { n++ })
	}
	return n
}

// Model returns the mechanism as a one-shot HMM (oneShot) with one
// point-mass secret pair per neighbour pair, in the Neighbours order, named
// "x vs y". It refuses more than maxModelPairs pairs.
func (d *DPMechanism) Model() (*Model, []Secret, error) {
	if p := d.pairs(); p > maxModelPairs {
		return nil, nil, fmt.Errorf("%w: %d secret pairs exceed the %d an HMM model holds; at length 1 the streaming solver needs no model", errTooLarge, p, maxModelPairs)
	}
	names := make([]string, d.Inputs)
	for x := range names {
		names[x] = d.Name(x)
	}
	model := oneShot(names, d.Outputs, d.Dist())
	var secs []Secret
	for x := range d.Inputs {
		d.Neighbours(x, func(y int) {
			secs = append(secs, Secret{Name: names[x] + " vs " + names[y], PiAt: x, TauAt: y})
		})
	}
	return model, secs, nil
}

// dpBlock is how many inputs a worker takes at a time (a variable so
// tests can make blocks small).
var dpBlock = 1 << 12

// dpChunk is one worker's answer for a block of inputs: the largest ratio
// a/b (or ∞) and its first occurrence in the secrets' order.
type dpChunk struct {
	have, inf bool
	num, den  *big.Int
	x, y, out int
	larger    string
	explored  int64
}

// Loss is the exact privacy loss of the mechanism over its DP pairs: the
// same Result as Loss(d.Model()) at length 1 (ratio, the first maximising
// pair and output in the secrets' order, explored = the (pair, output)
// ratios not 0/0), computed without materialising the model or the pairs.
//
// Inputs are cut into blocks handed out in order to GOMAXPROCS workers.
// Each worker remembers the pairs of values (by pointer) it has already
// compared: a repeated pair cannot beat, nor come before, its first
// occurrence, which was in an earlier block of the same worker. Blocks are
// merged in order, so the witness is the first in the secrets' order
// whatever the scheduling.
func (d *DPMechanism) Loss() (Result, error) {
	if d.Inputs < 1 || len(d.Outputs) == 0 {
		return Result{}, fmt.Errorf("hmm: a mechanism needs inputs and outputs")
	}
	pairs := d.pairs()
	if pairs == 0 {
		return Result{}, fmt.Errorf("hmm: no secret pair")
	}
	limit, limitName := float64(MaxStreamed), "MaxStreamed"
	if d.Interned != nil {
		limit, limitName = MaxInterned, "MaxInterned"
	}
	if work := float64(pairs) * float64(len(d.Outputs)); work > limit {
		return Result{}, fmt.Errorf("%w: %d neighbour pairs × %d outputs = %.3g ratios exceed the %.0f one verification computes (hmm.%s)", errTooLarge, pairs, len(d.Outputs), work, limit, limitName)
	}
	block := dpBlock
	nblocks := (d.Inputs + block - 1) / block
	chunks := make([]dpChunk, nblocks)
	bar := progress.New(d.Progress, "pairs", nblocks)
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		if d.Interned != nil {
			go func() {
				defer wg.Done()
				d.internedWorker(d.Interned(), block, chunks, next, bar)
			}()
			continue
		}
		go func() {
			defer wg.Done()
			dist := d.Dist()
			seen := map[[2]*big.Rat]struct{}{}
			for b := range next {
				c := &chunks[b]
				for x := b * block; x < min((b+1)*block, d.Inputs); x++ {
					dx := dist(x)
					d.Neighbours(x, func(y int) {
						dy := dist(y)
						for o := range d.Outputs {
							c.offer(x, y, o, dx[o], dy[o], seen)
						}
					})
				}
				bar.Step()
				// A worker's memory of compared pairs is bounded: clearing it
				// only costs repeated comparisons.
				if len(seen) > 1<<21 {
					clear(seen)
				}
			}
		}()
	}
	ctx := d.Context
	if ctx == nil {
		ctx = context.Background()
	}
	for b := range nblocks {
		if ctx.Err() != nil {
			break
		}
		next <- b
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("verification stopped: %w", context.Cause(ctx))
	}
	var best *dpChunk
	var explored int64
	for i := range chunks {
		c := &chunks[i]
		explored += c.explored
		if c.have && (best == nil || c.beats(best)) {
			best = c
		}
	}
	r := Result{Explored: explored}
	if best == nil {
		return Result{}, fmt.Errorf("hmm: every output has probability zero under every pair")
	}
	r.Witness = []int{best.out}
	r.Secret = d.Name(best.x) + " vs " + d.Name(best.y)
	r.Larger = best.larger
	r.setRatio(best.inf, best.num, best.den)
	return r, nil
}

// beats reports whether chunk c's best is strictly larger than b's.
func (c *dpChunk) beats(b *dpChunk) bool {
	switch {
	case b.inf:
		return false
	case c.inf:
		return true
	}
	return new(big.Int).Mul(c.num, b.den).Cmp(new(big.Int).Mul(b.num, c.den)) > 0
}

// offer takes the ratio of P(out | x) = p and P(out | y) = q, in the
// secrets' order within the chunk.
func (c *dpChunk) offer(x, y, out int, p, q *big.Rat, seen map[[2]*big.Rat]struct{}) {
	if p.Sign() == 0 && q.Sign() == 0 {
		return // as Loss: an impossible output is no sequence
	}
	c.explored++
	if c.inf {
		return
	}
	key := [2]*big.Rat{p, q}
	if _, ok := seen[key]; ok {
		return
	}
	seen[key] = struct{}{}
	c.compare(x, y, out, p, q)
}

// offerKey is offer with the pairs already compared remembered by a key
// (one per pair of values).
func (c *dpChunk) offerKey(x, y, out int, p, q *big.Rat, seen map[uint64]struct{}, key uint64) {
	if p.Sign() == 0 && q.Sign() == 0 {
		return
	}
	c.explored++
	if c.inf {
		return
	}
	if _, ok := seen[key]; ok {
		return
	}
	seen[key] = struct{}{}
	c.compare(x, y, out, p, q)
}

// compare records the ratio of p and q if it beats the chunk's best.
func (c *dpChunk) compare(x, y, out int, p, q *big.Rat) {
	larger, hi, lo := "pi", p, q
	if p.Cmp(q) < 0 {
		larger, hi, lo = "tau", q, p
	}
	record := func() {
		c.have, c.x, c.y, c.out, c.larger = true, x, y, out, larger
	}
	if lo.Sign() == 0 {
		c.inf = true
		record()
		return
	}
	// hi/lo = (hi.num·lo.den)/(hi.den·lo.num)
	num := new(big.Int).Mul(hi.Num(), lo.Denom())
	den := new(big.Int).Mul(hi.Denom(), lo.Num())
	if c.have && new(big.Int).Mul(num, c.den).Cmp(new(big.Int).Mul(c.num, den)) <= 0 {
		return
	}
	c.num, c.den = num, den
	record()
}

// internedWorker is a Loss worker on interned values. A pair whose
// float ratio (DPInterned's floats: correctly rounded, normal) is below
// the chunk's best B by more than the floats' error is smaller exactly,
// and is dropped without touching a rational. With u = 2⁻⁵³, fp =
// p(1+e₁), fq = q(1+e₂), bf = fl(fl(B)·fl(1 − δ)) and |eᵢ| ≤ u,
// fp < fl(bf·fq) gives p(1+e₁) < B(1−δ)(1+u)·q(1+e₂)(1+e₃)(1+e₄)(1+e₅),
// so p/q < B(1−δ)(1+u)⁵/(1−u) < B(1−δ)(1+6.1u) < B for δ = 2·10⁻¹⁵ >
// 6.1u ≈ 6.8·10⁻¹⁶ (the same for q/p); the others go to
// offer exactly as on the Dist path, with the pairs already compared
// remembered by their ids.
func (d *DPMechanism) internedWorker(in DPInterned, block int, chunks []dpChunk, next <-chan int, bar *progress.Bar) {
	seen := map[uint64]struct{}{}
	var c *dpChunk
	var bestF float64 // c's best ratio as a float, lowered by the margin
	var x int
	var fx []float64
	self := func(f []float64) { fx = f }
	yield := func(y int, fy []float64) {
		fy = fy[:len(fx)]
		bf := bestF
		var dropped int64
		for o, fq := range fy {
			fp := fx[o]
			// fp/fq and fq/fp both below bf, without a division: false
			// for 0, NaN and while there is no best (bf = 0)
			if fp < bf*fq && fq < bf*fp {
				dropped++
				continue
			}
			if fp == 0 && fq == 0 {
				continue // 0/0: not explored
			}
			if c.inf {
				c.explored++
				continue
			}
			p, q := in.IDs(o)
			key := uint64(uint32(p))<<32 | uint64(uint32(q))
			num := c.num
			c.offerKey(x, y, o, in.Value(p), in.Value(q), seen, key)
			if c.inf {
				bestF, bf = 0, 0
			} else if c.have && c.num != num {
				f, _ := new(big.Rat).SetFrac(c.num, c.den).Float64()
				bestF = f * (1 - 2e-15)
				bf = bestF
			}
		}
		c.explored += dropped
	}
	for b := range next {
		c = &chunks[b]
		bestF = 0
		for x = b * block; x < min((b+1)*block, d.Inputs); x++ {
			in.Visit(x, self, yield)
		}
		bar.Step()
		if len(seen) > 1<<21 {
			clear(seen)
		}
	}
}

// Evaluate is Evaluate for the mechanism at length 1 (longer sequences of
// a one-shot model add only its "end" symbol): always exact, as the
// streaming solver is faster than the float path on these models.
func (d *DPMechanism) Evaluate(eps *Epsilon) (Evaluation, error) {
	r, err := d.Loss()
	if err != nil {
		return Evaluation{}, err
	}
	ev := Evaluation{Exact: &r, Streamed: true}
	if eps != nil {
		ev.Verdict = verdictOf(r, *eps)
	}
	return ev, nil
}

// Problem is what Evaluate checks: a model with its secret pairs, or a
// DP mechanism (whose model is built only when needed).
type Problem struct {
	Model   *Model
	Secrets []Secret
	DP      *DPMechanism
}

// Materialise builds Model and Secrets from DP when they are not built
// yet (DPMechanism.Model's size limit applies).
func (p *Problem) Materialise() error {
	if p.Model != nil || p.DP == nil {
		return nil
	}
	var err error
	p.Model, p.Secrets, err = p.DP.Model()
	return err
}

// Evaluate evaluates the problem over sequences of lengths 1..n: a DP
// mechanism at length 1 with the streaming exact solver (whatever the
// arithmetic: it is faster than the float path there), anything else with
// Evaluate on the model.
func (p *Problem) Evaluate(n int, arith Arithmetic, eps *Epsilon) (Evaluation, error) {
	return p.EvaluateWith(unlimited, n, arith, eps)
}

// EvaluateWith is Evaluate under o (EvaluateWith; a DP mechanism's
// streaming stops between blocks when o's context ends, its size bounded
// by MaxStreamed).
func (p *Problem) EvaluateWith(o Options, n int, arith Arithmetic, eps *Epsilon) (Evaluation, error) {
	if p.DP != nil && n == 1 {
		p.DP.Context = o.Context
		return p.DP.Evaluate(eps)
	}
	if err := p.Materialise(); err != nil {
		return Evaluation{}, err
	}
	return EvaluateWith(o, p.Model, p.Secrets, n, arith, eps)
}

// Obs names the observations that witnesses index.
func (p *Problem) Obs() []string {
	if p.Model != nil {
		return p.Model.Obs
	}
	return append(append([]string(nil), p.DP.Outputs...), "end")
}
