package main

import (
	"cmp"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/bdp"
	"github.com/pufferfish-privacy/pufferfish/epsilon"
	"github.com/pufferfish-privacy/pufferfish/learned"
)

func localCmd() *cobra.Command {
	c := &cobra.Command{Use: "local", Short: "Local Bayesian DP for binary Markov-chain readings (randomized response)", Long: help("local")}
	c.AddCommand(localFlipCmd(), localLossCmd(), localAttackCmd(), localSanitizeCmd())
	return c
}

// checkEps is the one check of an ε that reached a command (the flag
// syntax already refused anything outside (0, 700]): epsilon.Check.
var checkEps = epsilon.Check

func localFlipCmd() *cobra.Command {
	thetaF, epsF := newProb(), newEps("")
	var n int
	var asJSON bool
	c := command("flip --theta T --epsilon E [--length N] [--json]", "Flip probabilities for ε: plain DP, published ([CGSSY]) and certified", "local-flip", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		theta, eps := thetaF.Float(), epsF.Float()
		if err := bdp.RequireTheta(theta); err != nil {
			return err
		}
		if err := checkEps(eps); err != nil {
			return err
		}
		r, err := bdp.Flips(theta, eps, n)
		if err != nil {
			return err
		}
		return emit(cmd, asJSON, r, r.WriteText)
	})
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
	c := command("loss --theta T --flip R --length N [--knowledge any|none|all] [--json]", "Exact worst-case Bayesian DP loss of a flip probability", "local-loss", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		theta, rho := thetaF.Float(), rhoF.Float()
		k, n, err := bdp.ParseLoss(theta, rho, know, lengthS)
		if err != nil {
			return err
		}
		r, err := bdp.LossOf(theta, rho, n, k)
		if err != nil {
			return err
		}
		return emit(cmd, asJSON, r, r.WriteText)
	})
	f := c.Flags()
	f.Var(thetaF, "theta", "switch probability θ of the symmetric chain")
	f.Var(rhoF, "flip", "flip probability of randomized response")
	f.StringVar(&lengthS, "length", "", "number of readings N, or inf for every length")
	f.StringVar(&know, "knowledge", "any", "adversaries: any (every K), none (K = ∅) or all (K = every other reading)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

func localAttackCmd() *cobra.Command {
	var thetas []float64
	epsF := newEps("")
	var n, target, trials int
	var seed uint64
	var asJSON bool
	var adversary, flip string
	var df dataFlags
	cfg := learned.Default
	trainFrac := 0.7
	c := command("attack (--theta T[,T...] --length N | --adversary lstm --data FILE [--flip F]) --epsilon E [--json]", "How well a correlation-aware or a learned adversary guesses readings, per flip", "local-attack", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		eps := epsF.Float()
		switch adversary {
		case "model":
		case "lstm":
			if err := checkEps(eps); err != nil {
				return err
			}
			cfg.Seed = seed
			return lstmAttack(cmd, &df, eps, flip, trainFrac, cfg, asJSON)
		default:
			return fmt.Errorf("--adversary %q: want model (exact, synthetic chains) or lstm (learned, on --data)", adversary)
		}
		if df.path != "" {
			return fmt.Errorf("--data is read by --adversary lstm; the model adversary runs on synthetic chains (--theta)")
		}
		target, err := bdp.CheckAttack(thetas, eps, n, target)
		if err != nil {
			return err
		}
		rows, err := bdp.AttackTable(thetas, eps, n, target, trials, seed)
		if err != nil {
			return err
		}
		return emit(cmd, asJSON, map[string]any{"epsilon": eps, "length": n, "target": target, "rows": rows}, func(w io.Writer) error { return bdp.WriteAttackTable(w, rows, eps, n, target) })
	})
	f := c.Flags()
	f.Float64SliceVar(&thetas, "theta", nil, "switch probabilities θ (comma-separated)")
	f.Var(epsF, "epsilon", "privacy parameter ε > 0: a decimal, a fraction (1/2) or ln(r)")
	f.IntVar(&n, "length", 30, "number of readings N")
	f.IntVar(&target, "target", 0, "target reading (1-based; default the middle)")
	f.IntVar(&trials, "trials", 100000, "Monte-Carlo draws when exact enumeration is too large")
	f.Uint64Var(&seed, "seed", 1, "seed of the Monte-Carlo generator, or (lstm) of the sanitisation and the training")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.StringVar(&adversary, "adversary", "model", "model (exact success on synthetic chains) | lstm (a trained bidirectional LSTM on --data)")
	f.StringVar(&flip, "flip", "certified", "lstm: the flip that sanitises --data: dp | published | certified")
	f.Float64Var(&trainFrac, "train-fraction", trainFrac, "lstm: the fraction of each series (in blocks of 500 readings spread over it) that trains the LSTM; the rest is scored")
	f.IntVar(&cfg.Half, "lstm-half-window", cfg.Half, "lstm: the attacker sees 2h+1 sanitised readings around each target")
	f.IntVar(&cfg.Hidden, "lstm-hidden", cfg.Hidden, "lstm: units per direction")
	f.IntVar(&cfg.Epochs, "lstm-epochs", cfg.Epochs, "lstm: training epochs")
	f.IntVar(&cfg.Examples, "lstm-examples", cfg.Examples, "lstm: training examples per epoch")
	df.register(c)
	return c
}

