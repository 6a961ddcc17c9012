package hmm

import (
	"fmt"
	"io"
	"math/big"
	"runtime"
	"sync"

	"github.com/pufferfish-privacy/pufferfish/internal/progress"
)

// DPMechanism is a mechanism that runs once on one of Inputs inputs and
// reports one of Outputs, with the differential-privacy secret pairs:
// point masses on two neighbouring inputs (the adversary knows everything
// but which of the two it is). As an HMM it is the OneShot model with one
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
	// Progress, when not nil, receives a progress bar of Loss's blocks.
	Progress io.Writer
}

// Size limits of a DPMechanism: Model refuses more than MaxModelPairs
// secret pairs (each is a Secret in memory), Loss more than MaxStreamed
// (pair, output) ratios.
const (
	MaxModelPairs = 1 << 22
	MaxStreamed   = 1 << 29
)

// pairs counts the neighbour pairs.
func (d *DPMechanism) pairs() int64 {
	var n int64
	for x := range d.Inputs {
		d.Neighbours(x, func(int) { n++ })
	}
	return n
}

// Model returns the mechanism as a one-shot HMM (OneShot) with one
// point-mass secret pair per neighbour pair, in the Neighbours order, named
// "x vs y". It refuses more than MaxModelPairs pairs.
func (d *DPMechanism) Model() (*Model, []Secret, error) {
	if p := d.pairs(); p > MaxModelPairs {
		return nil, nil, fmt.Errorf("%w: %d secret pairs exceed the %d an HMM model holds; at length 1 the streaming solver needs no model", ErrTooLarge, p, MaxModelPairs)
	}
	names := make([]string, d.Inputs)
	for x := range names {
		names[x] = d.Name(x)
	}
	model := OneShot(names, d.Outputs, d.Dist())
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
	if work := float64(pairs) * float64(len(d.Outputs)); work > MaxStreamed {
		return Result{}, fmt.Errorf("%w: %d neighbour pairs × %d outputs = %.3g ratios exceed the %d one verification computes", ErrTooLarge, pairs, len(d.Outputs), work, MaxStreamed)
	}
	block := dpBlock
	nblocks := (d.Inputs + block - 1) / block
	chunks := make([]dpChunk, nblocks)
	bar := progress.New(d.Progress, "pairs", nblocks)
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
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
	for b := range nblocks {
		next <- b
	}
	close(next)
	wg.Wait()
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
	if p.DP != nil && n == 1 {
		return p.DP.Evaluate(eps)
	}
	if err := p.Materialise(); err != nil {
		return Evaluation{}, err
	}
	return Evaluate(p.Model, p.Secrets, n, arith, eps)
}

// Obs names the observations that witnesses index.
func (p *Problem) Obs() []string {
	if p.Model != nil {
		return p.Model.Obs
	}
	return append(append([]string(nil), p.DP.Outputs...), "end")
}
