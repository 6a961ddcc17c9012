// Package commit records a prepared release where it is accounted for — a
// ledger dataset (package ledger) or a compose log file (package
// ledger/logfile) — in the one order that keeps the guarantee: check the
// budget, spend, draw the noise, record, and only then return the result
// to be shown. The CLI (puff release) and the service (puff serve) both
// release through Release.
package commit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/ledger/logfile"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Target is where a release is recorded: a ledger (Store), a compose log
// file (Log), or nowhere when both are empty.
type Target struct {
	Store ledger.Store
	// Spend is the ledger spend without its Class and Record (the
	// release's): Dataset, and for the service the token, its budget and
	// the idempotency key. With Log, Spend.Dataset names the dataset in
	// the log (default: release.DatasetName(DataName)).
	Spend    ledger.Spend
	Log      string
	DataName string // the data's name (file path), for the log's default dataset
}

// Open is the target of a release recorded in the ledger at dsn (its
// dataset must exist: 'puff ledger init'), in the log file at log, or
// nowhere (both ""): one of them, as puff release's --ledger, --log and
// --dataset say. The ledger is opened, and fails, before any data is
// read; Close closes it.
func Open(ctx context.Context, dsn, log, dataset, dataName string) (Target, error) {
	t := Target{Spend: ledger.Spend{Dataset: dataset}, Log: log, DataName: dataName}
	switch {
	case dsn != "" && log != "":
		return t, fmt.Errorf("give --ledger or --log, not both")
	case dsn != "" && dataset == "":
		return t, fmt.Errorf("--ledger needs --dataset NAME (a dataset created with 'puff ledger init')")
	case dsn != "":
		var err error
		t.Store, err = ledger.Open(ctx, dsn, false)
		return t, err
	}
	return t, nil
}

// Close closes the target's ledger, if any.
func (t Target) Close() error {
	if t.Store == nil {
		return nil
	}
	return t.Store.Close()
}

// Recorded is true when the release is recorded (a ledger or a log): it
// may then be any piece of its chain (release.Request.PlaceAt).
func (t Target) Recorded() bool { return t.Store != nil || t.Log != "" }

// OriginConflict is the error of an origin given for a release that
// differs from the one its ledger dataset was registered with.
type OriginConflict struct {
	Given, Registered, Dataset string
}

func (e *OriginConflict) Error() string {
	return fmt.Sprintf("origin %q differs from the origin %q dataset %q was registered with", e.Given, e.Registered, e.Dataset)
}

// Place settles where req's data lies in its chain (docs/math.md §4.10):
// at origin, or at the origin registered with the ledger dataset when
// origin is "" (a different origin is an *OriginConflict); without one, a
// recorded release may be any piece of the chain, so a class with a fixed
// start is calibrated for every start.
func Place(ctx context.Context, req *release.Request, t Target, origin string) error {
	if p, ok := t.Store.(release.Persister); ok && req.Options.Cache == nil {
		// the ledger's calibration cache: a class's leakage bound at ε
		// is computed once per ledger
		req.Options.Cache = release.NewPersistentCache(p)
	}
	if t.Store != nil {
		reg, err := t.Store.Definition(ctx, t.Spend.Dataset)
		if err != nil {
			return err
		}
		switch {
		case origin == "":
			origin = reg.Origin
		case reg.Origin != "" && reg.Origin != origin:
			return &OriginConflict{origin, reg.Origin, t.Spend.Dataset}
		}
	}
	return req.PlaceAt(origin, t.Recorded())
}

// Result is a committed release.
type Result struct {
	// Output is the drawn release; nil when the ledger replayed an
	// earlier release for a repeated idempotency key (Receipt.Result
	// holds it as recorded).
	Output  release.Output
	Receipt *ledger.Receipt // with a Store
	Total   *compose.Total  // with a Log: the total guarantee after it
	log     string
}

// Release draws p's noise once and records it at t. With a Store,
// Store.Spend checks the budget before any noise is drawn (over budget: a
// *ledger.Refused error, nothing drawn) and commits the record with its
// noisy result in one transaction. With a Log, the record is on disk
// (logfile.Append) before Release returns. Either way nothing is returned
// to be shown that is not recorded.
func Release(ctx context.Context, p *release.Pending, t Target) (*Result, error) {
	res := &Result{log: t.Log}
	if t.Store != nil {
		sp := t.Spend
		sp.Class, sp.Record = p.Class, p.Record
		rc, err := t.Store.Spend(ctx, sp, func() (json.RawMessage, error) {
			out, err := p.Draw()
			if err != nil {
				return nil, err
			}
			res.Output = out
			return json.Marshal(out)
		})
		if err != nil {
			return nil, err
		}
		res.Receipt = &rc
		return res, nil
	}
	out, err := p.Draw()
	if err != nil {
		return nil, err
	}
	res.Output = out
	if t.Log != "" {
		dataset := t.Spend.Dataset
		if dataset == "" {
			dataset = release.DatasetName(t.DataName)
		}
		total, err := logfile.Append(t.Log, dataset, p.Class, p.Record)
		if err != nil {
			return nil, err
		}
		res.Total = &total
	}
	return res, nil
}

// Ledger is what the release shows of its recording: the text line
// ("ledger", the dataset's state or the log's total) and the JSON field
// "ledger" (the state or the total), none when it was not recorded.
func (r *Result) Ledger() ([][2]string, release.Field) {
	switch {
	case r.Receipt != nil:
		return [][2]string{{"ledger", r.Receipt.State.Line()}}, release.Field{Name: "ledger", Value: r.Receipt.State}
	case r.Total != nil:
		t := *r.Total
		return [][2]string{{"ledger", fmt.Sprintf("%s: dataset %q, ε = %.6g by %s (%s) over %d recorded releases", r.log, t.Dataset, t.Float(), t.Rule, t.Theorem, t.Releases)}},
			release.Field{Name: "ledger", Value: t}
	}
	return nil, release.Field{Name: "ledger"}
}

// Where is where a release is recorded and placed, as puff release's and
// puff synth's --ledger, --log, --dataset and --origin say, with the
// data's name (the log's default dataset).
type Where struct {
	Ledger, Log, Dataset, Origin, DataName string
}

// OpenPlaced opens the target at w (Open) and settles req's place in its
// chain (Place; an *OriginConflict is the --origin flag's error). Close
// the target when done; on an error it is closed.
func OpenPlaced(ctx context.Context, w Where, req *release.Request) (Target, error) {
	t, err := Open(ctx, w.Ledger, w.Log, w.Dataset, w.DataName)
	if err != nil {
		return t, err
	}
	var oc *OriginConflict
	if err = Place(ctx, req, t, w.Origin); errors.As(err, &oc) {
		err = fmt.Errorf("--%w", err)
	}
	if err != nil {
		t.Close()
	}
	return t, err
}

// Do is a release's one sequence, as puff release and puff synth run it:
// open the target and place the request (OpenPlaced), prepare the release
// (nothing drawn or spent: prepare loads the data and calibrates), and
// commit it (Release: the ledger's check, the draw, the record).
func Do(ctx context.Context, w Where, req release.Request, prepare func(release.Request) (*release.Pending, error)) (*Result, error) {
	t, err := OpenPlaced(ctx, w, &req)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	p, err := prepare(req)
	if err != nil {
		return nil, err
	}
	return Release(ctx, p, t)
}