// lstmAttack is puff local attack --adversary lstm: sanitise the binary
// series of --data with the flip for ε (seeded), train the LSTM on the
// first part of each series and score it and the model-based attackers on
// the rest.
func lstmAttack(cmd *cobra.Command, df *dataFlags, eps float64, flip string, trainFrac float64, cfg learned.Config, asJSON bool) error {
	if df.path == "" {
		return fmt.Errorf("--adversary lstm needs --data FILE (a binary series, as puff local sanitize reads)")
	}
	kind, err := bdp.ParseFlipKind(flip)
	if err != nil {
		return fmt.Errorf("--flip: %w", err)
	}
	data, name, err := df.Read(df.path, false)
	if err != nil {
		return err
	}
	r, err := learned.AttackData(data, name, kind, eps, trainFrac, cfg)
	if err != nil {
		return err
	}
	return emit(cmd, asJSON, r, func(w io.Writer) error { return r.WriteText(w, name) })
}

// fitWarning is what local sanitize --fit says of the θ it printed.
const fitWarning = "puff: warning: θ was estimated from the data being sanitized (--fit): the guarantee holds for that estimate only, and θ and the flip printed above are functions of it, so they depend on the data and are not protected"

func localSanitizeCmd() *cobra.Command {
	var df dataFlags
	thetaF, epsF, rhoF := newProb(), newEps(""), newProb()
	var mechName string
	var fit bool
	c := command("sanitize --data FILE (--flip R | --epsilon E [--mechanism M] (--theta T | --fit))", "Randomise binary readings locally (randomized response, crypto/rand)", "local-sanitize", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		theta, eps, rho := thetaF.Float(), epsF.Float(), rhoF.Float()
		if err := bdp.CheckSanitize(df.path, rho, eps); err != nil {
			return err
		}
		data, name, err := df.Read(df.path, true)
		if err != nil {
			return err
		}
		san, err := bdp.SanitizeData(data, name, rho, eps, theta, mechName, fit)
		if err != nil {
			return err
		}
		if err := san.Data.WriteCSV(cmd.OutOrStdout(), cmp.Or(df.Spec.SeriesCol, "series"), cmp.Or(df.Spec.TimeCol, "time"), cmp.Or(df.Spec.StateCol, "state")); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "puff: sanitized %d readings in %d sequences with flip %.9g (θ = %g, ε = %g); protects against %s\n",
			data.Observations(), len(data.Seqs), san.Rho, san.Theta, eps, san.Label)
		if fit {
			fmt.Fprintln(cmd.ErrOrStderr(), fitWarning)
		}
		return nil
	})
	df.register(c)
	f := c.Flags()
	f.Var(rhoF, "flip", "flip probability in [0, 1/2]")
	f.Var(epsF, "epsilon", "privacy parameter ε > 0, a decimal, a fraction or ln(r) (instead of --flip)")
	f.StringVar(&mechName, "mechanism", "certified", "dp | published | certified (with --epsilon)")
	f.Var(thetaF, "theta", "switch probability θ of the readings' chain (with --epsilon)")
	f.BoolVar(&fit, "fit", false, "estimate θ from the data (with --epsilon)")
	return c
}
