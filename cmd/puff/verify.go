package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/audit"
	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/hmm"
	"github.com/pufferfish-privacy/pufferfish/hmm/builtin"
	"github.com/pufferfish-privacy/pufferfish/internal/progress"
)

// verifyLimits are --timeout, --max-work and --max-memory of puff verify
// loss, check and sweep (hmm.Options).
type verifyLimits struct {
	hmm.Limits
	timeout time.Duration
}

func (v *verifyLimits) register(c *cobra.Command) {
	c.Flags().DurationVar(&v.timeout, "timeout", DefaultTimeout, "stop the verification after this long (nothing is printed); 0: no limit")
	c.Flags().Float64Var(&v.MaxWork, "max-work", hmm.DefaultMaxWork, "the most word multiply-adds the verification may take (≈ 1 s per 1e9), estimated up front (refused beyond it before any work) and counted as it runs")
	memoryFlag(c, "the verification (its forward vectors, estimated up front)")
}

// run calls do under the limits and a context that ends at --timeout or
// on SIGINT or SIGTERM, and says why it stopped.
func (v *verifyLimits) run(cmd *cobra.Command, do func(hmm.Options) error) error {
	ctx, cancel := computing(cmd, v.timeout)
	defer cancel()
	v.MaxMemory = float64(maxMemoryMB) * (1 << 20)
	return stoppedErr(do(hmm.Options{Context: ctx, Limits: v.Limits}), v.timeout)
}

func verifyCmd() *cobra.Command {
	c := &cobra.Command{Use: "verify", Short: "Verify Pufferfish privacy of a mechanism modelled as a hidden Markov model", Long: help("verify")}
	c.AddCommand(verifyLossCmd(), verifyCheckCmd(), verifySweepCmd(), verifyAuditCmd())
	return c
}

func verifyLossCmd() *cobra.Command {
	var mf builtin.Spec
	var n int
	var asJSON bool
	var arith string
	var lim verifyLimits
	c := command("loss [MODEL.json | --builtin NAME] [--length N] [--json]", "Exact privacy loss with a witness", "verify-loss", cobra.MaximumNArgs(1), func(cmd *cobra.Command, args []string) error {
		b, n, err := mf.Load(args, n)
		if err != nil {
			return err
		}
		return lim.run(cmd, func(o hmm.Options) error {
			_, out, err := b.ReportArith(o, n, arith, nil, progress.Terminal(os.Stderr))
			if err != nil {
				return err
			}
			return emit(cmd, asJSON, out, out.WriteText)
		})
	})
	mf.Register(c.Flags())
	lim.register(c)
	c.Flags().IntVar(&n, "length", 0, "longest observation sequence (default 1 for built-ins)")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	c.Flags().StringVar(&arith, "arithmetic", "exact", "exact (rational; gives the ratio), float (float64 enclosure, for large models) or auto (float, exact on underflow); one-shot DP built-ins at length 1 are always exact (streamed)")
	return c
}

func verifyCheckCmd() *cobra.Command {
	var mf builtin.Spec
	var lim verifyLimits
	var n int
	var epsS string
	var asJSON bool
	var arith string
	c := command("check [MODEL.json | --builtin NAME] --epsilon E [--length N] [--json]", "Decide ε-Pufferfish privacy for all sequences up to a length", "verify-check", cobra.MaximumNArgs(1), func(cmd *cobra.Command, args []string) error {
		eps, err := hmm.RequireEpsilon(epsS)
		if err != nil {
			return err
		}
		b, n, err := mf.Load(args, n)
		if err != nil {
			return err
		}
		return lim.run(cmd, func(o hmm.Options) error {
			v, lj, err := b.ReportArith(o, n, arith, &eps, progress.Terminal(os.Stderr))
			if err != nil {
				return err
			}
			out := hmm.NewCheckReport(v, eps, lj)
			if err := emit(cmd, asJSON, out, out.WriteText); err != nil {
				return err
			}
			return verdictStatus(v)
		})
	})
	mf.Register(c.Flags())
	lim.register(c)
	c.Flags().IntVar(&n, "length", 0, "longest observation sequence (default 1 for built-ins)")
	c.Flags().StringVar(&epsS, "epsilon", "", "ε, e.g. ln(2) (exact) or 0.7")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	c.Flags().StringVar(&arith, "arithmetic", "exact", "exact (rational; gives the ratio), float (float64 enclosure; may answer undecided) or auto (float first, exact when it cannot decide): float and auto for large models; one-shot DP built-ins at length 1 are always exact (streamed)")
	return c
}

