package main

import (
	"fmt"
	"os"
	"time"

	"github.com/pufferfish-privacy/pufferfish/experiment"
	"github.com/spf13/cobra"
)

func experimentCmd() *cobra.Command {
	var o experiment.Options
	var quiet bool
	c := &cobra.Command{
		Use:   "experiment NAME [--out DIR] [--reps N] [--seed S] [--data DIR] [--fast]",
		Short: "Reproduce the papers' evaluations: CSV, Markdown tables, PNG and SVG plots",
		Long: `experiment regenerates the evaluations of the papers ([SWC17], [SWC16], [CGSSY]) on synthetic and
real data and writes NAME.csv, NAME.md and PNG + SVG plots into --out:

  synthetic  binary chains, Θ = p0, p1 ∈ [ℓ, 1−ℓ]: error of GroupDP, GK16,
             MQMApprox, MQMExact against ℓ for ε ∈ {0.2, 1, 5}, T = 100, and
             the time to compute each scale ([SWC17] §5.2, Figure 4, Table 2)
  region     where GK16 or MQMExact adds less noise over a 99×99 grid of
             (p0, p1), and where GK16 does not apply ([SWC16] Figure 3)
  activity   UCI HAR activity labels: aggregate and individual histograms,
             all mechanisms, ε = 1 ([SWC17] Table 1)
  power      UCI household power and AMPds2 water, 51 levels: errors for
             ε ∈ {0.2, 1, 5} and scale times ([SWC17] Tables 2, 3)
  local      [CGSSY]: single-reading vs correlation-aware attacks over θ, and
             attackers' accuracy on PhysioNet N10 under the DP, published and
             certified flips
  all        everything

Noise comes from the product's sampler driven by a seeded generator
(--seed), so runs are reproducible; that generator exists only here, never
in release or sanitize. Real data is read from --data (default: $PUFF_DATA,
else the repository's data/ directory, found from any directory inside it;
data/README.md lists sources, licences and checksums).

Example:
  puff experiment synthetic --out results --reps 500`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Reps < 0 {
				return fmt.Errorf("--reps %d: want ≥ 0 (0 = the experiment's default)", o.Reps)
			}
			if !quiet {
				o.Progress = os.Stderr
			}
			start := time.Now()
			outs, err := experiment.Run(args[0], o)
			for _, out := range outs {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d files in %s (%.1f s)\n", out.Name, len(out.Files), o.Out, out.Elapsed.Seconds())
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "done in %.1f s\n", time.Since(start).Seconds())
			return nil
		},
	}
	def := experiment.FindData()
	c.Flags().StringVar(&o.Out, "out", "experiments", "output directory")
	c.Flags().IntVar(&o.Reps, "reps", 0, "repetitions of every noisy release (0: the experiment's default)")
	c.Flags().Uint64Var(&o.Seed, "seed", 1, "seed of the experiment's generator")
	c.Flags().StringVar(&o.Data, "data", def, "directory with the real data files")
	c.Flags().BoolVar(&o.Fast, "fast", false, "small grids and few repetitions (what the tests run)")
	c.Flags().BoolVar(&quiet, "quiet", false, "no progress bar")
	return c
}
