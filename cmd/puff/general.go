package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/framework"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/ledger/logfile"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
	"github.com/pufferfish-privacy/pufferfish/robust"
	"github.com/pufferfish-privacy/pufferfish/wasserstein"
)

func wassersteinCmd() *cobra.Command {
	var path, deltaS, dataS string
	epsF := newEps("")
	var asJSON bool
	c := command("wasserstein", "Wasserstein Mechanism: ε-Pufferfish for any framework over discrete data", "wasserstein", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		eps := epsF.Float()
		f, data, err := framework.Load(path, dataS, eps, false)
		if err != nil {
			return err
		}
		delta, err := ratexpr.Eval(deltaS, nil)
		if err == nil {
			err = checks.Delta(delta)
		}
		if err != nil {
			return fmt.Errorf("--delta: %v", err)
		}
		rep, err := wasserstein.Run(f, data, eps, delta, noise.NewLaplace(nil))
		if err != nil {
			return err
		}
		return emit(cmd, asJSON, rep, func(w io.Writer) error { return rep.WriteText(f, w) })
	})
	c.Flags().StringVar(&path, "framework", "", "framework JSON file (see above)")
	c.Flags().Var(epsF, "epsilon", "privacy parameter ε > 0: a decimal, a fraction (1/2) or ln(r)")
	c.Flags().StringVar(&deltaS, "delta", "0", "δ in [0, 1) for the (ε, δ) variant (fraction or decimal)")
	c.Flags().StringVar(&dataS, "data", "", "comma-separated database to release (overrides the file's data)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func robustCmd() *cobra.Command {
	var path, advPath string
	epsF := newEps("")
	var asJSON bool
	c := command("robust", "Privacy against an adversary whose belief lies outside Θ (Theorem 2.4)", "robust", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		eps := epsF.Float()
		out, err := robust.BeliefsFiles(path, advPath, eps)
		if err != nil {
			return err
		}
		return emit(cmd, asJSON, map[string]any{"epsilon": eps, "beliefs": out}, func(w io.Writer) error { return robust.WriteBeliefs(w, out) })
	})
	c.Flags().StringVar(&path, "framework", "", "framework JSON file defining Θ")
	c.Flags().StringVar(&advPath, "adversary", "", "framework-format JSON file whose thetas are the adversary's beliefs")
	c.Flags().Var(epsF, "epsilon", "the mechanism's ε under Θ: a decimal, a fraction (1/2) or ln(r)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func bnCmd() *cobra.Command {
	var path, dataS string
	epsF := newEps("")
	var asJSON bool
	var tableLimit, candLimit int
	var workLimit float64
	c := command("bn", "Markov Quilt Mechanism on Bayesian networks (Algorithm 2)", "bn", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		eps := epsF.Float()
		f, data, err := framework.Load(path, dataS, eps, true)
		if err != nil {
			return err
		}
		rep, err := mqm.RunNetwork(f, data, eps, mqm.NetworkOptions{TableLimit: tableLimit, CandidateLimit: candLimit, WorkLimit: workLimit}, noise.NewLaplace(nil))
		if err != nil {
			return err
		}
		return emit(cmd, asJSON, rep, rep.WriteText)
	})
	c.Flags().StringVar(&path, "framework", "", "framework JSON file whose thetas are networks")
	c.Flags().Var(epsF, "epsilon", "privacy parameter ε > 0: a decimal, a fraction (1/2) or ln(r)")
	c.Flags().StringVar(&dataS, "data", "", "comma-separated database to release (overrides the file's data)")
	c.Flags().IntVar(&tableLimit, "table-limit", 0, "largest inference table (entries); 0 = 4194304")
	c.Flags().IntVar(&candLimit, "candidate-limit", 0, "most candidate quilts per node; 0 = 4194304")
	c.Flags().Float64Var(&workLimit, "work-limit", 0, "most estimated search steps (≈ 7 s per 1e8); 0 = 2e8")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func composeCmd() *cobra.Command {
	var logPath, dataset string
	var asJSON bool
	c := command("compose", "Total Pufferfish guarantee of a sequence of releases, and the rule used", "compose", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		if logPath == "" {
			return fmt.Errorf("--log FILE is required")
		}
		out, err := logfile.Guarantees(logPath, dataset)
		if out == nil {
			return err
		}
		text := func(w io.Writer) error { return compose.WriteText(w, out) }
		if perr := emit(cmd, asJSON, map[string]any{"datasets": out}, text); perr != nil {
			return perr
		}
		return err // after the datasets a rule covers: those none covers
	})
	c.Flags().StringVar(&logPath, "log", "", "release log JSON file")
	c.Flags().StringVar(&dataset, "dataset", "", "only this dataset (default: all)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