func verifySweepCmd() *cobra.Command {
	var n int
	var epsS string
	var grids []string
	var asJSON bool
	var plotPath, arith string
	var lim verifyLimits
	c := command("sweep MODEL.json --epsilon E --length N --grid p=LO:HI:STEP [--grid q=...] [--json]", "Where ε-Pufferfish holds over a grid of parameter values", "verify-sweep", cobra.ExactArgs(1), func(cmd *cobra.Command, args []string) error {
		eps, err := hmm.ParseEpsilon(epsS)
		if err != nil {
			return fmt.Errorf("--epsilon: %v", err)
		}
		if n < 1 {
			return fmt.Errorf("--length N is required")
		}
		if len(grids) == 0 || len(grids) > 2 {
			return fmt.Errorf("give one or two --grid name=LO:HI:STEP")
		}
		if plotPath != "" {
			if err := chart.CheckPath(plotPath); err != nil {
				return fmt.Errorf("--plot: %w", err)
			}
		}
		file, err := hmm.ReadFile(args[0])
		if err != nil {
			return err
		}
		axes, err := hmm.ParseGrids(grids)
		if err != nil {
			return err
		}
		a, err := hmm.ParseArithmetic(arith)
		if err != nil {
			return fmt.Errorf("--%w", err)
		}
		return lim.run(cmd, func(o hmm.Options) error {
			points, err := hmm.Sweep(o, file, args[0], axes, n, a, eps)
			if err != nil {
				return err
			}
			res := hmm.SweepResultOf(points, axes, n, eps)
			if plotPath != "" {
				if err := chart.Sweep(plotPath, res, eps.Value); err != nil {
					return err
				}
			}
			return emit(cmd, asJSON, res, res.WriteText)
		})
	})
	lim.register(c)
	c.Flags().IntVar(&n, "length", 0, "longest observation sequence")
	c.Flags().StringVar(&epsS, "epsilon", "", "ε, e.g. ln(2)")
	c.Flags().StringArrayVar(&grids, "grid", nil, "parameter grid name=LO:HI:STEP (repeat for a second parameter)")
	c.Flags().StringVar(&arith, "arithmetic", "exact", "exact, float or auto, as for check")
	c.Flags().StringVar(&plotPath, "plot", "", "also draw the region to FILE (.png, .svg or .pdf): loss against the parameter, or the holds/violated map over two")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func verifyAuditCmd() *cobra.Command {
	var classPath string
	methodF := newMethod()
	var T int
	epsF := newEps("1")
	var asJSON bool
	c := command("audit --class FILE --length T --epsilon E [--method exact|approx|groupdp|dp] [--json]", "Machine-check puff release's own guarantee on a short chain", "verify-audit", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		r, err := audit.HistogramFile(classPath, T, epsF.Float(), methodF.Name)
		if err != nil {
			return err
		}
		return emit(cmd, asJSON, r, r.WriteText)
	})
	c.Flags().StringVar(&classPath, "class", "", "class JSON file with one chain")
	c.Flags().IntVar(&T, "length", 4, "chain length T")
	c.Flags().Var(epsF, "epsilon", "the ε the release claims: a decimal, a fraction (1/2) or ln(r)")
	c.Flags().Var(methodF, "method", "exact | approx | groupdp | dp")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
