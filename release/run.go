package release

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/query"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// Request is one release as a user asks for it — the same options for the
// CLI, the service and the pipeline: how to read the data, which class
// (given, or fitted over declared states), and the mechanism.
type Request struct {
	CSV       reading.CSVOptions
	Class     *markov.Class // the class Θ; nil with Fit
	Fit       bool          // fit one chain to the data (stationary start) over CSV.States
	Smoothing float64       // additive smoothing of the fit
	Options
}

// Run reads the data from r (named name in errors), settles the class and
// releases the histogram. The bins are the declared states: the class's, or
// CSV.States with Fit (which must then be given); a reading of another state
// is an error naming its line. It returns the report and the class used.
func Run(r io.Reader, name string, req Request) (*Report, *markov.Class, error) {
	p, err := Prepare(r, name, req, 0)
	if err != nil {
		return nil, nil, err
	}
	out, err := p.Draw()
	if err != nil {
		return nil, nil, err
	}
	return out.(*Report), p.Class, nil
}

// RunWindows is Run with one release per calendar window of the given
// width (releaseWindows).
func RunWindows(r io.Reader, name string, req Request, width time.Duration) (*WindowedReport, error) {
	if width <= 0 {
		return nil, fmt.Errorf("window %v: want a positive duration", width)
	}
	p, err := Prepare(r, name, req, width)
	if err != nil {
		return nil, err
	}
	out, err := p.Draw()
	if err != nil {
		return nil, err
	}
	return out.(*WindowedReport), nil
}

// Output is a drawn release: a *Report, a *WindowedReport for windows or
// a *ProfileReport for a profile.
// WriteText prints it (extra lines, such as the ledger's, at the end).
type Output interface {
	WriteText(w io.Writer, extra ...[2]string) error
}

// Pending is a release computed up to its noise: its scales, guarantee and
// ledger record are known, and no noise has been drawn yet. A ledger
// checks Record against its budget and only then calls Draw, so a refused
// release draws nothing.
type Pending struct {
	Class  *markov.Class   // the class Θ the noise is calibrated for
	Record *record.Release // what the ledger records
	out    Output
	draw   func() error
	drawn  bool
	// from a summary: the options and each pattern's active quilt, for
	// RecordSeries (nil quilts: not prepared from a summary, or per window)
	opts   Options
	quilts map[string]*mqm.Quilt
}

// RecordSeries sets the Record of a release prepared from a summary
// (PrepareSummary, PrepareWindowSummaries with joint windows, or
// PrepareProfileSummaries): the
// record PrepareData writes for the same data, one segment per series at
// its observation pattern with that pattern's active quilt. A summary
// names no series; pats does (reading.ReadSummary returns them, a pipeline
// gathers them).
func (p *Pending) RecordSeries(pats []reading.SeriesPattern) error {
	if p.quilts == nil {
		return errors.New("release: only a release prepared from a summary, with joint windows if any, is recorded series by series")
	}
	var r *Report
	switch out := p.out.(type) {
	case *Report:
		r = out
	case *WindowedReport:
		r = out.Windows[0].Report // the record of joint windows: every series' whole segment
	case *ProfileReport:
		r = out.Cells[0].Report // as joint windows
	}
	segs := make([]record.Segment, len(pats))
	for i, pt := range pats {
		segs[i] = segment(pt.Series, pt.Observation, p.quilts)
	}
	p.Record = newRecord(r, p.opts, p.Class, segs)
	if rep, ok := p.out.(*Report); ok {
		rep.Record = p.Record
	}
	return nil
}

// Prepare reads the data (as Run), settles the class and computes the
// release up to its noise; width > 0 asks for one release per calendar
// window of that width (releaseWindows, in req.CSV.Location).
func Prepare(r io.Reader, name string, req Request, width time.Duration) (*Pending, error) {
	if width == 0 && req.Origin == nil && req.Profile == "" && (req.Fit || req.Class == nil || newPossible(req.Class, req.UnknownStart).anyStart()) {
		return prepareStream(r, name, req)
	}
	data, class, err := load(r, name, &req)
	if err != nil {
		return nil, err
	}
	p, err := PrepareData(data, class, req.Fit, req.Options, width, req.CSV.Location)
	if err != nil && errors.Is(err, errImpossible) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, err
}

// Load reads the data as Prepare does and settles the class (fitting it
// with req.Fit): what a service does once per dataset before many
// releases (PrepareData).
func Load(r io.Reader, name string, req Request) (*reading.Data, *markov.Class, error) {
	return load(r, name, &req)
}

// PrepareData is Prepare on data already read with its class (Load);
// fitted says the class was fitted from this data (the report warns).
// It does not modify data, so releases may share it.
func PrepareData(data *reading.Data, class *markov.Class, fitted bool, opts Options, width time.Duration, loc *time.Location) (*Pending, error) {
	p := &Pending{Class: class}
	if err := opts.Limits.CheckStates(len(class.States)); err != nil {
		return nil, err
	}
	if err := checkLimits(data, len(class.States), width, loc, opts.Limits); err != nil {
		return nil, err
	}
	if opts.Origin != nil {
		var err error
		if data, err = atOrigin(data, *opts.Origin); err != nil {
			return nil, err
		}
	}
	if !fitted {
		// where the data lies in the chain (the origin's placement), a
		// fitted class gives every transition of its data weight
		if err := checkPossible(data, class, opts); err != nil {
			return nil, err
		}
	}
	if opts.Profile != "" {
		if width > 0 {
			return nil, errors.New("give a window or a profile, not both")
		}
		prof, err := query.ParseProfile(opts.Profile)
		if err != nil {
			return nil, err
		}
		if err := checkProfile(prof, len(class.States), opts.Limits); err != nil {
			return nil, err
		}
		pr, draw, err := planProfile(data, class, fitted, opts, prof, loc)
		if err != nil {
			return nil, err
		}
		p.Record, p.out, p.draw = pr.Record, pr, draw
		return p, nil
	}
	if width > 0 {
		wr, draw, err := planWindows(data, class, fitted, opts, width, loc)
		if err != nil {
			return nil, err
		}
		p.Record, p.out, p.draw = wr.Record, wr, draw
		return p, nil
	}
	rep, draw, err := plan(data, class, fitted, opts, NewScaleCache(), false)
	if err != nil {
		return nil, err
	}
	p.Record, p.out, p.draw = rep.Record, rep, draw
	return p, nil
}

