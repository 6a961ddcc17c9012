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
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/record"
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
	opts := release.Options{Epsilon: c.Epsilon, Method: method, Query: c.Query}
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
	if t, err = commit.Open(ctx, c.Ledger, c.Log, c.Dataset, c.Input); err != nil {
		return t, close, err
	}
	close = func() { t.Close() }
	if c.Ledger != "" {
		// a retried release stage has the same run id and Config: the
		// ledger replays the release recorded by the first attempt
		h := sha256.Sum256(mustJSON(c))
		t.Spend.IdempotencyKey, t.Spend.RequestHash = "puffbeam/"+c.RunID, hex.EncodeToString(h[:])
	}
	csv, err := c.Spec.CSV()
	if err != nil {
		close()
		return t, func() {}, err
	}
	req := release.Request{CSV: csv, Options: *opts}
	var oc *commit.OriginConflict
	if err := commit.Place(ctx, &req, t, ""); errors.As(err, &oc) {
		close()
		return t, func() {}, fmt.Errorf("--%w", err)
	} else if err != nil {
		close()
		return t, func() {}, err
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
// same data. The core builds a record from a release's data
// (release.PrepareData); the pipeline holds each series' observation
// pattern, not its readings, and the record (σ, the mechanism as
// recorded, ε, each pattern's active quilt, each series' segment)
// depends on the data only through them. So the core prepares it on a
// skeleton with one series per distinct pattern (readings of the first
// state; with windows every reading at time 0, one window: a joint
// calibration's record is the whole series', docs/math.md §4.8) and each
// series gets its pattern's segment. No noise is drawn for the skeleton.
// segs iterates (series, observation pattern as JSON).
func (c Config) recordOf(class *markov.Class, opts release.Options, step float64, segs func(*string, *string) bool) (*record.Release, error) {
	csv, err := c.Spec.CSV()
	if err != nil {
		return nil, err
	}
	sk := &release.Data{States: class.States, Levels: csv.Levels, Step: step}
	index := map[string]string{} // pattern → skeleton series
	type seg struct{ series, pattern string }
	var all []seg
	var series, pattern string
	for segs(&series, &pattern) {
		all = append(all, seg{series, pattern})
		if _, ok := index[pattern]; ok {
			continue
		}
		var ob mqm.Observation
		if err := json.Unmarshal([]byte(pattern), &ob); err != nil {
			return nil, fmt.Errorf("series %q: pattern: %w", series, err)
		}
		name := fmt.Sprint(len(index))
		index[pattern] = name
		var off []int
		if ob.Times != nil {
			off = make([]int, len(ob.Times))
			for j, t := range ob.Times {
				off[j] = t - ob.Times[0]
			}
		}
		sk.Seqs = append(sk.Seqs, make([]int, ob.Len))
		sk.Series = append(sk.Series, name)
		sk.Offsets = append(sk.Offsets, off)
		sk.Times = append(sk.Times, make([]float64, ob.Len))
		if ob.Start != 1 {
			return nil, fmt.Errorf("series %q starts at chain time %d, want 1", series, ob.Start)
		}
	}
	if len(all) == 0 {
		return nil, errors.New("no observations to release")
	}
	if c.Window == 0 {
		sk.Times = nil
	}
	p, err := release.PrepareData(sk, class, c.Fit, opts, c.Window, time.UTC)
	if err != nil {
		return nil, err
	}
	bySkeleton := map[string]record.Segment{}
	for _, s := range p.Record.Segments {
		bySkeleton[s.Series] = s
	}
	rec := *p.Record
	rec.Segments = make([]record.Segment, 0, len(all))
	slices.SortFunc(all, func(a, b seg) int {
		switch {
		case a.series < b.series:
			return -1
		case a.series > b.series:
			return 1
		}
		return 0
	})
	for i, s := range all {
		if i > 0 && all[i-1].series == s.series {
			return nil, fmt.Errorf("series %q is counted twice", s.series)
		}
		sg, ok := bySkeleton[index[s.pattern]]
		if !ok {
			return nil, fmt.Errorf("series %q: no segment for its pattern", s.series)
		}
		sg.Series = s.series
		rec.Segments = append(rec.Segments, sg)
	}
	return &rec, nil
}

// publish releases p (computed from the summary, no noise drawn yet)
// through commit.Release: recorded, the ledger checks the budget before
// any noise is drawn and commits the record with its noisy result in one
// transaction; then the report is written, with the "ledger" field of
// puff release --json --ledger. Nothing is written when it is refused.
func (c Config) publish(ctx context.Context, p *release.Pending, class *markov.Class, opts release.Options, step float64, t commit.Target, segs func(*string, *string) bool) error {
	if t.Recorded() {
		rec, err := c.recordOf(class, opts, step, segs)
		if err != nil {
			return err
		}
		p.Record = rec
	}
	res, err := commit.Release(ctx, p, t)
	if err != nil {
		return err
	}
	out := res.Output
	if out == nil {
		// a retry: the release as the ledger recorded it, no new noise
		raw := res.Receipt.Result
		if c.Window > 0 {
			wr := &release.WindowedReport{}
			err, out = json.Unmarshal(raw, wr), wr
		} else {
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
