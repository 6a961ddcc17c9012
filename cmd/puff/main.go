// Command puff releases statistics of correlated data with Pufferfish
// privacy. It parses flags, calls the library and prints; see README.md.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/spf13/cobra"
)

func main() {
	cmd := root(os.Stdout)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "puff:", err)
		os.Exit(2)
	}
}

func root(stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "puff",
		Short: "Pufferfish privacy for correlated data: Markov Quilt and Wasserstein mechanisms, verification, composition",
		Long: `puff publishes statistics of correlated personal data — activity traces,
smart-meter readings, location histories — with an ε-Pufferfish guarantee
that holds against adversaries who know the data is a Markov chain from a
class Θ. Plain differential privacy does not: neighbouring readings leak a
reading.

Start with the built-in example:
  puff release                     # private histogram of a synthetic activity trace
  puff release --json | jq .       # the same, as JSON with the full audit report

Beyond one chain: wasserstein and bn release under any framework you write
down (joint tables or Bayesian networks), robust covers adversaries outside
Θ, compose totals a log of releases, local randomises binary readings on the
device, verify checks mechanisms exactly as hidden Markov models (including
an audit of release itself), and experiment regenerates the papers'
evaluations.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	c.SetOut(stdout)
	c.AddCommand(scaleCmd(), releaseCmd(), fitCmd(), localCmd(), verifyCmd(), wassersteinCmd(), robustCmd(), bnCmd(), composeCmd(), experimentCmd())
	return c
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func readClass(path string) (*markov.Class, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("class: %w", err)
	}
	defer f.Close()
	return markov.ParseClass(f, path)
}

func checkMethod(m string) error {
	for _, ok := range release.Methods {
		if m == ok {
			return nil
		}
	}
	return fmt.Errorf("--method %q: want one of %s", m, strings.Join(release.Methods, ", "))
}

func checkArgs(eps float64, method string) error {
	if !(eps > 0) || eps > 1e300 {
		return fmt.Errorf("--epsilon %v: must be a finite number > 0", eps)
	}
	return checkMethod(method)
}

func scaleCmd() *cobra.Command {
	var classPath, method string
	var eps float64
	var T int
	var asJSON bool
	c := &cobra.Command{
		Use:   "scale --class FILE --length T [--epsilon E] [--method M] [--json]",
		Short: "Laplace scale σ for a 1-Lipschitz query on chains of length T",
		Long: `scale computes the Laplace noise scale σ that makes F(X) + σ·Lap(1)
private for any 1-Lipschitz scalar query F on a chain of length T:

  exact    MQMExact: exact max-influence for every chain of the class
  approx   MQMApprox: bound from π_Θ and the eigengap g_Θ (ergodic chains)
  gk16     Ghosh–Kleinberg; not applicable when its spectral norm is ≥ 1
  groupdp  the whole chain as one group: T/ε
  dp       entry-level DP: 1/ε (no protection against correlation)

For MQM the report names the node that needs the most noise and its best
Markov quilt {X_{i−a}, X_{i+b}} (a = i: no left node; b = T−i+1: no right).

Class file (JSON):
  {"states": ["a","b"], "chains": [{"transition": [[0.9,0.1],[0.2,0.8]], "initial": "stationary"}]}
  "initial" is a probability vector, "stationary" or "any" (every initial distribution);
  or the binary interval class of seed 000 §5.2:
  {"binary_interval": {"lo": 0.1, "hi": 0.9, "step": 0.01}}

Example:
  puff scale --class class.json --length 100 --epsilon 1 --method exact --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkArgs(eps, method); err != nil {
				return err
			}
			if classPath == "" {
				return fmt.Errorf("--class FILE is required")
			}
			if T < 1 {
				return fmt.Errorf("--length %d: must be ≥ 1", T)
			}
			class, err := readClass(classPath)
			if err != nil {
				return err
			}
			s, err := release.ComputeScale(class, T, eps, method)
			if err != nil {
				return err
			}
			s.Class = release.Summarize(class, false)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "method\t%s\nepsilon\t%g\nlength\t%d\n", s.Method, s.Epsilon, s.Length)
			if s.Sigma != nil {
				fmt.Fprintf(w, "sigma\t%.10g\n", *s.Sigma)
			} else {
				fmt.Fprintf(w, "sigma\tnot applicable\n")
			}
			if s.Quilt != nil {
				fmt.Fprintf(w, "node\t%d\nquilt\ta=%d b=%d (card %d, two-sided %v)\n", s.Node, s.Quilt.A, s.Quilt.B, s.Quilt.Card(), *s.TwoSided)
			}
			if s.SpectralNorm != nil {
				fmt.Fprintf(w, "spectral norm\t%.6g\n", *s.SpectralNorm)
			}
			fmt.Fprintf(w, "guarantee\t%s\nclass\t%s\n", s.Guarantee, s.Class.Coverage)
			return w.Flush()
		},
	}
	f := c.Flags()
	f.StringVar(&classPath, "class", "", "class file (JSON) describing Θ")
	f.Float64Var(&eps, "epsilon", 1, "privacy parameter ε > 0")
	f.IntVar(&T, "length", 0, "chain length T (number of observations per sequence)")
	f.StringVar(&method, "method", "exact", "exact | approx | gk16 | groupdp | dp")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

type dataFlags struct {
	path      string
	opts      release.CSVOptions
	smoothing float64
}

