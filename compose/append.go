package compose

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pufferfish-privacy/pufferfish/record"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Total is the guarantee of a log for one dataset prefix after an append:
// the worst guarantee over the chains (series) the release touched, with
// its rule.
type Total struct {
	Dataset  string  `json:"dataset"`
	Epsilon  float64 `json:"spent"`
	Rule     string  `json:"rule"`
	Theorem  string  `json:"theorem"`
	Releases int     `json:"releases"` // distinct releases recorded for the dataset
}

// AppendLog adds a release record to the log file at path (created when
// missing) and returns the total guarantee over the series it touched.
// Each series of dataset is one chain of the ledger, named "dataset/series"
// (just dataset for data without series), with the class inline and its
// hash as Θ label; a series whose recorded class differs gets no rule
// (its ε says nothing under another Θ). The file is rewritten atomically
// (temporary file, fsync, rename) under an exclusive lock on path+".lock",
// so concurrent appends never lose a record; the record is on disk before
// AppendLog returns.
func AppendLog(path, dataset string, class *markov.Class, rec *record.Release) (Total, error) {
	if rec == nil || len(rec.Segments) == 0 {
		return Total{}, errors.New("compose: nothing to record")
	}
	if dataset == "" || strings.Contains(dataset, "/") {
		return Total{}, fmt.Errorf("compose: dataset name %q: want a non-empty name without '/'", dataset)
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return Total{}, fmt.Errorf("compose: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return Total{}, fmt.Errorf("compose: locking %s: %w", path, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	var lg Log
	switch raw, err := os.ReadFile(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Total{}, fmt.Errorf("compose: %w", err)
	default:
		if err := strictjson.Decode(raw, path, &lg); err != nil {
			return Total{}, err
		}
	}
	classJSON, err := class.MarshalJSON()
	if err != nil {
		return Total{}, err
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
	// Validate the whole log before writing it.
	out, err := marshalLog(&lg)
	if err != nil {
		return Total{}, err
	}
	l, err := ParseLog(strings.NewReader(string(out)), path)
	if err != nil {
		return Total{}, err
	}
	if err := writeAtomic(path, out); err != nil {
		return Total{}, err
	}
	t := Total{Dataset: dataset, Rule: "none"}
	for name := range touched {
		g, err := l.Guarantee(name)
		if err != nil {
			return Total{}, fmt.Errorf("compose: the release is recorded, but %w", err)
		}
		if g.Best.Epsilon >= t.Epsilon {
			t.Epsilon, t.Rule, t.Theorem = g.Best.Epsilon, g.Best.Rule, g.Best.Theorem
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
	return t, nil
}

func marshalLog(lg *Log) ([]byte, error) {
	b, err := jsonIndent(lg)
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	return append(b, '\n'), nil
}

// writeAtomic replaces path by data: a temporary file in the same
// directory, synced, then renamed over it (a crash leaves the old or the
// new file, never a torn one).
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("compose: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("compose: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	return nil
}
