// Command puff releases statistics of correlated data with Pufferfish
// privacy. It parses flags, calls the library and prints; see README.md.
package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/hmm"
	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/release/commit"
)

// Exit statuses: 0 success, 2 bad input or an error (nothing printed on
// stdout), 3 a verdict of "violated" and 5 "undecided" (verify check: the
// answer is printed, and scripts can gate on the status), 4 a release the
// ledger refused (over budget; nothing printed on stdout or recorded).
const (
	exitError     = 2
	exitViolated  = 3
	exitUndecided = 5
)

// statusError ends the command with a status and no further message (the
// output was already printed).
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

func verdictStatus(v hmm.Verdict) error {
	switch v {
	case hmm.Violated:
		return &statusError{exitViolated, "violated"}
	case hmm.Undecided:
		return &statusError{exitUndecided, "undecided"}
	}
	return nil
}

func main() {
	cmd := root(os.Stdout)
	if err := cmd.Execute(); err != nil {
		var se *statusError
		if errors.As(err, &se) {
			os.Exit(se.code)
		}
		fmt.Fprintln(os.Stderr, "puff:", err)
		if errors.Is(err, ledger.ErrRefused) {
			os.Exit(exitRefused)
		}
		os.Exit(exitError)
	}
}

func root(stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:           "puff",
		Short:         "Pufferfish privacy for correlated data: Markov Quilt and Wasserstein mechanisms, verification, composition",
		Long:          help("puff"),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	c.SetOut(stdout)
	c.AddCommand(scaleCmd(), releaseCmd(), fitCmd(), convertCmd(), localCmd(), verifyCmd(), wassersteinCmd(), robustCmd(), bnCmd(), composeCmd(), ledgerCmd(), streamCmd(), synthCmd(), consistentCmd(), serveCmd(), tokenCmd(), experimentCmd())
	return c
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// emit prints v as indented JSON with --json, else as text.
func emit(cmd *cobra.Command, asJSON bool, v any, text func(io.Writer) error) error {
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), v)
	}
	return text(cmd.OutOrStdout())
}

// command is a command whose long help is help/NAME.txt.
func command(use, short, name string, args cobra.PositionalArgs, run func(*cobra.Command, []string) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Long: help(name), Args: args, RunE: run}
}

// group is a command of subcommands, which alone asks for one of them.
func group(use, short, name string, subs ...*cobra.Command) *cobra.Command {
	var names []string
	for _, s := range subs {
		names = append(names, s.Name())
	}
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	c := command(use, short, name, cobra.NoArgs, func(*cobra.Command, []string) error {
		return fmt.Errorf("give a subcommand: %s (see 'puff %s --help')", list, name)
	})
	c.AddCommand(subs...)
	return c
}

// withLedger opens the ledger at dsn (created if missing with create) for
// the length of do.
func withLedger(cmd *cobra.Command, dsn string, create bool, do func(ledger.Store) error) error {
	s, err := ledger.Open(cmd.Context(), dsn, create)
	if err != nil {
		return err
	}
	defer s.Close()
	return do(s)
}

func scaleCmd() *cobra.Command {
	var classPath string
	epsF, methodF := newEps("1"), newMethod()
	var T, start int
	var asJSON, leakage bool
	var limits release.Limits
	var timeout time.Duration
	c := command("scale --class FILE --length T [--epsilon E] [--method M] [--json]", "Laplace scale σ for a 1-Lipschitz query on chains of length T", "scale", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		ctx, cancel := computing(cmd, timeout)
		defer cancel()
		out, err := release.ScaleQuery{ClassPath: classPath, Length: T, Start: start, Epsilon: epsF.Float(), Method: methodF.Name, Leakage: leakage, Limits: limits}.Compute(ctx)
		if err != nil {
			return stoppedErr(err, timeout)
		}
		return emit(cmd, asJSON, out, out.WriteText)
	})
	f := c.Flags()
	f.StringVar(&classPath, "class", "", "class file (JSON) describing Θ")
	f.Var(epsF, "epsilon", "privacy parameter ε > 0: a decimal, a fraction (1/2) or ln(r)")
	f.IntVar(&T, "length", 0, "chain length T (number of observations per sequence)")
	f.IntVar(&start, "start", 1, "time step (1-based) at which the segment of T readings begins; a later start is calibrated from the marginal q·P^(S−1)")
	f.Var(methodF, "method", "exact | approx | gk16 | groupdp | dp")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.BoolVar(&leakage, "leakage", false, "print instead the temporal leakage bounds' per-bin scale for windowed histograms of any widths of T readings (--length 0: any length, with an explicit output's lower limit for stationary chains; docs/math.md §8.6, §8.10): the scalar recursion, the pairwise certificate, and the smaller")
	limitFlags(c, &limits, &timeout)
	f.Float64Var(&limits.MaxSearchWork, "max-search-work", release.DefaultMaxSearchWork, "the most multiply-adds (≈ 1 s per 1e9) the exact quilt search may take, estimated up front from the distances it can visit (each a power of P and its ratio tables, k³ each; refused beyond it before any work) and counted as it runs")
	return c
}

