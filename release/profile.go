package release

import (
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/query"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// Cell is one profile cell's release: the same fields as a window's.
type Cell struct {
	Cell string `json:"cell"`
	*Report
}

// ProfileReport is a profile (docs/math.md §4.15): one release of the
// query per cell of a fixed set (24 hours of the day, 7 days of the week
// or 168 hours of the week), every cell pooling the readings of every day
// and series whose wall-clock time falls in it, and the total guarantee
// of all of them: one ε, however many days it pools.
type ProfileReport struct {
	Kind  string `json:"profile_kind"`
	Zone  string `json:"time_zone"`
	Cells []Cell `json:"profile"`
	Total Total  `json:"total"`
	// Record is the whole profile as one release for the ledger: each
	// series' whole segment, as joint windows.
	Record *record.Release `json:"-"`
	// audit is the calibration the cells share, for WriteText.
	audit *Report
}

// CellOf is the profile cell of a reading at time t (seconds): its
// wall-clock hour in loc by the windows' rule (WindowOf), placed by the
// profile's kind.
func CellOf(prof *query.Profile, t float64, loc *time.Location) int {
	return prof.Cell(WindowOf(t, time.Hour, loc))
}

// planProfile is a profile of data up to the noise (see plan): every
// cell of prof gets Laplace noise of scale σ·L_c on every coordinate of
// its answer, σ the joint calibration of every series' whole pattern
// (jointBase) and L_c the query's sensitivity on the cell's readings.
// Docs/math.md §4.15 proves the whole profile ε-Pufferfish.
func planProfile(data *reading.Data, class *markov.Class, fitted bool, opts Options, prof *query.Profile, loc *time.Location) (*ProfileReport, func() error, error) {
	if data.Times == nil {
		return nil, nil, errors.New("a profile needs a time column (the cells are hours and days of the readings' times)")
	}
	if loc == nil {
		loc = time.UTC
	}
	sums := make([]*reading.Summary, len(prof.Cells()))
	for c := range sums {
		// Complete as the data: a cell of categorical readings sums to
		// its readings exactly, as a window does (issue 39)
		sums[c] = data.EmptySummary()
	}
	seqs := make([][]int, len(sums))
	for s, ts := range data.Times {
		if err := opts.ctxErr(); err != nil {
			return nil, nil, err
		}
		for c := range seqs {
			seqs[c] = seqs[c][:0]
		}
		for j, t := range ts {
			c := CellOf(prof, t, loc)
			seqs[c] = append(seqs[c], data.Seqs[s][j])
		}
		for c, sq := range seqs {
			if err := sums[c].AddSeries(sq, CellPattern(len(sq))); err != nil {
				return nil, nil, err
			}
		}
	}
	out, quilts, draw, err := planProfileSummaries(data.Summary(), sums, class, fitted, opts, prof, loc, opts.Cache)
	if err != nil {
		return nil, nil, err
	}
	out.Record = newRecord(out.Cells[0].Report, opts, class, segmentsOf(data, quilts))
	return out, draw, nil
}

// CellPattern is the pattern a cell's summary records for n readings of
// one series. A cell's readings are far apart in the series' chain (the
// same hour on every day): σ is the whole series' (jointBase), and a
// cell's summary only counts them, so its pattern is not used and is
// recorded as consecutive (a cell reports no missing steps).
func CellPattern(n int) mqm.Observation { return mqm.Consecutive(1, n) }

// planProfileSummaries is planProfile from summaries: whole, of every
// whole series (its patterns set σ), and one per cell of prof, in order.
func planProfileSummaries(whole *reading.Summary, sums []*reading.Summary, class *markov.Class, fitted bool, opts Options, prof *query.Profile, loc *time.Location, cache *ScaleCache) (*ProfileReport, map[string]*mqm.Quilt, func() error, error) {
	names := prof.Cells()
	if len(sums) != len(names) {
		return nil, nil, nil, fmt.Errorf("release: %d cell summaries for the %d cells of %s", len(sums), len(names), prof.Name())
	}
	if cache == nil {
		cache = NewScaleCache()
	}
	base, quilts, err := jointBase(whole, class, fitted, opts, cache)
	if err != nil {
		return nil, nil, nil, err
	}
	if base.Calibration.Method == calibratedMQM && opts.Method.MQM() {
		base.Calibration.Theorem = profileTheorem
		base.Guarantee += " for every cell of the profile together (docs/math.md §4.15)"
	}
	out := &ProfileReport{Kind: prof.Name(), Zone: loc.String(), audit: base}
	draws := make([]func() error, len(names))
	for c, sum := range sums {
		if err := opts.ctxErr(); err != nil {
			return nil, nil, nil, err
		}
		var r *Report
		if r, draws[c], err = fixedSigma(base, sum, class, fitted, opts); err != nil {
			if query.IsEmpty(err) {
				return nil, nil, nil, fmt.Errorf("profile %s, cell %s: %w (the cell has no readings; --query counts releases every cell)", prof.Name(), names[c], err)
			}
			return nil, nil, nil, fmt.Errorf("profile %s, cell %s: %w", prof.Name(), names[c], err)
		}
		out.Cells = append(out.Cells, Cell{Cell: names[c], Report: r})
	}
	out.Total = jointTotal(base, opts)
	if out.Total.Rule == jointRule {
		out.Total.Theorem = profileTheorem
	}
	out.audit.Protects = out.Cells[0].Protects
	return out, quilts, drawAll(draws), nil
}

// PrepareProfileSummaries is PrepareData of a profile from summaries, as
// a pipeline builds them: whole of every whole series (only its patterns
// are read), and cells by index of opts.Profile's cells (CellOf; a
// missing one has no readings), each series' readings in a cell added
// with CellPattern. Its Record is nil until RecordSeries names the series.
func PrepareProfileSummaries(whole *reading.Summary, cells map[int]*reading.Summary, class *markov.Class, fitted bool, opts Options, loc *time.Location) (*Pending, error) {
	prof, err := query.ParseProfile(opts.Profile)
	if err != nil {
		return nil, err
	}
	if err := checkProfile(prof, len(class.States), opts.Limits); err != nil {
		return nil, err
	}
	if loc == nil {
		loc = time.UTC
	}
	sums := make([]*reading.Summary, len(prof.Cells()))
	for c := range sums {
		if sums[c] = cells[c]; sums[c] == nil {
			sums[c] = reading.NewSummary(whole.States, whole.Levels)
			sums[c].Complete = whole.Complete // as planProfile's empty cell
		}
	}
	for c := range cells {
		if c < 0 || c >= len(sums) {
			return nil, fmt.Errorf("release: cell %d of %s, which has %d", c, prof.Name(), len(sums))
		}
	}
	out, quilts, draw, err := planProfileSummaries(whole, sums, class, fitted, opts, prof, loc, NewScaleCache())
	if err != nil {
		return nil, err
	}
	return &Pending{Class: class, out: out, draw: draw, opts: opts, quilts: nonNil(quilts)}, nil
}

// profileTheorem names the theorem behind a profile priced by the Markov
// Quilt Mechanism.
const profileTheorem = "[SWC17] Thm 4.3 for the vector of every profile cell's answer (docs/math.md §4.15)"

// WriteText prints every cell's answer, the calibration they share and
// the total guarantee.
func (pr *ProfileReport) WriteText(out io.Writer, extra ...[2]string) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	first := pr.Cells[0].Report
	numeric := len(first.Histogram) > 0 && first.Histogram[0].Range != ""
	switch {
	case first.Mean != nil:
		fmt.Fprintf(w, "cell\tprivate mean\n")
	case numeric:
		fmt.Fprintf(w, "cell\tlevel\trange\tprivate %s\n", first.Query)
	default:
		fmt.Fprintf(w, "cell\tstate\tprivate %s\n", first.Query)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range pr.Cells {
		lo, hi = min(lo, c.PerBinScale), max(hi, c.PerBinScale)
		if c.Mean != nil {
			fmt.Fprintf(w, "%s\t%.6g\n", c.Cell, *c.Mean)
			continue
		}
		for _, b := range c.Histogram {
			if numeric {
				fmt.Fprintf(w, "%s\t%s\t%s\t%.6g\n", c.Cell, b.State, b.Range, b.Value)
			} else {
				fmt.Fprintf(w, "%s\t%s\t%.6g\n", c.Cell, b.State, b.Value)
			}
		}
	}
	a := pr.audit
	if a == nil {
		a = first // read back from JSON: the cells carry the calibration
	}
	scale := fmt.Sprintf("%.6g", lo)
	if hi != lo {
		scale = fmt.Sprintf("%.6g–%.6g by cell (L of each cell's readings)", lo, hi)
	}
	fmt.Fprintf(w, "\nprofile\t%s (%s), %d cells\nguarantee\t%s\nprotects\t%s\nmethod\t%s, ε = %g\nsigma\t%.6g (1-Lipschitz), per-bin Laplace scale %s\n",
		pr.Kind, pr.Zone, len(pr.Cells), a.Guarantee, a.Protects, a.Method, a.Epsilon, a.Sigma, scale)
	if c := a.Calibration; c != nil {
		fmt.Fprintf(w, "calibration\t%s: %s (%s)\n", c.Method, c.Why, c.Theorem)
	}
	fmt.Fprintf(w, "data\t%d series, %d readings, lengths %d–%d, %d missing readings inside the series\n", a.Sequences, a.Observations, a.MinLength, a.MaxLength, a.Missing)
	if a.TimeStep != nil {
		fmt.Fprintf(w, "time step\t%g (%s)\n", a.TimeStep.Step, a.TimeStep.Source)
	}
	fmt.Fprintf(w, "class\t%s\n", a.Class.Coverage)
	fmt.Fprintf(w, "total\tε = %.6g by %s (%s)\n", pr.Total.Float(), pr.Total.Rule, pr.Total.Theorem)
	for _, e := range extra {
		fmt.Fprintf(w, "%s\t%s\n", e[0], e[1])
	}
	for _, m := range first.Warnings {
		fmt.Fprintf(w, "warning\t%s\n", m)
	}
	return w.Flush()
}

// checkProfile refuses a profile over the cell limit before any work.
func checkProfile(prof *query.Profile, bins int, l Limits) error {
	if err := l.CheckStates(bins); err != nil {
		return err
	}
	cells := len(prof.Cells())
	if cells > l.windows() {
		return &LimitError{Limit: "windows", Max: l.windows(), Windows: cells, Bins: bins}
	}
	if cells*bins > l.cells() {
		return &LimitError{Limit: "cells", Max: l.cells(), Windows: cells, Bins: bins}
	}
	return nil
}
