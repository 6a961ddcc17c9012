// Package query is the statistics a release answers: each query declares
// what one reading can change — its L1 sensitivity, the Lipschitz
// constant of the Markov Quilt Mechanism — and the shape of its answer
// (docs/math.md §4.15).
//
// # Guarantee
//
// A query's Sensitivity bounds, in L1, how far its Answer on a group of
// readings moves when one reading of the group changes (to another
// state, or to or from a reading of unknown value), computed from the
// group's public size and levels only and rounded up. Adding independent
// Laplace noise of scale σ·Sensitivity to every coordinate of the answer
// is then (1/σ)-DP per reading, so one calibration σ — the Markov Quilt
// Mechanism's ([SWC17] Thm 4.3) or the temporal leakage bound's at
// R = e^{1/σ} (docs/math.md §8.6) — prices every query, and a new query
// is correct as soon as its sensitivity is.
package query

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pufferfish-privacy/pufferfish/noise"
)

// Shape is the shape of a query's answer.
type Shape int

const (
	// Histogram is one number per bin (state or level).
	Histogram Shape = iota
	// Scalar is one number.
	Scalar
)

// Group is what a query reads of one group of readings (the whole data,
// a window, a profile cell): the readings per bin and their number. N
// counts every reading, those of unknown value too (they are in no bin),
// so it is part of the public observation pattern; Values are the level
// values of numeric readings (nil for categorical states).
type Group struct {
	Counts []float64
	N      int
	Values []float64
}

// Query is one statistic of a group of readings.
type Query interface {
	// Name is the query's name in flags, JSON and the ledger.
	Name() string
	// Shape is the shape of Answer.
	Shape() Shape
	// Sensitivity is the L1 distance Answer can move when one reading of
	// g changes, from g's public size and levels only, never below the
	// true bound.
	Sensitivity(g Group) (float64, error)
	// Answer is the query's true value on g (len(g.Counts) numbers for a
	// Histogram, one for a Scalar). It is private: only a noisy release
	// of it is ever printed.
	Answer(g Group) ([]float64, error)
}

// Names are the queries Parse knows, in the order of the help text.
var Names = []string{"counts", "relative", "mean"}

// Parse is the query named s, one of Names ("": counts): the one check
// of a query's name for the CLI, the service, streams and the Beam
// pipeline.
func Parse(s string) (Query, error) {
	switch s {
	case "", "counts":
		return Counts, nil
	case "relative":
		return Relative, nil
	case "mean":
		return Mean, nil
	}
	return nil, fmt.Errorf("query %q: want counts, relative or mean", s)
}

// The queries.
var (
	// Counts is the count histogram: one reading moves one count from a
	// bin to another, L = 2 (to or from an unknown value, 1).
	Counts Query = counts{}
	// Relative is the relative-frequency histogram (counts over N, the
	// readings of the group): L = 2/N.
	Relative Query = relative{}
	// Mean is the mean level value of numeric readings, a reading of
	// unknown value counted at the midpoint of the level values: one
	// reading changes it by at most (max − min level value)/N, to or from
	// unknown by half that (docs/math.md §4.8, "missing values").
	Mean Query = mean{}
	// Transitions is the matrix of transition counts between readings
	// one step apart, flattened row by row (k² cells; Group.Counts holds
	// them, Group.N the pattern's pairs): one reading is in at most two
	// transitions, each moved from one cell to another, L = 4
	// (docs/math.md §4.13). puff synth releases it.
	Transitions Query = transitions{}
)

type transitions struct{}

func (transitions) Name() string                       { return "transitions" }
func (transitions) Shape() Shape                       { return Histogram }
func (transitions) Sensitivity(Group) (float64, error) { return 4, nil }
func (transitions) Answer(g Group) ([]float64, error)  { return slices.Clone(g.Counts), nil }

type counts struct{}

func (counts) Name() string                       { return "counts" }
func (counts) Shape() Shape                       { return Histogram }
func (counts) Sensitivity(Group) (float64, error) { return 2, nil }
func (counts) Answer(g Group) ([]float64, error)  { return slices.Clone(g.Counts), nil }