// Draw adds the noise and returns the release. It draws once: a second
// call is an error (fresh noise on the same data would let noise be
// averaged away).
func (p *Pending) Draw() (Output, error) {
	if p.drawn {
		return nil, errors.New("release: noise already drawn for this release")
	}
	p.drawn = true
	if err := p.draw(); err != nil {
		return nil, err
	}
	return p.out, nil
}

// prepareStream is Prepare of one release (not windows), reading the data
// as a stream (reading.ReadSummaryTransitions: the summary with the
// transition counts a fit needs): the same report, record and errors as
// reading it whole (PrepareData), in memory that grows with the number of
// series, not of rows, when rows come grouped by series in time order.
func prepareStream(r io.Reader, name string, req Request) (*Pending, error) {
	opts, err := settle(&req)
	if err != nil {
		return nil, err
	}
	sum, pats, counts, err := reading.ReadSummaryTransitions(r, name, opts)
	if err != nil {
		return nil, err
	}
	class := req.Class
	if !req.Fit {
		// the transitions between consecutive readings, as checkPossible
		// checks them (a start is not checked here: Prepare reads data
		// whole when some start law has a zero)
		if err := checkPossibleCounts(counts, class); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if req.Fit {
		// markov.Fit on reading.Data.Runs, from its transition counts
		ch, err := markov.FitCounts(opts.States, counts, req.Smoothing)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if class, err = markov.NewClass(ch.States, ch); err != nil {
			return nil, err
		}
	}
	rep, quilts, draw, err := planSummary(sum, class, req.Fit, req.Options, NewScaleCache(), false)
	if err != nil {
		return nil, err
	}
	// the ledger's record, as plan writes it from the data
	p := &Pending{Class: class, out: rep, draw: draw, opts: req.Options, quilts: nonNil(quilts)}
	return p, p.RecordSeries(pats)
}

// load reads the data with the request's declared states and settles the
// class (fitting it when asked).
func load(r io.Reader, name string, req *Request) (*reading.Data, *markov.Class, error) {
	opts, err := settle(req)
	if err != nil {
		return nil, nil, err
	}
	class := req.Class
	data, err := reading.ReadData(r, name, opts)
	if err != nil {
		return nil, nil, err
	}
	if req.Fit {
		ch, err := markov.Fit(opts.States, data.Runs(), req.Smoothing)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if class, err = markov.NewClass(ch.States, ch); err != nil {
			return nil, nil, err
		}
	}
	return data, class, nil
}

// settle checks the request's class and declared states and returns the
// reading options (the class's states declared).
func settle(req *Request) (reading.CSVOptions, error) {
	if req.CSV.Levels != nil && req.CSV.States == nil {
		req.CSV.States = req.CSV.Levels.Names() // numeric readings: the levels are declared
	}
	switch {
	case req.Fit && req.Class != nil:
		return reading.CSVOptions{}, errors.New("give a class or fit one, not both")
	case req.Fit && req.CSV.States == nil:
		return reading.CSVOptions{}, errors.New("fitting needs the declared states (--states a,b,c): the histogram's bins must be declared, not read off the data")
	case !req.Fit && req.Class == nil:
		return reading.CSVOptions{}, errors.New("no class: give one, or fit one over declared states")
	case req.Class != nil && req.CSV.States != nil && !slices.Equal(req.CSV.States, req.Class.States):
		return reading.CSVOptions{}, fmt.Errorf("declared states %q differ from the class's states %q", strings.Join(req.CSV.States, ","), strings.Join(req.Class.States, ","))
	}
	opts := req.CSV
	if req.Class != nil {
		opts.States = req.Class.States
	}
	// before the data are read or a chain fitted (k² memory, k³ work)
	if err := req.Limits.CheckStates(len(opts.States)); err != nil {
		return reading.CSVOptions{}, err
	}
	return opts, nil
}

// PrepareSummary is Prepare on a summary of the data (a pipeline's, built
// series by series): the same report, σ and sizes as on the data itself.
// Its Record is nil until RecordSeries names the series.
func PrepareSummary(sum *reading.Summary, class *markov.Class, fitted bool, opts Options) (*Pending, error) {
	rep, quilts, draw, err := planSummary(sum, class, fitted, opts, NewScaleCache(), false)
	if err != nil {
		return nil, err
	}
	return &Pending{Class: class, out: rep, draw: draw, opts: opts, quilts: nonNil(quilts)}, nil
}

func nonNil(q map[string]*mqm.Quilt) map[string]*mqm.Quilt {
	if q == nil {
		return map[string]*mqm.Quilt{}
	}
	return q
}
