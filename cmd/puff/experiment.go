package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/experiment"
)

func experimentCmd() *cobra.Command {
	var o experiment.Options
	var quiet bool
	c := command("experiment NAME [--out DIR] [--reps N] [--seed S] [--data DIR] [--fast]", "Reproduce the papers' evaluations: CSV, Markdown tables, PNG and SVG plots", "experiment", cobra.ExactArgs(1), func(cmd *cobra.Command, args []string) error {
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
		if err == nil {
			fmt.Fprintf(cmd.OutOrStdout(), "done in %.1f s\n", time.Since(start).Seconds())
		}
		return err
	})
	def := experiment.FindData()
	c.Flags().StringVar(&o.Out, "out", "experiments", "output directory")
	c.Flags().IntVar(&o.Reps, "reps", 0, "repetitions of every noisy release (0: the experiment's default)")
	c.Flags().Uint64Var(&o.Seed, "seed", 1, "seed of the experiment's generator")
	c.Flags().StringVar(&o.Data, "data", def, "directory with the real data files")
	c.Flags().BoolVar(&o.Fast, "fast", false, "small grids and few repetitions (what the tests run)")
	c.Flags().BoolVar(&quiet, "quiet", false, "no progress bar")
	return c
}
