package main

import (
	"fmt"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"math"
	"strconv"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/bdp"
	"github.com/spf13/cobra"
)

func localCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "local",
		Short: "Local Bayesian DP for binary Markov-chain readings (randomized response)",
		Long: `local covers devices that randomise each binary reading before upload
(randomized response), when the readings form a Markov chain that flips
state with probability θ per step. An adversary who knows θ pools evidence
from neighbouring outputs, so the plain-DP flip probability 1/(e^ε+1) leaks
more than ε. Three flip probabilities:

  dp         1/(e^ε+1): ε against an adversary who knows every other reading
  published  [CGSSY]'s ρ*(θ, ε): ε against an adversary who knows no reading
  certified  the least flip whose worst case over EVERY adversary A(i, K)
             (any target, any set K of known readings) is ≤ ε, for every length

Losses are natural logarithms of the Bayesian DP likelihood ratio.

Examples:
  puff local flip --theta 0.1 --epsilon 1 --json
  puff local loss --theta 0.4 --flip 0.0379569 --length 5 --json
  puff local attack --theta 0.02 --epsilon 0.5 --length 30
  puff local sanitize --data readings.csv --epsilon 1 --theta 0.1 > private.csv`,
	}
	c.AddCommand(localFlipCmd(), localLossCmd(), localAttackCmd(), localSanitizeCmd())
	return c
}

func checkTheta(theta float64) error {
	if math.IsNaN(theta) {
		return fmt.Errorf("--theta is required (a probability in [0, 1])")
	}
	return bdp.CheckTheta(theta)
}

// checkEps is the one check of an ε that reached a command (the flag
// syntax already refused anything outside (0, 700]).
func checkEps(eps float64) error {
	if math.IsNaN(eps) {
		return fmt.Errorf("--epsilon E is required (a decimal, a fraction such as 1/2, or ln(r))")
	}
	if err := checks.Epsilon(eps); err != nil || eps > checks.MaxEpsilon {
		return fmt.Errorf("--epsilon %v: want 0 < ε ≤ %d", eps, checks.MaxEpsilon)
	}
	return nil
}

func localFlipCmd() *cobra.Command {
	thetaF, epsF := newProb(), newEps("")
	var n int
	var asJSON bool
	c := &cobra.Command{
		Use:   "flip --theta T --epsilon E [--length N] [--json]",
		Short: "Flip probabilities for ε: plain DP, published ([CGSSY]) and certified",
		Long: `flip prints the three flip probabilities for a symmetric chain with switch
probability θ, started from (1/2, 1/2), and the worst-case loss each one
really has over every adversary and every length. certified_flip is for
every length (n → ∞); with --length N it also gives the certified flip for
chains of exactly N readings (never more than the every-length one).

Example:
  puff local flip --theta 0.4 --epsilon 4 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			theta, eps := thetaF.Float(), epsF.Float()
			if err := checkTheta(theta); err != nil {
				return err
			}
			if err := checkEps(eps); err != nil {
				return err
			}
			r, err := bdp.Flips(theta, eps, n)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			return r.WriteText(cmd.OutOrStdout())
		},
	}
	f := c.Flags()
	f.Var(thetaF, "theta", "switch probability θ = P(x_{t+1} ≠ x_t) of the symmetric chain")
	f.Var(epsF, "epsilon", "privacy parameter ε > 0: a decimal, a fraction (1/2) or ln(r)")
	f.IntVar(&n, "length", 0, "also certify for exactly N readings")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

func localLossCmd() *cobra.Command {
	thetaF, rhoF := newProb(), newProb()
	var lengthS, know string
	var asJSON bool
	c := &cobra.Command{
		Use:   "loss --theta T --flip R --length N [--knowledge any|none|all] [--json]",
		Short: "Exact worst-case Bayesian DP loss of a flip probability",
		Long: `loss computes the worst Bayesian DP loss (natural log of the likelihood
ratio) of randomized response with flip probability R on a symmetric chain
of N readings with switch probability θ, started from (1/2, 1/2), over
every target reading and every set K of readings the adversary knows. It
prints the adversary (target, the nearest known readings on each side,
the two hypotheses) and an output that attains the loss, as runs of equal
symbols on the adversary's window.

--knowledge none restricts to K = ∅, all to K = every other reading.
--length inf bounds every length at once (the supremum over N).

Example ([CGSSY]'s flip is not private against known neighbours):
  puff local loss --theta 0.4 --flip 0.037956894 --length 5 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			theta, rho := thetaF.Float(), rhoF.Float()
			if err := checkTheta(theta); err != nil {
				return err
			}
			if math.IsNaN(rho) || rho < 0 || rho > 1 {
				return fmt.Errorf("--flip %v: must be a probability in [0, 1]", rho)
			}
			k, err := bdp.ParseKnowledge(know)
			if err != nil {
				return fmt.Errorf("--knowledge: %w", err)
			}
			n, err := parseLength(lengthS)
			if err != nil {
				return err
			}
			r, err := bdp.LossOf(theta, rho, n, k)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			return r.WriteText(cmd.OutOrStdout())
		},
	}
	f := c.Flags()
	f.Var(thetaF, "theta", "switch probability θ of the symmetric chain")
	f.Var(rhoF, "flip", "flip probability of randomized response")
	f.StringVar(&lengthS, "length", "", "number of readings N, or inf for every length")
	f.StringVar(&know, "knowledge", "any", "adversaries: any (every K), none (K = ∅) or all (K = every other reading)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

func parseLength(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("--length is required (a number of readings, or inf)")
	}
	if s == "inf" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--length %q: want a positive integer or inf", s)
	}
	return n, nil
}

