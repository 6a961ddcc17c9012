package compose

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// Entries translates one release record into ledger releases: one per
// segment, on the chain of its series (chain names it), calibrated for the
// segment it read (release.Histogram computes σ at each segment's place),
// named label plus the series. This is the one translation of a record
// for the ledgers (the log file, the durable stores, a windowed run).
func Entries(label string, rec *record.Release, chain func(series string) string) []Release {
	out := make([]Release, 0, len(rec.Segments))
	for _, sg := range rec.Segments {
		r := Release{Name: fmt.Sprintf("%s: %s [%d, %d]", label, chain(sg.Series), sg.First, sg.Last), Dataset: chain(sg.Series), Kind: rec.Mechanism, Epsilon: rec.Epsilon,
			Start: sg.First, End: sg.Last, Theta: rec.Class, Calibration: &Calibration{Start: sg.First, End: sg.Last}}
		if rec.Mechanism == MQMApprox && sg.Quilt != nil {
			q := *sg.Quilt
			r.Active = &q
		}
		out = append(out, r)
	}
	return out
}

// Verdict is the guarantee of a set of release records about one dataset:
// the worst over its series' chains (series are independent), with the
// rule that gave it.
type Verdict struct {
	Bound   *big.Rat // exact (see Rat)
	Epsilon float64  // Bound, shown rounded up
	Rule    string
	Theorem string
	Chain   string // the series whose chain attains it
}

// SeriesChain names a series' chain ("" is the only series of data
// without a series column).
func SeriesChain(series string) string {
	if series == "" {
		return "(the series)"
	}
	return series
}

// Records composes release records about one dataset whose series are
// independent chains of class Θ (every record must be calibrated for it:
// record.Release.Class equal to class.Hash()). Each series is one chain,
// as long as its last recorded time; each record's segments are entries
// of those chains (Entries). The answer is the worst chain's best rule.
func Records(class *markov.Class, recs []*record.Release) (Verdict, error) {
	if class == nil {
		return Verdict{}, errors.New("compose: no class Θ")
	}
	hash := class.Hash()
	length := map[string]int{}
	var order []string
	for _, rec := range recs {
		if rec.Class != hash {
			return Verdict{}, fmt.Errorf("compose: %w: a release was calibrated for another class Θ (%s, not %s); its ε says nothing under this one", ErrNoRule, rec.Class, hash)
		}
		for _, sg := range rec.Segments {
			c := SeriesChain(sg.Series)
			if _, ok := length[c]; !ok {
				order = append(order, c)
			}
			length[c] = max(length[c], sg.Last)
		}
	}
	l := New()
	n := 0
	for _, rec := range recs {
		n += len(rec.Segments)
	}
	l.releases = make([]Release, 0, n)
	for _, c := range order {
		if err := l.AddDataset(Dataset{Name: c, Length: length[c], Class: class, Theta: hash}); err != nil {
			return Verdict{}, err
		}
	}
	for i, rec := range recs {
		for _, r := range Entries(fmt.Sprintf("release %d", i+1), rec, SeriesChain) {
			if err := l.Record(r); err != nil {
				return Verdict{}, err
			}
		}
	}
	v := Verdict{Bound: zero(), Rule: "none"}
	for _, c := range order {
		g, err := l.Guarantee(c)
		if err != nil {
			return Verdict{}, err
		}
		if g.Best.Bound.Cmp(v.Bound) >= 0 {
			v = Verdict{Bound: g.Best.Bound, Epsilon: g.Best.Epsilon, Rule: g.Best.Rule, Theorem: g.Best.Theorem, Chain: c}
		}
	}
	return v, nil
}