// limitFlags registers --max-states and --timeout (puff scale, puff
// release): the bounds on work that grows with the class and the length.
func limitFlags(c *cobra.Command, l *release.Limits, timeout *time.Duration) {
	f := c.Flags()
	f.IntVar(&l.MaxStates, "max-states", release.DefaultMaxStates, fmt.Sprintf("the most states (bins, levels) a class may have, refused before any work beyond (fitting and calibrating k states hold ≈ max(256 MiB, 600·k²) bytes: %.2g GB at the default)", release.StateBytes(release.DefaultMaxStates)/1e9))
	f.DurationVar(timeout, "timeout", DefaultTimeout, "stop computing σ after this long (nothing is released or recorded); 0: no limit")
	f.Float64Var(&l.MaxLeakageWork, "max-leakage-work", release.DefaultMaxLeakageWork, "the most multiply-adds the pairwise leakage bound may take, estimated up front and counted as it runs (beyond it the bound is not computed, or its linear programs are left out, and the report says why)")
	memoryFlag(c, "the computation of σ")
}

// dataFlags are --data and the reading flags of every command that reads
// data, registered once in package reading (reading.DataFlags, shared
// with the Beam pipeline).
type dataFlags struct {
	path string
	reading.DataFlags
	smoothing float64
}

func (d *dataFlags) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&d.path, "data", "", "CSV (optionally gzip) in long format series,time,state, or one state per line; or Parquet (by its magic bytes) with the same columns")
	gf := flag.NewFlagSet(c.Name(), flag.ContinueOnError)
	d.DataFlags.Register(gf)
	f.AddGoFlagSet(gf)
}

// Open and Read open and read the data at path with the flags' reading
// options (release.OpenWith, release.ReadWith).
func (d *dataFlags) Open(path string) (io.ReadCloser, string, reading.CSVOptions, error) {
	return release.OpenWith(path, &d.DataFlags)
}

func (d *dataFlags) Read(path string, keepTimes bool) (*reading.Data, string, error) {
	return release.ReadWith(path, &d.DataFlags, keepTimes)
}

