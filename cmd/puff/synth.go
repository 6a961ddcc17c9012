package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/release/commit"
	"github.com/pufferfish-privacy/pufferfish/synth"
)

func synthCmd() *cobra.Command {
	var df dataFlags
	var classPath, logPath, dataset, ledgerDSN, out, origin string
	var fit, asJSON bool
	var seed uint64
	var limits release.Limits
	var timeout time.Duration
	epsF, methodF := newEps("1"), newMethod()
	c := command("synth --data FILE (--class FILE | --fit --states a,b,c) --epsilon E --out FILE [--ledger DSN --dataset NAME]", "Release the transition counts and write synthetic series drawn from the chain they make", "synth", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		eps := epsF.Float()
		if err := checkEps(eps); err != nil {
			return err
		}
		if out == "" || df.path == "" {
			return errors.New("--data and --out are required")
		}
		if err := reading.CheckOutput("out", out, [2]string{"data", df.path}, [2]string{"class", classPath}, [2]string{"log", logPath}, [2]string{"ledger", ledgerDSN}); err != nil {
			return err
		}
		if limits.MaxCells < 1 || limits.MaxStates < 1 {
			return fmt.Errorf("--max-cells %d, --max-states %d: want ≥ 1 each", limits.MaxCells, limits.MaxStates)
		}
		ctx, cancel := computing(cmd, timeout)
		defer cancel()
		req := release.Request{Fit: fit, Smoothing: df.smoothing, Options: release.Options{Epsilon: eps, EpsilonRat: epsF.Rat(), Method: methodF.Name, Context: ctx, Limits: limits}}
		if classPath != "" && fit {
			return errors.New("give --class FILE or --fit, not both")
		}
		var err error
		if req.Class, err = release.ClassOf(classPath, fit, false); err != nil {
			return err
		}
		src, name, opts, err := df.Open(df.path)
		if err != nil {
			return err
		}
		defer src.Close()
		opts.KeepTimes = true // the synthetic rows are written at the data's times
		req.CSV = opts
		var data *reading.Data
		var rel *synth.Release
		var o *synth.Output
		res, err := commit.Do(cmd.Context(), commit.Where{Ledger: ledgerDSN, Log: logPath, Dataset: dataset, Origin: origin, DataName: name}, req, func(req release.Request) (*release.Pending, error) {
			d, class, err := release.Load(src, name, req)
			if err != nil {
				return nil, err
			}
			p, r, err := synth.Prepare(d, class, req.Fit, req.Options)
			if err != nil {
				return nil, stoppedErr(err, timeout)
			}
			data, rel = d, r
			o, err = synth.Create(out) // before the budget is spent (synth.Output)
			return p, err
		})
		if o != nil {
			defer o.Remove()
		}
		if err != nil {
			return err
		}
		rel, _ = res.Output.(*synth.Release) // nil: replayed
		w, err := o.Write(rel, data, seed, [3]string{df.Spec.SeriesCol, df.Spec.TimeCol, df.Spec.StateCol})
		if err != nil {
			return err
		}
		extra, field := res.Ledger()
		if asJSON {
			return release.WriteJSON(cmd.OutOrStdout(), rel, field, release.Field{Name: "synthetic", Value: w})
		}
		return rel.WriteText(cmd.OutOrStdout(), append(extra, [2]string{"synthetic", w.Line()})...)
	})
	df.register(c)
	f := c.Flags()
	f.StringVar(&classPath, "class", "", "class file (JSON) describing Θ; see 'puff scale --help'")
	f.BoolVar(&fit, "fit", false, "fit one chain to the data (stationary start) instead of --class; needs --states")
	f.Float64Var(&df.smoothing, "smoothing", 0, "additive smoothing α for --fit")
	f.Var(epsF, "epsilon", "privacy parameter ε > 0: a decimal, a fraction (1/2) or ln(r)")
	f.Var(methodF, "method", "exact | approx | gk16 | groupdp | dp")
	f.StringVar(&out, "out", "", "write the synthetic series here: CSV (series, time, state columns named as the data's), or Parquet when the name ends in .parquet")
	f.Uint64Var(&seed, "seed", 0, "seed of the synthetic series' sampling (post-processing; 0: a random seed, printed)")
	f.StringVar(&origin, "origin", "", "time of the chain's first step (as the data's times are written); a ledger dataset's origin is used by default")
	f.IntVar(&limits.MaxCells, "max-cells", release.DefaultMaxCells, "the most released numbers (states²) the release may have (refused before any work beyond)")
	limitFlags(c, &limits, &timeout)
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.StringVar(&logPath, "log", "", "append the release to this compose log (created if missing)")
	f.StringVar(&dataset, "dataset", "", "dataset name in the ledger (required with --ledger) or the log")
	f.StringVar(&ledgerDSN, "ledger", "", "release against this privacy-budget ledger (SQLite file or postgres:// URL): refused with status 4, nothing drawn or written, when the budget would be exceeded")
	return c
}
