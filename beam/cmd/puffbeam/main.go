// Command puffbeam releases a private histogram of many people's series
// with Apache Beam: the same report as puff release --json, computed where
// the data is (see beam/README.md). Flags follow puff release's.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs" // gs:// inputs on Dataflow
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/pufferfish-privacy/pufferfish/beam/puffbeam"
	"github.com/pufferfish-privacy/pufferfish/epsilon"
	"github.com/pufferfish-privacy/pufferfish/release"
)

type formats []string

func (f *formats) String() string     { return strings.Join(*f, ";") }
func (f *formats) Set(s string) error { *f = append(*f, s); return nil }

func main() {
	var cfg puffbeam.Config
	var classPath, eps string
	var gap float64
	var tf formats
	flag.StringVar(&cfg.Input, "input", "", "glob of long-format CSV files (gzip by .gz) or Parquet files, e.g. 'data/part-*.csv.gz'")
	flag.StringVar(&classPath, "class", "", "class file (JSON) describing Θ, as puff release --class")
	flag.BoolVar(&cfg.Fit, "fit", false, "fit one chain (stationary start) from the transition counts instead of --class; needs --states or levels")
	flag.Float64Var(&cfg.Smoothing, "smoothing", 0, "additive smoothing α for --fit")
	flag.StringVar(&cfg.Spec.States, "states", "", "the declared states in order, a,b,c (with --fit)")
	flag.DurationVar(&cfg.Window, "window", 0, "one histogram per calendar window of this length (e.g. 24h; UTC unless --tz), with the total guarantee")
	flag.StringVar(&eps, "epsilon", "1", "privacy parameter ε > 0: a decimal, a fraction or ln(r)")
	flag.StringVar(&cfg.Method, "method", "exact", "exact | approx | gk16 | groupdp | dp")
	flag.StringVar(&cfg.Query, "query", "", "counts (default), relative or mean")
	flag.StringVar(&cfg.Output, "output", "", "path of the JSON report (the object puff release --json prints)")
	flag.StringVar(&cfg.Spec.SeriesCol, "series-col", "", "series column (default series)")
	flag.StringVar(&cfg.Spec.TimeCol, "time-col", "", "time column (default time; required: rows of a series are ordered by time across files)")
	flag.StringVar(&cfg.Spec.StateCol, "state-col", "", "state column (default state)")
	flag.StringVar(&cfg.Spec.Delimiter, "delimiter", "", "field delimiter (default ,)")
	flag.Float64Var(&cfg.Spec.Step, "step", 0, "time step of the grid (0: the smallest positive difference in the data)")
	flag.Float64Var(&gap, "gap", 0, "deprecated, no effect (as in puff release)")
	flag.StringVar(&cfg.Spec.ValueCol, "value-col", "", "numeric readings column, with --levels or --edges")
	flag.StringVar(&cfg.Spec.Levels, "levels", "", "LO:HI:N equal-width public levels")
	flag.StringVar(&cfg.Spec.Edges, "edges", "", "e1,e2,... public level edges")
	flag.StringVar(&cfg.Spec.LevelValues, "level-values", "", "level values for --query mean")
	flag.Var(&tf, "time-format", "Go layout of the time column (repeatable)")
	flag.StringVar(&cfg.Spec.TZ, "tz", "", "time zone of times without one (default UTC)")
	flag.Float64Var(&cfg.Spec.TimeUnit, "time-unit", 0, "seconds per unit of a numeric time")
	flag.Parse()
	beam.Init() // first thing after flags: workers re-run this binary
	cfg.Spec.TimeFormat = tf
	if err := run(cfg, classPath, eps, gap); err != nil {
		fmt.Fprintln(os.Stderr, "puffbeam:", err)
		os.Exit(2)
	}
}

func run(cfg puffbeam.Config, classPath, eps string, gap float64) error {
	if cfg.Input == "" || cfg.Output == "" || (classPath == "") == !cfg.Fit {
		return fmt.Errorf("--input and --output are required, and --class FILE or --fit (not both)")
	}
	e, err := epsilon.Parse(eps)
	if err != nil {
		return err
	}
	cfg.Epsilon = e.Value
	if math.IsNaN(gap) || gap < 0 || math.IsInf(gap, 0) {
		return fmt.Errorf("--gap %v: want a finite number ≥ 0", gap)
	}
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "gap" {
			cfg.Warning = "--gap has no effect: series are never split into independent pieces (pieces of one series are correlated); readings are placed on the time grid and missing ones are accounted for"
		}
	})
	if classPath != "" {
		b, err := os.ReadFile(classPath)
		if err != nil {
			return fmt.Errorf("class: %w", err)
		}
		cfg.Class = string(b)
	}
	if _, err := cfg.Spec.CSV(); err != nil {
		return fmt.Errorf("--%w", err)
	}
	var _ release.Spec
	p, s := beam.NewPipelineWithRoot()
	if err := puffbeam.Build(s, cfg); err != nil {
		return err
	}
	if err := beamx.Run(context.Background(), p); err != nil {
		return err
	}
	if _, err := os.Stat(cfg.Output); err != nil {
		return fmt.Errorf("the pipeline wrote no report: %w", err)
	}
	return nil
}