func releaseCmd() *cobra.Command {
	var df dataFlags
	var classPath, logPath, dataset, ledgerDSN string
	epsF, methodF := newEps("1"), newMethod()
	var fit, relative, asJSON bool
	var query, window, calibration, origin, profile string
	var limits release.Limits
	var timeout time.Duration
	c := command("release [--data FILE] [--class FILE | --fit --states a,b,c] [--epsilon E] [--method M] [--json]", "Release a private histogram of categorical time series", "release", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		eps, method := epsF.Float(), methodF.Name
		if err := checkEps(eps); err != nil {
			return err
		}
		req := release.Request{Fit: fit, Smoothing: df.smoothing, Options: release.Options{Epsilon: eps, EpsilonRat: epsF.Rat(), Method: method,
			Query: cmp.Or(query, map[bool]string{true: "relative"}[relative]), Context: cmd.Context(), Limits: limits, Profile: profile}} // --query, when given, wins over --relative
		if limits.MaxWindows < 1 || limits.MaxCells < 1 || limits.MaxStates < 1 || !(limits.MaxLeakageWork > 0) {
			return fmt.Errorf("--max-windows %d, --max-cells %d, --max-states %d, --max-leakage-work %g: want ≥ 1 each (work > 0)", limits.MaxWindows, limits.MaxCells, limits.MaxStates, limits.MaxLeakageWork)
		}
		ctx, cancel := computing(cmd, timeout)
		defer cancel()
		req.Context = ctx
		var err error
		if req.Class, err = release.ClassOf(classPath, fit, df.path == ""); err != nil {
			return err
		}
		src, name, opts, err := df.Open(df.path)
		if err != nil {
			return err
		}
		defer src.Close()
		req.CSV = opts
		width, err := req.ParseWindows(window, calibration)
		if err != nil {
			return err
		}
		res, err := commit.Do(cmd.Context(), commit.Where{Ledger: ledgerDSN, Log: logPath, Dataset: dataset, Origin: origin, DataName: name}, req, func(req release.Request) (*release.Pending, error) {
			p, err := release.Prepare(src, name, req, width)
			return p, stoppedErr(err, timeout)
		})
		if err != nil {
			return err
		}
		if r, ok := res.Output.(*release.Report); ok && df.GapWarning() != "" {
			r.Warnings = append(r.Warnings, df.GapWarning())
		}
		extra, field := res.Ledger()
		if asJSON {
			return release.WriteJSON(cmd.OutOrStdout(), res.Output, field)
		}
		return res.Output.WriteText(cmd.OutOrStdout(), extra...)
	})
	df.register(c)
	f := c.Flags()
	f.StringVar(&classPath, "class", "", "class file (JSON) describing Θ; see 'puff scale --help'")
	f.BoolVar(&fit, "fit", false, "fit one chain to the data (stationary start) instead of --class; needs --states")
	f.Float64Var(&df.smoothing, "smoothing", 0, "additive smoothing α for --fit")
	f.Var(epsF, "epsilon", "privacy parameter ε > 0: a decimal, a fraction (1/2) or ln(r)")
	f.Var(methodF, "method", "exact | approx | gk16 | groupdp | dp")
	f.BoolVar(&relative, "relative", false, "release relative frequencies (L = 2/N) instead of counts (L = 2); same as --query relative")
	f.StringVar(&window, "window", "", "release one histogram per calendar window of this length (e.g. 24h, 168h; UTC unless --tz) with the total guarantee of all")
	f.StringVar(&profile, "profile", "", "release the query for every cell of a profile pooled over all days: hour-of-day (24 cells), day-of-week (7) or week-hour (168), in --tz; the whole profile costs one ε (docs/math.md §4.15)")
	f.StringVar(&origin, "origin", "", "time of the chain's first step (as the data's times are written): each series is calibrated at its place after it; a ledger dataset's origin (puff ledger init --origin) is used by default")
	f.StringVar(&calibration, "window-calibration", "joint", "with --window: joint (every window with σ of the whole chain; all windows together cost ε, docs/math.md §4.8) or per-window (each window on its own segment; the total composes them and is far larger)")
	f.IntVar(&limits.MaxWindows, "max-windows", release.DefaultMaxWindows, "the most calendar windows one --window release may have (refused before any work beyond)")
	f.IntVar(&limits.MaxCells, "max-cells", release.DefaultMaxCells, "the most released numbers (windows × bins) one release may have (refused before any work beyond)")
	limitFlags(c, &limits, &timeout)
	f.StringVar(&query, "query", "", "counts (L = 2), relative (L = 2/N) or mean (the mean level value, numeric readings; L = (max − min level value)/N)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.StringVar(&logPath, "log", "", "append the release to this compose log (created if missing) and print the total guarantee; a log has no budget: prefer --ledger (move a log into one with puff ledger import)")
	f.StringVar(&dataset, "dataset", "", "dataset name in the ledger (required with --ledger) or the log (default: the data file's name)")
	f.StringVar(&ledgerDSN, "ledger", "", "release against this privacy-budget ledger (a SQLite file or a postgres:// URL; see 'puff ledger --help'): refused with status 4, nothing drawn or printed, when the budget would be exceeded")
	return c
}

func fitCmd() *cobra.Command {
	var df dataFlags
	var initial string
	c := command("fit [--data FILE] [--states a,b,c] [--smoothing α] [--initial stationary|any]", "Fit a Markov chain to data and print it as a class file", "fit", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		if initial != "stationary" && initial != "any" {
			return fmt.Errorf("--initial %q: want stationary or any", initial)
		}
		data, name, err := df.Read(df.path, false)
		if err != nil {
			return err
		}
		kind := markov.InitStationary
		if initial == "any" {
			kind = markov.InitAny
		}
		class, err := release.FitClass(data, name, df.smoothing, kind, df.Spec.States == "")
		if err != nil {
			return err
		}
		return writeJSON(cmd.OutOrStdout(), class)
	})
	df.register(c)
	c.Flags().Float64Var(&df.smoothing, "smoothing", 0, "additive smoothing α")
	c.Flags().StringVar(&initial, "initial", "stationary", "initial distribution written to the class: stationary or any")
	return c
}
