// Package logfile keeps a compose release log (compose.Log) in a JSON
// file: the file half of puff release --log and puff compose --log. The
// composition itself is package compose's, which reads and writes no
// files.
package logfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// Append adds a release record to the log file at path (created when
// missing) and returns the total guarantee over the series it touched
// (compose.Append). The file is rewritten atomically (temporary file,
// fsync, rename) under an exclusive lock on path+".lock", so concurrent
// appends never lose a record; the record is on disk before Append
// returns.
func Append(path, dataset string, class *markov.Class, rec *record.Release) (compose.Total, error) {
	unlock, err := lock(path + ".lock")
	if err != nil {
		return compose.Total{}, fmt.Errorf("compose: locking %s: %w", path, err)
	}
	defer unlock()
	var lg *compose.Log
	switch raw, err := readLog(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return compose.Total{}, fmt.Errorf("compose: %w", err)
	default:
		lg = &compose.Log{}
		if err := strictjson.Decode(raw, path, lg); err != nil {
			return compose.Total{}, err
		}
	}
	_, out, t, err := compose.Append(lg, dataset, class, rec)
	if err != nil {
		return compose.Total{}, err
	}
	if err := writeAtomic(path, out); err != nil {
		return compose.Total{}, err
	}
	return t, nil
}

// Parse reads the log file at path, class paths relative to its folder.
func Parse(path string) (*compose.Ledger, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	defer f.Close()
	return compose.ParseLog(f, path, Open)
}

// Guarantees reads the log file at path and answers for one dataset (all
// the log lists, with dataset ""), as puff compose does. When no rule
// covers some dataset, it returns the guarantees of all with an error
// joining those datasets' reasons (wrapping compose.ErrNoRule); on any
// other error, no guarantees.
func Guarantees(path, dataset string) ([]compose.Guarantee, error) {
	l, err := Parse(path)
	if err != nil {
		return nil, err
	}
	names := l.Datasets()
	if dataset != "" {
		names = []string{dataset}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: the log lists no datasets", path)
	}
	var out []compose.Guarantee
	var failed []error
	for _, d := range names {
		g, err := l.Guarantee(d)
		if err != nil && !errors.Is(err, compose.ErrNoRule) {
			return nil, err
		}
		if err != nil {
			failed = append(failed, err)
		}
		out = append(out, g)
	}
	return out, errors.Join(failed...)
}

// readLog reads the log file at path, at most strictjson.MaxInput bytes
// (a device or a runaway file must not exhaust memory); a missing file
// is an error wrapping fs.ErrNotExist.
func readLog(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return strictjson.ReadAll(fh, path)
}

// Open opens a regular file (a class file named by a log).
func Open(path string) (io.ReadCloser, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return fh, nil
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