func localAttackCmd() *cobra.Command {
	var thetas []float64
	epsF := newEps("")
	var n, target, trials int
	var seed uint64
	var asJSON bool
	c := &cobra.Command{
		Use:   "attack --theta T[,T...] --epsilon E --length N [--target I] [--json]",
		Short: "How well a correlation-aware adversary guesses a reading, per flip",
		Long: `attack compares two adversaries guessing reading I (default: the middle)
of a symmetric chain of N readings from the randomised outputs: one that
looks only at output I, and one that computes the posterior from every
output (forward–backward). It runs the dp, published and certified flips
for ε and reports each adversary's success probability p and the implied
ε = ln(p/(1−p)), which the true leakage is at least.

Success is exact (enumeration of both sides of the target) up to about 44
readings; beyond that it is estimated by Monte Carlo with --trials draws
from a seeded generator (reproducible) and a 95% Wilson interval.

Example ([CGSSY]'s headline: 0.831215 at θ = 0.02, implied ε ≈ 1.59):
  puff local attack --theta 0.02,0.1,0.3 --epsilon 0.5 --length 30`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			eps := epsF.Float()
			if len(thetas) == 0 {
				return fmt.Errorf("--theta is required")
			}
			for _, th := range thetas {
				if err := checkTheta(th); err != nil {
					return err
				}
			}
			if err := checkEps(eps); err != nil {
				return err
			}
			if n < 1 {
				return fmt.Errorf("--length %d: must be ≥ 1", n)
			}
			if target == 0 {
				target = (n + 1) / 2
			}
			if target < 1 || target > n {
				return fmt.Errorf("--target %d: must be in 1..%d", target, n)
			}
			rows, err := bdp.AttackTable(thetas, eps, n, target, trials, seed)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"epsilon": eps, "length": n, "target": target, "rows": rows})
			}
			return bdp.WriteAttackTable(cmd.OutOrStdout(), rows, eps, n, target)
		},
	}
	f := c.Flags()
	f.Float64SliceVar(&thetas, "theta", nil, "switch probabilities θ (comma-separated)")
	f.Var(epsF, "epsilon", "privacy parameter ε > 0: a decimal, a fraction (1/2) or ln(r)")
	f.IntVar(&n, "length", 30, "number of readings N")
	f.IntVar(&target, "target", 0, "target reading (1-based; default the middle)")
	f.IntVar(&trials, "trials", 100000, "Monte-Carlo draws when exact enumeration is too large")
	f.Uint64Var(&seed, "seed", 1, "seed of the Monte-Carlo generator (not used for real data)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

func localSanitizeCmd() *cobra.Command {
	var df dataFlags
	thetaF, epsF, rhoF := newProb(), newEps(""), newProb()
	var mechName string
	var fit bool
	c := &cobra.Command{
		Use:   "sanitize --data FILE (--flip R | --epsilon E [--mechanism M] (--theta T | --fit))",
		Short: "Randomise binary readings locally (randomized response, crypto/rand)",
		Long: `sanitize flips every binary reading independently, with randomness from
crypto/rand, and writes the randomised readings as CSV (series,time,state;
time is the row's time, or its position when the file has none) to
stdout. A short report goes to stderr. It reads the same CSV formats as
release; the data must have exactly two states (name them with --states
when one is missing from the file or to fix their order).

The flip is --flip R, or the --mechanism flip for ε (default certified):
dp, published ([CGSSY]'s ρ*) or certified (every adversary, every
length), for the chain's switch probability --theta or one estimated from
the data with --fit (switches / transitions). The estimate is computed
from the raw readings and is itself not private.

Example:
  puff local sanitize --data hr.csv --epsilon 1 --fit > hr_private.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			theta, eps, rho := thetaF.Float(), epsF.Float(), rhoF.Float()
			if df.path == "" {
				return fmt.Errorf("--data FILE is required (the built-in example has four states)")
			}
			haveFlip := !math.IsNaN(rho)
			if haveFlip == !math.IsNaN(eps) {
				return fmt.Errorf("give --flip R or --epsilon E, not both or neither")
			}
			df.opts.KeepTimes = true
			declared, err := df.declared()
			if err != nil {
				return err
			}
			if declared != nil && len(declared) != 2 {
				return fmt.Errorf("--states %q: want two distinct names, e.g. rest,active", df.states)
			}
			data, name, err := df.read(declared)
			if err != nil {
				return err
			}
			if len(data.States) != 2 {
				return fmt.Errorf("%s: randomized response needs exactly two states, found %d (%s); name them with --states", name, len(data.States), strings.Join(data.States, ", "))
			}
			label := "flip given"
			if !haveFlip {
				if err := checkEps(eps); err != nil {
					return err
				}
				if fit == !math.IsNaN(theta) {
					return fmt.Errorf("with --epsilon give --theta T or --fit, not both or neither")
				}
				if fit {
					if theta, err = bdp.EstimateTheta(data.Runs()); err != nil {
						return fmt.Errorf("%s: --fit: %w", name, err)
					}
				}
				if err := checkTheta(theta); err != nil {
					return err
				}
				kind, err := bdp.ParseFlipKind(mechName)
				if err != nil {
					return fmt.Errorf("--mechanism: %w", err)
				}
				if rho, err = bdp.SymmetricFlip(kind, theta, eps); err != nil {
					return err
				}
				label = kind.Covers()
			}
			if rho < 0 || rho > 0.5 {
				return fmt.Errorf("--flip %v: must be in [0, 1/2] (a flip above 1/2 is a flip below it, relabelled)", rho)
			}
			col := func(s, def string) string {
				if s == "" {
					return def
				}
				return s
			}
			san := *data
			san.Seqs = make([][]int, len(data.Seqs))
			for i, seq := range data.Seqs {
				if san.Seqs[i], err = bdp.Sanitize(seq, rho, rho, nil); err != nil {
					return err
				}
			}
			if err := san.WriteCSV(cmd.OutOrStdout(), col(df.opts.SeriesCol, "series"), col(df.opts.TimeCol, "time"), col(df.opts.StateCol, "state")); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "puff: sanitized %d readings in %d sequences with flip %.9g (θ = %g, ε = %g); protects against %s\n",
				data.Observations(), len(data.Seqs), rho, theta, eps, label)
			return nil
		},
	}
	df.register(c)
	f := c.Flags()
	f.Var(rhoF, "flip", "flip probability in [0, 1/2]")
	f.Var(epsF, "epsilon", "privacy parameter ε > 0, a decimal, a fraction or ln(r) (instead of --flip)")
	f.StringVar(&mechName, "mechanism", "certified", "dp | published | certified (with --epsilon)")
	f.Var(thetaF, "theta", "switch probability θ of the readings' chain (with --epsilon)")
	f.BoolVar(&fit, "fit", false, "estimate θ from the data (with --epsilon)")
	return c
}
