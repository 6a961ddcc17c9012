package compose

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// Recorded is one dataset of a release log as Append wrote it: its class
// Θ and its releases as records, in the order they were appended.
type Recorded struct {
	Dataset string
	Class   *markov.Class
	Records []*record.Release
}

// releaseLabel is how Append names a release ("release N").
var releaseLabel = regexp.MustCompile(`^release [0-9]+$`)

// Unappend reads back the release records Append wrote into lg, one
// Recorded per dataset in order of first appearance: what puff ledger
// import moves into a durable ledger. It is Append's inverse up to what
// the log does not keep (a record's query and readings per segment; σ
// only since issue 40, so an older log's records are not composed by the
// leakage rule). A log not
// written by Append — a release named otherwise, a chain without an
// inline class, a measured dependence (a durable ledger keeps no Δ) — is
// refused with the entry named, never half read.
func Unappend(lg *Log, name string) ([]Recorded, error) {
	if len(lg.Dependence) > 0 {
		return nil, fmt.Errorf("%s: dependence: a measured Δ between releases has no place in a durable ledger (it composes by the max-divergence rule only in puff compose); only logs written by puff release --log are imported", name)
	}
	chains := map[string]LogDataset{}
	for _, d := range lg.Datasets {
		chains[d.Name] = d
	}
	classes := map[string]*markov.Class{}
	var out []Recorded
	at := map[string]int{}       // dataset → index in out
	byLabel := map[string]int{}  // release label → index of its record in its dataset
	owner := map[string]string{} // release label → dataset
	for i, r := range lg.Releases {
		where := fmt.Sprintf("%s: releases[%d] %q", name, i, r.Name)
		label, _, _ := strings.Cut(r.Name, ": ")
		dataset, series, _ := strings.Cut(r.Dataset, "/")
		if !releaseLabel.MatchString(label) || r.Name != fmt.Sprintf("%s: %s [%d, %d]", label, r.Dataset, r.Start, r.End) {
			return nil, fmt.Errorf("%s: not written by puff release --log (want \"release N: dataset/series [first, last]\"); only such logs are imported", where)
		}
		if r.Calibration != nil && (r.Calibration.Start != r.Start || r.Calibration.end() != r.End) {
			return nil, fmt.Errorf("%s: calibrated for another segment than it read; not written by puff release --log", where)
		}
		ch, ok := chains[r.Dataset]
		if !ok {
			return nil, fmt.Errorf("%s: chain %q is not among the log's datasets", where, r.Dataset)
		}
		class, ok := classes[r.Dataset]
		if !ok {
			var err error
			if class, err = inlineClass(ch, name); err != nil {
				return nil, err
			}
			classes[r.Dataset] = class
		}
		if r.Theta != ch.Theta || r.Theta != class.Hash() {
			return nil, fmt.Errorf("%s: calibrated for Θ %q, its chain's class is %q", where, r.Theta, class.Hash())
		}
		j, ok := at[dataset]
		if !ok {
			j = len(out)
			at[dataset] = j
			out = append(out, Recorded{Dataset: dataset, Class: class})
		} else if out[j].Class.Hash() != class.Hash() {
			return nil, fmt.Errorf("%s: series of dataset %q under two classes Θ (%s, %s)", where, dataset, out[j].Class.Hash(), class.Hash())
		}
		seg := record.Segment{Series: series, First: r.Start, Last: r.End}
		if r.Active != nil {
			q := *r.Active
			seg.Quilt = &q
		}
		k, ok := byLabel[label]
		if !ok {
			if _, dup := owner[label]; dup {
				return nil, fmt.Errorf("%s: %s appears twice", where, label)
			}
			k = len(out[j].Records)
			byLabel[label], owner[label] = k, dataset
			out[j].Records = append(out[j].Records, &record.Release{Mechanism: r.Kind, Epsilon: r.Epsilon, EpsilonExact: r.EpsilonExact, Class: r.Theta, Sigma: r.Sigma})
		}
		rec := out[j].Records[k]
		if owner[label] != dataset || rec.Mechanism != r.Kind || rec.Epsilon != r.Epsilon || rec.EpsilonExact != r.EpsilonExact || rec.Class != r.Theta || rec.Sigma != r.Sigma {
			return nil, fmt.Errorf("%s: its segments disagree on the dataset, mechanism, ε, Θ or σ of %s", where, label)
		}
		rec.Segments = append(rec.Segments, seg)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the log records no releases", name)
	}
	return out, nil
}

// inlineClass is the class Append writes inline for a chain.
func inlineClass(ch LogDataset, name string) (*markov.Class, error) {
	raw := bytes.TrimSpace(ch.Class)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%s: dataset %q: no inline class (puff release --log writes one); only such logs are imported", name, ch.Name)
	}
	class, err := markov.ParseClass(bytes.NewReader(raw), fmt.Sprintf("%s: dataset %q: class", name, ch.Name))
	if err != nil {
		return nil, err
	}
	if class == nil {
		return nil, errors.New("compose: no class")
	}
	return class, nil
}