func (d *dataFlags) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&d.path, "data", "", "CSV (optionally gzip) in long format series,time,state, or one state per line; default: the built-in example")
	f.StringVar(&d.opts.SeriesCol, "series-col", "series", "name of the series column (absent: one series)")
	f.StringVar(&d.opts.TimeCol, "time-col", "time", "name of the time column (absent: row order)")
	f.StringVar(&d.opts.StateCol, "state-col", "state", "name of the state column")
	f.Float64Var(&d.opts.Gap, "gap", 0, "split a series where the time step exceeds this (0: never split)")
	f.Float64Var(&d.smoothing, "smoothing", 0, "additive smoothing α for --fit")
}

func (d *dataFlags) read() (*release.Data, string, error) {
	if d.path == "" {
		data, err := release.ReadData(release.ExampleData(), "example/activity.csv", d.opts)
		return data, "example/activity.csv", err
	}
	f, err := os.Open(d.path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	data, err := release.ReadData(f, d.path, d.opts)
	return data, d.path, err
}

func releaseCmd() *cobra.Command {
	var df dataFlags
	var classPath, method string
	var eps float64
	var fit, relative, asJSON bool
	c := &cobra.Command{
		Use:   "release [--data FILE] [--class FILE | --fit] [--epsilon E] [--method M] [--json]",
		Short: "Release a private histogram of categorical time series",
		Long: `release reads categorical sequences, computes the noise scale of the
chosen method for every sequence length, and prints the histogram over the
states with independent Laplace noise in every bin, plus an audit report
(method, ε, class, σ, Lipschitz constant, per-bin scale, quilt, sizes).
The raw data and the true counts are never printed.

With no --data it runs on the built-in example (10 people × 8 hours of
activity labels) and its class. With your own data give --class FILE, or
--fit to estimate one chain from the data (its stationary start); a fitted
class is not itself protected, and the report says so.

Examples:
  puff release
  puff release --data trace.csv --class class.json --epsilon 0.5 --method approx
  puff release --data trace.csv.gz --fit --smoothing 0.5 --gap 60 --relative --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkArgs(eps, method); err != nil {
				return err
			}
			if fit && classPath != "" {
				return fmt.Errorf("give --class or --fit, not both")
			}
			data, name, err := df.read()
			if err != nil {
				return err
			}
			var class *markov.Class
			switch {
			case fit:
				ch, err := markov.Fit(data.States, data.Seqs, df.smoothing)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				class, _ = markov.NewClass(ch.States, ch)
			case classPath != "":
				if class, err = readClass(classPath); err != nil {
					return err
				}
			case df.path == "":
				class, err = markov.ParseClass(release.ExampleClass(), "example/activity_class.json")
				if err != nil {
					return err
				}
			default:
				return fmt.Errorf("give --class FILE (see 'puff scale --help' for the format) or --fit")
			}
			if err := data.Align(class.States, name); err != nil {
				return err
			}
			r, err := release.Histogram(data, class, fit, release.Options{Epsilon: eps, Method: method, Relative: relative})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "state\tprivate %s\n", r.Query)
			for _, b := range r.Histogram {
				fmt.Fprintf(w, "%s\t%.6g\n", b.State, b.Value)
			}
			fmt.Fprintf(w, "\nguarantee\t%s\nmethod\t%s, ε = %g\nsigma\t%.6g (1-Lipschitz), L = %.6g, per-bin Laplace scale %.6g\n",
				r.Guarantee, r.Method, r.Epsilon, r.Sigma, r.Lipschitz, r.PerBinScale)
			for _, s := range r.Scales {
				if s.Quilt != nil {
					fmt.Fprintf(w, "length %d\tσ = %.6g, node %d, quilt a=%d b=%d\n", s.Length, *s.Sigma, s.Node, s.Quilt.A, s.Quilt.B)
				}
			}
			fmt.Fprintf(w, "data\t%d sequences, %d observations, lengths %d–%d\nclass\t%s\n", r.Sequences, r.Observations, r.MinLength, r.MaxLength, r.Class.Coverage)
			for _, m := range r.Warnings {
				fmt.Fprintf(w, "warning\t%s\n", m)
			}
			return w.Flush()
		},
	}
	df.register(c)
	f := c.Flags()
	f.StringVar(&classPath, "class", "", "class file (JSON) describing Θ; see 'puff scale --help'")
	f.BoolVar(&fit, "fit", false, "fit one chain to the data (stationary start) instead of --class")
	f.Float64Var(&eps, "epsilon", 1, "privacy parameter ε > 0")
	f.StringVar(&method, "method", "exact", "exact | approx | gk16 | groupdp | dp")
	f.BoolVar(&relative, "relative", false, "release relative frequencies (L = 2/N) instead of counts (L = 2)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

func fitCmd() *cobra.Command {
	var df dataFlags
	var initial string
	c := &cobra.Command{
		Use:   "fit [--data FILE] [--smoothing α] [--initial stationary|any]",
		Short: "Fit a Markov chain to data and print it as a class file",
		Long: `fit prints the maximum-likelihood chain (with optional additive smoothing)
as a class file for 'puff scale' and 'puff release --class'. It reads the
same CSV formats as release. The fit is computed from the data and is not
private: do not publish it as if it were.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if initial != "stationary" && initial != "any" {
				return fmt.Errorf("--initial %q: want stationary or any", initial)
			}
			data, name, err := df.read()
			if err != nil {
				return err
			}
			ch, err := markov.Fit(data.States, data.Seqs, df.smoothing)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return writeJSON(cmd.OutOrStdout(), map[string]any{
				"states": ch.States,
				"chains": []any{map[string]any{"transition": ch.P, "initial": initial}},
			})
		},
	}
	df.register(c)
	c.Flags().StringVar(&initial, "initial", "stationary", "initial distribution written to the class: stationary or any")
	return c
}
