package release

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Request is one release as a user asks for it — the same options for the
// CLI, the service and the pipeline: how to read the data, which class
// (given, or fitted over declared states), and the mechanism.
type Request struct {
	CSV       CSVOptions
	Class     *markov.Class // the class Θ; nil with Fit
	Fit       bool          // fit one chain to the data (stationary start) over CSV.States
	Smoothing float64       // additive smoothing of the fit
	Options
}

// Run reads the data from r (named name in errors), settles the class and
// releases the histogram. The bins are the declared states: the class's, or
// CSV.States with Fit (which must then be given); a reading of another state
// is an error naming its line. It returns the report and the class used.
func Run(r io.Reader, name string, req Request) (*Report, *markov.Class, error) {
	data, class, err := load(r, name, &req)
	if err != nil {
		return nil, nil, err
	}
	rep, err := Histogram(data, class, req.Fit, req.Options)
	return rep, class, err
}

// RunWindows is Run with one release per calendar window of the given
// width (Windows).
func RunWindows(r io.Reader, name string, req Request, width time.Duration) (*WindowedReport, error) {
	data, class, err := load(r, name, &req)
	if err != nil {
		return nil, err
	}
	return Windows(data, class, req.Fit, req.Options, width, req.CSV.Location)
}

// load reads the data with the request's declared states and settles the
// class (fitting it when asked).
func load(r io.Reader, name string, req *Request) (*Data, *markov.Class, error) {
	if req.CSV.Levels != nil && req.CSV.States == nil {
		req.CSV.States = req.CSV.Levels.Names() // numeric readings: the levels are declared
	}
	switch {
	case req.Fit && req.Class != nil:
		return nil, nil, errors.New("give a class or fit one, not both")
	case req.Fit && req.CSV.States == nil:
		return nil, nil, errors.New("fitting needs the declared states (--states a,b,c): the histogram's bins must be declared, not read off the data")
	case !req.Fit && req.Class == nil:
		return nil, nil, errors.New("no class: give one, or fit one over declared states")
	case req.Class != nil && req.CSV.States != nil && !slices.Equal(req.CSV.States, req.Class.States):
		return nil, nil, fmt.Errorf("declared states %q differ from the class's states %q", strings.Join(req.CSV.States, ","), strings.Join(req.Class.States, ","))
	}
	opts := req.CSV
	class := req.Class
	if class != nil {
		opts.States = class.States
	}
	data, err := ReadData(r, name, opts)
	if err != nil {
		return nil, nil, err
	}
	if req.Fit {
		ch, err := markov.Fit(opts.States, data.Runs(), req.Smoothing)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if class, err = markov.NewClass(ch.States, ch); err != nil {
			return nil, nil, err
		}
	}
	return data, class, nil
}

// ParseStates reads a declared state list "a,b,c" (distinct, non-empty);
// "" gives nil.
func ParseStates(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	st := strings.Split(s, ",")
	seen := map[string]bool{}
	for i := range st {
		st[i] = strings.TrimSpace(st[i])
		if st[i] == "" || seen[st[i]] {
			return nil, fmt.Errorf("states %q: want distinct non-empty names separated by commas", s)
		}
		seen[st[i]] = true
	}
	return st, nil
}

// ParseDelimiter reads a one-character field delimiter ("\t" for tab).
func ParseDelimiter(s string) (rune, error) {
	d := strings.ReplaceAll(s, `\t`, "\t")
	if utf8.RuneCountInString(d) != 1 {
		return 0, fmt.Errorf("delimiter %q: want exactly one character", s)
	}
	r, _ := utf8.DecodeRuneInString(d)
	return r, nil
}
