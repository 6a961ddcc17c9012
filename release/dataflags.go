package release

import (
	"errors"
	"io"

	"github.com/pufferfish-privacy/pufferfish/markov"

	"github.com/pufferfish-privacy/pufferfish/reading"
)

// OpenWith opens the data file at path (OpenData: the built-in example
// for "") and returns its name and the reading options of the flags d;
// close the reader when done.
func OpenWith(path string, d *reading.DataFlags) (io.ReadCloser, string, reading.CSVOptions, error) {
	opts, err := d.CSV()
	if err != nil {
		return nil, "", opts, err
	}
	r, name, err := OpenData(path)
	return r, name, opts, err
}

// ReadWith reads the data at path (OpenWith) with the declared states
// (first appearance when none are declared, for commands that release
// nothing); keepTimes keeps each reading's time (reading.Data.Times).
func ReadWith(path string, d *reading.DataFlags, keepTimes bool) (*reading.Data, string, error) {
	r, name, opts, err := OpenWith(path, d)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	opts.KeepTimes = keepTimes
	data, err := reading.ReadData(r, name, opts)
	return data, name, err
}

// ClassOf is the class a release is calibrated for, as puff release's and
// puff synth's flags give it: the class file at path; else, with example
// (no data given) and without fit, the built-in example's class; else
// none with fit (a chain is fitted to the data).
func ClassOf(path string, fit, example bool) (*markov.Class, error) {
	switch {
	case path != "":
		return markov.ReadClassFile(path)
	case example && !fit:
		return ExampleClassParsed()
	case !fit:
		return nil, errors.New("give --class FILE (see 'puff scale --help' for the format) or --fit --states a,b,c")
	}
	return nil, nil
}
