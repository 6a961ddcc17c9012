package compose

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// Total is the guarantee of a log for one dataset prefix after an append:
// the worst guarantee over the chains (series) the release touched, with
// its rule.
type Total struct {
	Dataset string
	guarantee.Guarantee
	Releases int // distinct releases recorded for the dataset
}

// MarshalJSON writes {"dataset", "spent" (ε rounded up), "rule",
// "theorem", "releases"}.
func (t Total) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Dataset  string  `json:"dataset"`
		Epsilon  float64 `json:"spent"`
		Rule     string  `json:"rule"`
		Theorem  string  `json:"theorem"`
		Releases int     `json:"releases"`
	}{t.Dataset, t.Float(), t.Rule, t.Theorem, t.Releases})
}

// Append adds a release record to the log lg (nil: a new log), in
// memory, and returns the new log, its ledger and the total guarantee over
// the series the record touched. Each series of dataset is one chain of
// the ledger, named "dataset/series" (just dataset for data without
// series), with the class inline and its hash as Θ label; a series whose
// recorded class differs gets no rule (its ε says nothing under another
// Θ). The whole log is validated (ParseLog) before it is returned; package
// ledger/logfile keeps it in a file.
func Append(lg *Log, dataset string, class *markov.Class, rec *record.Release) (*Log, []byte, Total, error) {
	if rec == nil || len(rec.Segments) == 0 {
		return nil, nil, Total{}, errors.New("compose: nothing to record")
	}
	if dataset == "" || strings.Contains(dataset, "/") {
		return nil, nil, Total{}, fmt.Errorf("compose: dataset name %q: want a non-empty name without '/'", dataset)
	}
	if lg == nil {
		lg = &Log{}
	}
	classJSON, err := class.MarshalJSON()
	if err != nil {
		return nil, nil, Total{}, err
	}
	hash := class.Hash()
	n := len(lg.Releases) + 1
	touched := map[string]bool{}
	for _, sg := range rec.Segments {
		name := dataset
		if sg.Series != "" {
			name = dataset + "/" + sg.Series
		}
		touched[name] = true
		i := -1
		for j, d := range lg.Datasets {
			if d.Name == name {
				i = j
			}
		}
		if i < 0 {
			lg.Datasets = append(lg.Datasets, LogDataset{Name: name, Length: sg.Last, Class: classJSON, Theta: hash})
		} else {
			lg.Datasets[i].Length = max(lg.Datasets[i].Length, sg.Last)
		}
	}
	lg.Releases = append(lg.Releases, Entries(fmt.Sprintf("release %d", n), rec, func(series string) string {
		if series == "" {
			return dataset
		}
		return dataset + "/" + series
	})...)
	// Validate the whole log before it is kept.
	out, err := marshalLog(lg)
	if err != nil {
		return nil, nil, Total{}, err
	}
	l, err := ParseLog(strings.NewReader(string(out)), "the log", nil)
	if err != nil {
		return nil, nil, Total{}, err
	}
	t := Total{Dataset: dataset, Guarantee: guarantee.None()}
	for name := range touched {
		g, err := l.Guarantee(name)
		if err != nil {
			return nil, nil, Total{}, fmt.Errorf("compose: %w", err)
		}
		if g.Best.Epsilon.Cmp(t.Epsilon) >= 0 {
			t.Guarantee = g.Best.Guarantee
		}
	}
	seen := map[string]bool{}
	for _, r := range lg.Releases {
		if r.Dataset == dataset || strings.HasPrefix(r.Dataset, dataset+"/") {
			id, _, _ := strings.Cut(r.Name, ":") // "release N: dataset/series"
			seen[id] = true
		}
	}
	t.Releases = len(seen)
	return lg, out, t, nil
}

func marshalLog(lg *Log) ([]byte, error) {
	b, err := jsonIndent(lg)
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	return append(b, '\n'), nil
}