type relative struct{}

func (relative) Name() string { return "relative" }
func (relative) Shape() Shape { return Histogram }

func (relative) Sensitivity(g Group) (float64, error) {
	if g.N < 1 {
		return 0, errEmpty
	}
	// one reading moves 1/N from one bin to another: 2/N in L1
	return divUp(2, float64(g.N)), nil
}

func (relative) Answer(g Group) ([]float64, error) {
	if g.N < 1 {
		return nil, errEmpty
	}
	out := slices.Clone(g.Counts)
	for i := range out {
		out[i] /= float64(g.N)
	}
	return out, nil
}

type mean struct{}

func (mean) Name() string { return "mean" }
func (mean) Shape() Shape { return Scalar }

// errNoLevels is the mean asked of categorical readings.
var errNoLevels = errors.New("the mean query needs numeric readings with levels")

// errEmpty is a relative frequency or mean of a group without readings.
var errEmpty = errors.New("no readings: relative frequencies and the mean are undefined")

func (mean) Sensitivity(g Group) (float64, error) {
	if g.Values == nil {
		return 0, errNoLevels
	}
	if g.N < 1 {
		return 0, errEmpty
	}
	lo, hi := slices.Min(g.Values), slices.Max(g.Values)
	spread := hi - lo
	if spread > 0 && math.FMA(-1, hi, spread+lo) < 0 {
		spread = math.Nextafter(spread, math.Inf(1)) // the subtraction rounded down
	}
	return divUp(spread, float64(g.N)), nil
}

func (mean) Answer(g Group) ([]float64, error) {
	if g.Values == nil {
		return nil, errNoLevels
	}
	if g.N < 1 {
		return nil, errEmpty
	}
	N := float64(g.N)
	lv := g.Values
	sum, known := 0.0, 0.0
	for i, c := range g.Counts {
		sum += c * lv[i]
		known += c
	}
	if unknown := N - known; unknown > 0 {
		sum += unknown * (slices.Min(lv) + (slices.Max(lv)-slices.Min(lv))/2)
	}
	return []float64{sum / N}, nil
}

// IsEmpty reports whether err is a query refused on a group without
// readings.
func IsEmpty(err error) bool { return errors.Is(err, errEmpty) }

// divUp is a/n rounded up to the next float64 when the quotient is not
// exact: a sensitivity must never be understated.
func divUp(a, n float64) float64 {
	q := a / n
	if math.FMA(q, n, -a) < 0 {
		q = math.Nextafter(q, math.Inf(1))
	}
	return q
}

// Priced is a query's answer on one group with its sensitivity: what one
// draw at the calibration's σ releases (docs/math.md §4.15).
type Priced struct {
	Query       Query
	Sensitivity float64
	answer      []float64 // private: only Draw's noisy copy leaves
}

// Price computes q's answer and sensitivity on g.
func Price(q Query, g Group) (*Priced, error) {
	l, err := q.Sensitivity(g)
	if err != nil {
		return nil, err
	}
	a, err := q.Answer(g)
	if err != nil {
		return nil, err
	}
	return &Priced{Query: q, Sensitivity: l, answer: a}, nil
}

// Coordinates is the number of values Draw releases.
func (p *Priced) Coordinates() int { return len(p.answer) }

// Scale is the per-coordinate Laplace scale at σ: σ·L rounded up
// (noise.ScaleFor).
func (p *Priced) Scale(sigma float64) float64 { return noise.ScaleFor(sigma, p.Sensitivity) }

// Draw releases the answer with noise at least as private as Laplace of
// Scale(sigma) on every coordinate, from src (nil: crypto/rand): the one
// draw of a query ([SWC17] Thm 4.3, coordinate-wise).
func (p *Priced) Draw(src noise.Source, sigma float64) ([]float64, error) {
	return noise.NewLaplace(src).Release(p.answer, sigma, p.Sensitivity)
}
