package puffbeam

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/release/commit"
)

// recorded says the release is recorded (a ledger or a compose log), as
// puff release --ledger or --log.
func (c Config) recorded() bool { return c.Ledger != "" || c.Log != "" }

// checkRecording checks the recording flags as puff release does, and
// gives the run its id when it has none (Build runs once, on the
// launcher: every retry of the release stage gets the same Config).
func (c *Config) checkRecording() error {
	switch {
	case c.Ledger != "" && c.Log != "":
		return errors.New("give --ledger or --log, not both")
	case c.Ledger != "" && c.Dataset == "":
		return errors.New("--ledger needs --dataset NAME (a dataset created with 'puff ledger init')")
	case !c.recorded():
		return nil
	}
	if c.RunID == "" {
		c.RunID = NewRunID()
	}
	return nil
}

// NewRunID is a fresh random run id (Config.RunID).
func NewRunID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recording is the core's release options and where the release is
// recorded (options, target); close closes the ledger.
func (c Config) recording(ctx context.Context) (opts release.Options, t commit.Target, close func(), err error) {
	if opts, err = c.options(); err != nil {
		return opts, t, func() {}, err
	}
	t, close, err = c.target(ctx, &opts)
	return opts, t, close, err
}

// options are the core's release options: ε as the float the noise is
// calibrated with and, when the user wrote a number, the exact rational
// the ledger charges (release.Options.EpsilonRat, so --epsilon 5/9
// charges exactly 5/9).
func (c Config) options() (release.Options, error) {
	method, err := mechanism.Parse(c.Method)
	if err != nil {
		return release.Options{}, err
	}
	opts := release.Options{Epsilon: c.Epsilon, Method: method, Query: c.Query, Profile: c.Profile}
	if c.EpsilonRat != "" {
		r, ok := new(big.Rat).SetString(c.EpsilonRat)
		if !ok || r.Sign() <= 0 {
			return release.Options{}, fmt.Errorf("epsilon %q: not a positive rational", c.EpsilonRat)
		}
		if f, _ := r.Float64(); f != c.Epsilon {
			return release.Options{}, fmt.Errorf("epsilon %s is not the float %v the release is calibrated with", c.EpsilonRat, c.Epsilon)
		}
		opts.EpsilonRat = r
	}
	return opts, nil
}

// target opens where the release is recorded (commit.Target; empty when
// it is not) and settles its place in the chain as puff release does
// (commit.Place): without an origin, a recorded release may be any piece
// of its chain, so it is calibrated for every start. close closes the
// ledger.
func (c Config) target(ctx context.Context, opts *release.Options) (t commit.Target, close func(), err error) {
	close = func() {}
	if !c.recorded() {
		return t, close, nil
	}
	csv, err := c.Spec.CSV()
	if err != nil {
		return t, close, err
	}
	req := release.Request{CSV: csv, Options: *opts}
	if t, err = commit.OpenPlaced(ctx, commit.Where{Ledger: c.Ledger, Log: c.Log, Dataset: c.Dataset, DataName: c.Input}, &req); err != nil {
		return t, close, err
	}
	close = func() { t.Close() }
	if c.Ledger != "" {
		// a retried release stage has the same run id and Config: the
		// ledger replays the release recorded by the first attempt
		h := sha256.Sum256(mustJSON(c))
		t.Spend.IdempotencyKey, t.Spend.RequestHash = "puffbeam/"+c.RunID, hex.EncodeToString(h[:])
	}
	if req.Origin != nil {
		// each series would be placed at its time after the origin, which
		// the pipeline does not do yet: release with puff release
		close()
		return t, func() {}, fmt.Errorf("dataset %q is registered with an origin (puff ledger init --origin): puffbeam does not place series after an origin yet; release it with puff release", c.Dataset)
	}
	*opts = req.Options
	return t, close, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // Config is plain data
	}
	return b
}

// recordOf is the ledger's record of the release: puff release's on the
// same data. The pipeline holds each series' observation pattern, not its
// readings, and the record depends on the data only through them, so the
// core writes it from the patterns (release.Pending.RecordSeries), in
// series order. segs iterates (series, observation pattern as JSON).
func recordOf(p *release.Pending, segs func(*string, *string) bool) error {
	var pats []reading.SeriesPattern
	var series, pattern string
	for segs(&series, &pattern) {
		var ob mqm.Observation
		if err := json.Unmarshal([]byte(pattern), &ob); err != nil {
			return fmt.Errorf("series %q: pattern: %w", series, err)
		}
		pats = append(pats, reading.SeriesPattern{Series: series, Observation: ob})
	}
	if len(pats) == 0 {
		return errors.New("no observations to release")
	}
	slices.SortFunc(pats, func(a, b reading.SeriesPattern) int { return strings.Compare(a.Series, b.Series) })
	for i := 1; i < len(pats); i++ {
		if pats[i].Series == pats[i-1].Series {
			return fmt.Errorf("series %q is counted twice", pats[i].Series)
		}
	}
	return p.RecordSeries(pats)
}

// publish releases p (computed from the summary, no noise drawn yet)
// through commit.Release: recorded, the ledger checks the budget before
// any noise is drawn and commits the record with its noisy result in one
// transaction; then the report is written, with the "ledger" field of
// puff release --json --ledger. Nothing is written when it is refused.
func (c Config) publish(ctx context.Context, p *release.Pending, t commit.Target, segs func(*string, *string) bool) error {
	if t.Recorded() {
		if err := recordOf(p, segs); err != nil {
			return err
		}
	}
	res, err := commit.Release(ctx, p, t)
	if err != nil {
		return err
	}
	out := res.Output
	if out == nil {
		// a retry: the release as the ledger recorded it, no new noise
		raw := res.Receipt.Result
		switch {
		case c.Profile != "":
			pr := &release.ProfileReport{}
			err, out = json.Unmarshal(raw, pr), pr
		case c.Window > 0:
			wr := &release.WindowedReport{}
			err, out = json.Unmarshal(raw, wr), wr
		default:
			r := &release.Report{}
			err, out = json.Unmarshal(raw, r), r
		}
		if err != nil {
			return fmt.Errorf("the recorded release: %w", err)
		}
	}
	if r, ok := out.(*release.Report); ok && c.Warning != "" {
		r.Warnings = append(r.Warnings, c.Warning)
	}
	_, field := res.Ledger()
	var buf bytes.Buffer
	if err := release.WriteJSON(&buf, out, field); err != nil {
		return err
	}
	return os.WriteFile(c.Output, buf.Bytes(), 0o644)
}
