package tpl

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// prep is one chain's kernels and constants, which do not depend on the
// budgets: built on first use and kept, so Calibrate's bisection builds
// them once instead of at every evaluation (at k states a kernel costs
// about k³ log k and holds k³ prefix sums).
type prep struct {
	ch  *markov.Chain
	st  *stopper
	fk  *kernel // the forward kernel P
	rev *kernel // the time reversal P* (stationary start; a given start's limit)
	pi  []float64
	// orders: the backward kernels' column orders of a given start
	orders [][]int
	// a given start's primitive power m of P and 1 − τ(P^m) (m = 0: none)
	primDone bool
	m        int
	gapM     float64
}

func newPrep(ch *markov.Chain, st *stopper) *prep { return &prep{ch: ch, st: st} }

func (p *prep) forward() *kernel {
	if p.fk == nil {
		p.fk = newKernel(rowsOf(p.ch.P), nil, 0, p.st)
	}
	return p.fk
}

func (p *prep) stationary() ([]float64, error) {
	if p.pi == nil {
		p.st.tick(p.ch.K() * p.ch.K() * p.ch.K())
		pi, err := p.ch.Stationary()
		if err != nil {
			return nil, fmt.Errorf("tpl: %w", err)
		}
		p.pi = pi
	}
	return p.pi, nil
}

func (p *prep) reversal() (*kernel, error) {
	if p.rev == nil {
		pi, err := p.stationary()
		if err != nil {
			return nil, err
		}
		p.rev = newKernel(Reversal(p.ch.P, pi), nil, reversalErr(p.ch.K()), p.st)
	}
	return p.rev, nil
}

func (p *prep) columnOrders() [][]int {
	if p.orders == nil {
		p.orders = columnOrders(p.ch.P, p.st)
	}
	return p.orders
}

func (p *prep) primitive() (int, float64) {
	if !p.primDone {
		m, Pm := primitivePower(p.ch.P, p.st)
		p.m, p.primDone = m, true
		if m > 0 {
			_, p.gapM = birkhoff(Pm)
		}
	}
	return p.m, p.gapM
}
