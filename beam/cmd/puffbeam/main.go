// Command puffbeam releases a private histogram of many people's series
// with Apache Beam: the same report as puff release --json, computed where
// the data is (see beam/README.md). Flags follow puff release's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs" // gs:// inputs on Dataflow
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/pufferfish-privacy/pufferfish/beam/puffbeam"
	"github.com/pufferfish-privacy/pufferfish/epsilon"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

func main() {
	var cfg puffbeam.Config
	var data reading.DataFlags // puff release's reading flags, registered by the core
	var classPath, eps string
	flag.StringVar(&cfg.Input, "input", "", "glob of long-format CSV files (gzip by .gz) or Parquet files, e.g. 'data/part-*.csv.gz'")
	flag.StringVar(&classPath, "class", "", "class file (JSON) describing Θ, as puff release --class")
	flag.BoolVar(&cfg.Fit, "fit", false, "fit one chain (stationary start) from the transition counts instead of --class; needs --states or levels")
	flag.Float64Var(&cfg.Smoothing, "smoothing", 0, "additive smoothing α for --fit")
	flag.DurationVar(&cfg.Window, "window", 0, "one histogram per calendar window of this length (e.g. 24h; UTC unless --tz), with the total guarantee")
	flag.StringVar(&cfg.Profile, "profile", "", "the query for every cell of a profile pooled over all days: hour-of-day, day-of-week or week-hour (in --tz), as puff release --profile; the whole profile costs one ε")
	flag.StringVar(&eps, "epsilon", "1", "privacy parameter ε > 0: a decimal, a fraction or ln(r)")
	flag.StringVar(&cfg.Method, "method", "exact", "exact | approx | gk16 | groupdp | dp")
	flag.StringVar(&cfg.Query, "query", "", "counts (default), relative or mean")
	flag.StringVar(&cfg.Output, "output", "", "path of the JSON report (the object puff release --json prints)")
	flag.StringVar(&cfg.Ledger, "ledger", "", "release against this privacy-budget ledger (a SQLite file or a postgres:// URL; see 'puff ledger --help'), as puff release --ledger: refused with status 4, nothing drawn or written, when the budget would be exceeded; the release stage's worker must reach it (a SQLite file: local runners only)")
	flag.StringVar(&cfg.Dataset, "dataset", "", "dataset name in the ledger (required with --ledger) or the log (default: the input's name)")
	flag.StringVar(&cfg.Log, "log", "", "append the release to this compose log (created if missing), as puff release --log; a retried release stage may append twice: prefer --ledger on a cluster")
	verbose := flag.Bool("verbose", false, "also print the runner's and Beam's logs, and the runner's whole report of a failure, to stderr (without it, a failure prints its cause alone)")
	// every series is ordered by time as it is assembled: no --sort
	data.Register(flag.CommandLine, "sort")
	flag.Parse()
	beam.Init() // first thing after flags: workers re-run this binary
	if !*verbose {
		// Beam's and Prism's logs (slog, set up by beam.Init) stay out of
		// stderr: a failure's cause is its first line, not its 34th
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	if err := run(cfg, &data, classPath, eps); err != nil {
		fmt.Fprintln(os.Stderr, "puffbeam:", puffbeam.Cause(err))
		if *verbose && puffbeam.Cause(err) != err {
			fmt.Fprintln(os.Stderr, "\nthe runner's report:\n"+err.Error())
		}
		if refused(err) {
			os.Exit(exitRefused)
		}
		os.Exit(2)
	}
}

// exitRefused is the status of a release the ledger refused (over
// budget), as puff release's.
const exitRefused = 4

// refused says err is the ledger's refusal (over budget): the error
// itself, or the runner's report of it, which carries only its text.
func refused(err error) bool {
	return errors.Is(err, ledger.ErrRefused) || strings.Contains(err.Error(), ledger.ErrRefused.Error())
}

// refusedError is the ledger's refusal as reported by the runner.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return ledger.ErrRefused }

// refusal is the line of the runner's error that holds the ledger's
// refusal.
func refusal(err error) error {
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.Contains(l, ledger.ErrRefused.Error()) {
			return &refusedError{strings.TrimSpace(l)}
		}
	}
	return err
}

// checkLedger opens the ledger and finds the dataset, as puff release
// does before it reads any data.
func checkLedger(dsn, dataset string) error {
	ctx := context.Background()
	s, err := ledger.Open(ctx, dsn, false)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Definition(ctx, dataset)
	return err
}

func run(cfg puffbeam.Config, data *reading.DataFlags, classPath, eps string) error {
	if cfg.Input == "" || cfg.Output == "" || (classPath == "") == !cfg.Fit {
		return fmt.Errorf("--input and --output are required, and --class FILE or --fit (not both)")
	}
	// the report never overwrites an input (the data's files, the class,
	// the ledger or log), however the path is spelled or linked
	ins := [][2]string{{"class", classPath}, {"ledger", cfg.Ledger}, {"log", cfg.Log}}
	if m, err := filepath.Glob(cfg.Input); err == nil {
		for _, f := range m {
			ins = append(ins, [2]string{"input", f})
		}
	}
	if err := reading.CheckOutput("output", cfg.Output, ins...); err != nil {
		return err
	}
	e, err := epsilon.Parse(eps)
	if err != nil {
		return err
	}
	cfg.Epsilon = e.Value
	if e.Rat != nil {
		cfg.EpsilonRat = e.Rat.RatString() // charged exactly by the ledger
	}
	if cfg.Ledger != "" && cfg.Log != "" {
		return fmt.Errorf("give --ledger or --log, not both")
	}
	if cfg.Ledger != "" {
		if cfg.Dataset == "" {
			return fmt.Errorf("--ledger needs --dataset NAME (a dataset created with 'puff ledger init')")
		}
		// fail before the data is read: a missing ledger or dataset
		if err := checkLedger(cfg.Ledger, cfg.Dataset); err != nil {
			return err
		}
		cfg.RunID = puffbeam.NewRunID() // once: every retry of the release stage replays it
	}
	if _, err := data.CSV(); err != nil {
		return err
	}
	cfg.Spec, cfg.Warning = data.Given(), data.GapWarning()
	if classPath != "" {
		b, err := os.ReadFile(classPath)
		if err != nil {
			return fmt.Errorf("class: %w", err)
		}
		cfg.Class = string(b)
	}
	p, s := beam.NewPipelineWithRoot()
	if err := puffbeam.Build(s, cfg); err != nil {
		return err
	}
	if err := beamx.Run(context.Background(), p); err != nil {
		if refused(err) {
			// the runner passes the worker's error on as text, in a
			// trace of the stage: the ledger's own words, as puff release
			// prints them
			return refusal(err)
		}
		return err
	}
	if _, err := os.Stat(cfg.Output); err != nil {
		return fmt.Errorf("the pipeline wrote no report: %w", err)
	}
	return nil
}
