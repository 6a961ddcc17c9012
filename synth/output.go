package synth

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/reading"
)

// Output is the file puff synth writes the synthetic series to: made
// beside Path (Create) before the release is committed, so that a
// release is never paid for and then not written, and a refused one
// leaves Path as it was; Write renames it onto Path at the end.
type Output struct {
	Path string
	f    *os.File
}

// Create makes the output's file beside path; Remove it when done
// (nothing is left behind after Write's rename).
func Create(path string) (*Output, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, err
	}
	return &Output{Path: path, f: f}, nil
}

// Remove closes and removes the file made beside Path, if it is still
// there.
func (o *Output) Remove() {
	o.f.Close()
	os.Remove(o.f.Name())
}

// Written is what Write wrote (puff synth --json's "synthetic", whose
// fields are in this order).
type Written struct {
	File   string `json:"file"`
	Rows   int    `json:"rows"`
	Seed   uint64 `json:"seed"`
	Series int    `json:"series"`
}

// Line is Written as puff synth's text line.
func (w Written) Line() string {
	return fmt.Sprintf("%d series, %d rows → %s (sampling seed %d)", w.Series, w.Rows, w.File, w.Seed)
}

// Write samples synthetic series from the released chain with data's
// observation patterns (Sample; seed 0: a random seed, reported) and
// writes them to Path: CSV with the columns named as the data's (cols:
// series, time and state column flags, the first name of each, empty for
// the defaults), or Parquet for a .parquet path. A replayed release
// (rel nil) has no chain to sample.
func (o *Output) Write(rel *Release, data *reading.Data, seed uint64, cols [3]string) (Written, error) {
	if rel == nil {
		return Written{}, errors.New("the ledger replayed an earlier release: no chain to sample")
	}
	if seed == 0 {
		var b [8]byte
		rand.Read(b[:])
		for _, x := range b {
			seed = seed<<8 | uint64(x)
		}
	}
	w := Written{File: o.Path, Seed: seed}
	syn, err := Sample(rel.Chain, rel.Stationary, data, mrand.New(mrand.NewPCG(seed, 0x5e)))
	if err == nil {
		err = o.write(syn, cols)
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.f.Name(), o.Path)
	}
	if err != nil {
		return w, fmt.Errorf("the release is recorded, but the synthetic series were not written: %w", err)
	}
	w.Series = len(syn.Seqs)
	for _, s := range syn.Seqs {
		w.Rows += len(s)
	}
	return w, nil
}

func (o *Output) write(syn *reading.Data, cols [3]string) error {
	col := func(given, def string) string {
		if given == "" {
			return def
		}
		return strings.Split(given, ",")[0]
	}
	var b bytes.Buffer
	if err := syn.WriteCSV(&b, col(cols[0], "series"), col(cols[1], "time"), col(cols[2], "state")); err != nil {
		return err
	}
	if strings.EqualFold(filepath.Ext(o.Path), ".parquet") {
		return reading.WriteParquet(o.f, &b, o.Path, nil, 0)
	}
	_, err := b.WriteTo(o.f)
	return err
}
