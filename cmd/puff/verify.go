package main

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pufferfish-privacy/pufferfish/audit"
	"github.com/pufferfish-privacy/pufferfish/chart"
	"github.com/pufferfish-privacy/pufferfish/hmm"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
	"github.com/spf13/cobra"
)

// modelFlags selects a model: a file argument or a built-in mechanism.
type modelFlags struct {
	builtin   string
	queries   int
	returns   string
	neighbour string
	alpha     string
	rangeM    int
	keep      string
	p1, p2    string
	alphaT    string
	threshold int
	cutoff    int
	set       []string
}

func (mf *modelFlags) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&mf.builtin, "builtin", "", "built-in mechanism: noisy-max | geometric | rr | example71 | above-threshold | sparse-vector (instead of MODEL.json)")
	f.StringVar(&mf.alphaT, "alpha-threshold", "1/2", "above-threshold: noise parameter of the threshold (--alpha is the answers')")
	f.IntVar(&mf.threshold, "threshold", 1, "above-threshold, sparse-vector: the threshold, in 0..RANGE")
	f.IntVar(&mf.cutoff, "cutoff", 2, "sparse-vector: halt after this many ⊤")
	f.IntVar(&mf.queries, "queries", 3, "noisy-max: number of queries")
	f.StringVar(&mf.returns, "returns", "index", "noisy-max: index (correct) or value ([LWZ]'s wrong variant)")
	f.StringVar(&mf.neighbour, "neighbours", "one", "DP neighbours: one (one answer differs by one) or any (one answer differs arbitrarily)")
	f.StringVar(&mf.alpha, "alpha", "1/2", "noisy-max, geometric: noise parameter α (the mechanism is ln(1/α)-DP per answer)")
	f.IntVar(&mf.rangeM, "range", 2, "noisy-max, geometric: answers and noisy values lie in 0..RANGE")
	f.StringVar(&mf.keep, "keep", "3/4", "rr: probability of reporting the true bit")
	f.StringVar(&mf.p1, "p1", "1/5", "example71: probability of disease A")
	f.StringVar(&mf.p2, "p2", "2/5", "example71: probability that both or neither have disease B (both)")
	f.StringSliceVar(&mf.set, "set", nil, "model file: parameter values, e.g. --set p1=0.2,p2=2/5")
}

func parseRat(flag, s string) (*big.Rat, error) {
	r, err := ratexpr.Eval(s, nil)
	if err != nil {
		return nil, fmt.Errorf("--%s: %v", flag, err)
	}
	return r, nil
}

// load returns the model, its secret pairs, a description, and the default
// length (1 for one-shot built-ins, 0 = must be given for files).
func (mf *modelFlags) load(args []string) (*hmm.Model, []hmm.Secret, string, int, error) {
	if (len(args) == 1) == (mf.builtin != "") {
		return nil, nil, "", 0, fmt.Errorf("give a MODEL.json file or --builtin, not both or neither")
	}
	if len(args) == 1 {
		f, err := os.Open(args[0])
		if err != nil {
			return nil, nil, "", 0, err
		}
		defer f.Close()
		file, err := hmm.ParseFile(f, args[0])
		if err != nil {
			return nil, nil, "", 0, err
		}
		set := map[string]*big.Rat{}
		for _, kv := range mf.set {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, nil, "", 0, fmt.Errorf("--set %q: want name=value", kv)
			}
			r, err := parseRat("set "+k, v)
			if err != nil {
				return nil, nil, "", 0, err
			}
			set[strings.TrimSpace(k)] = r
		}
		m, secs, err := file.Build(args[0], set)
		return m, secs, args[0], 0, err
	}
	alpha, err := parseRat("alpha", mf.alpha)
	if err != nil {
		return nil, nil, "", 0, err
	}
	switch mf.builtin {
	case "noisy-max":
		ret := map[string]hmm.NoisyMaxReturns{"index": hmm.ReturnIndex, "value": hmm.ReturnValue}
		nb := map[string]hmm.Neighbours{"one": hmm.DifferByOne, "any": hmm.DifferAnyhow}
		r, ok := ret[mf.returns]
		if !ok {
			return nil, nil, "", 0, fmt.Errorf("--returns %q: want index or value", mf.returns)
		}
		n, ok := nb[mf.neighbour]
		if !ok {
			return nil, nil, "", 0, fmt.Errorf("--neighbours %q: want one or any", mf.neighbour)
		}
		if mf.queries < 1 || mf.queries > 12 {
			return nil, nil, "", 0, fmt.Errorf("--queries %d: want 1..12 (the model has (RANGE+1)^queries inputs)", mf.queries)
		}
		m, secs, err := hmm.NoisyMaxModel(mf.queries, mf.rangeM, alpha, r, n)
		desc := fmt.Sprintf("Noisy Max over %d queries in 0..%d, α = %s, returns %s, DP neighbours %s", mf.queries, mf.rangeM, alpha.RatString(), mf.returns, mf.neighbour)
		return m, secs, desc, 1, err
	case "geometric":
		m, secs, err := hmm.GeometricModel(alpha, mf.rangeM)
		return m, secs, fmt.Sprintf("α-geometric mechanism on 0..%d, α = %s, DP neighbours differ by one", mf.rangeM, alpha.RatString()), 1, err
	case "rr":
		keep, err := parseRat("keep", mf.keep)
		if err != nil {
			return nil, nil, "", 0, err
		}
		m, secs, err := hmm.RandomizedResponseModel(keep)
		return m, secs, "randomized response, keep " + keep.RatString(), 1, err
	case "above-threshold", "sparse-vector":
		aT, err := parseRat("alpha-threshold", mf.alphaT)
		if err != nil {
			return nil, nil, "", 0, err
		}
		if mf.queries < 1 || mf.queries > 8 {
			return nil, nil, "", 0, fmt.Errorf("--queries %d: want 1..8 (every answer vector in 0..RANGE is an input)", mf.queries)
		}
		c, name := 1, "Above Threshold"
		if mf.builtin == "sparse-vector" {
			c, name = mf.cutoff, fmt.Sprintf("Sparse Vector (cutoff %d, fresh threshold after each ⊤)", mf.cutoff)
		}
		m, secs, err := hmm.SparseVectorDP(mf.queries, mf.threshold, mf.rangeM, c, aT, alpha)
		desc := fmt.Sprintf("%s over %d queries in 0..%d, threshold %d, α threshold %s, α answers %s, DP neighbours: every answer changes by ≤ 1",
			name, mf.queries, mf.rangeM, mf.threshold, aT.RatString(), alpha.RatString())
		return m, secs, desc, mf.queries, err
	case "example71":
		p1, err := parseRat("p1", mf.p1)
		if err != nil {
			return nil, nil, "", 0, err
		}
		p2, err := parseRat("p2", mf.p2)
		if err != nil {
			return nil, nil, "", 0, err
		}
		m, sec, err := hmm.Example71(p1, p2)
		return m, []hmm.Secret{sec}, fmt.Sprintf("[LWZ] Example 7.1, p1 = %s, p2 = %s", p1.RatString(), p2.RatString()), 1, err
	}
	return nil, nil, "", 0, fmt.Errorf("--builtin %q: want noisy-max, geometric, rr, example71, above-threshold or sparse-vector", mf.builtin)
}

// lossJSON is the JSON of 'puff verify loss' (and part of check).
type lossJSON struct {
	Model  string   `json:"model"`
	Length int      `json:"length"`
	Loss   *float64 `json:"loss"`  // null when infinite
	Ratio  string   `json:"ratio"` // reduced fraction p/q, or "inf"
	// Witness: a maximising observation sequence, the secret pair and
	// which side of it gives the sequence the larger probability.
	Witness    witnessJSON `json:"witness"`
	Explored   int64       `json:"explored"`
	Arithmetic string      `json:"arithmetic"`
	// Float path only: the enclosure of the loss (Loss is its upper end and
	// Ratio is empty: the float path has no exact ratio).
	LossLower *float64 `json:"loss_lower,omitempty"`
	LossUpper *float64 `json:"loss_upper,omitempty"`
}

type witnessJSON struct {
	Observations []string `json:"observations"`
	Secret       string   `json:"secret"`
	Larger       string   `json:"larger"`
}

// lossLine is the loss for text output: the exact value with its ratio, or
// the float path's enclosure.
func (l lossJSON) lossLine() string {
	if l.LossLower != nil {
		return fmt.Sprintf("in [%.12g, %.12g]", *l.LossLower, *l.LossUpper)
	}
	return l.lossText() + fmt.Sprintf(" (ratio %s)", l.Ratio)
}

func (l lossJSON) lossText() string {
	if l.Loss == nil {
		return "∞"
	}
	return strconv.FormatFloat(*l.Loss, 'g', 10, 64)
}

// loadWithLength loads the model and settles the sequence length: n, or
// the built-in's default.
func (mf *modelFlags) loadWithLength(args []string, n int) (*hmm.Model, []hmm.Secret, string, int, error) {
	m, secs, desc, def, err := mf.load(args)
	if err != nil {
		return nil, nil, "", 0, err
	}
	if n == 0 {
		n = def
	}
	if n < 1 {
		return nil, nil, "", 0, fmt.Errorf("--length N is required for a model file (observation sequences of lengths 1..N)")
	}
	return m, secs, desc, n, nil
}

func toLossJSON(m *hmm.Model, desc string, n int, r hmm.Result) lossJSON {
	out := lossJSON{Model: desc, Length: n, Ratio: "inf", Explored: r.Explored, Arithmetic: "exact (big.Int numerators over a common denominator)",
		Witness: witnessJSON{Observations: []string{}, Secret: r.Secret, Larger: r.Larger}}
	if r.Ratio != nil {
		l := r.Loss
		out.Loss = &l
		out.Ratio = r.Ratio.Num().String() + "/" + r.Ratio.Denom().String()
	}
	for _, o := range r.Witness {
		out.Witness.Observations = append(out.Witness.Observations, m.Obs[o])
	}
	return out
}

func floatLossJSON(m *hmm.Model, desc string, n int, r hmm.FloatResult) lossJSON {
	out := lossJSON{Model: desc, Length: n, Ratio: "inf", Explored: r.Explored,
		Arithmetic: "float64 with rigorous error bounds (enclosure in loss_lower..loss_upper)",
		Witness:    witnessJSON{Observations: []string{}, Secret: r.Secret, Larger: r.Larger}}
	if !math.IsInf(r.LossHi, 1) {
		lo, hi := r.LossLo, r.LossHi
		out.Loss, out.LossLower, out.LossUpper, out.Ratio = &hi, &lo, &hi, ""
	}
	for _, o := range r.Witness {
		out.Witness.Observations = append(out.Witness.Observations, m.Obs[o])
	}
	return out
}

// evaluate computes the loss (eps nil) or the verdict for eps in the
// arithmetic asked for: "float" answers from the float64 enclosure (an
// undecided verdict included), "auto" falls back to exact arithmetic on
// underflow or an undecided verdict, "exact" uses rationals only.
func evaluate(m *hmm.Model, secs []hmm.Secret, desc string, n int, arith string, eps *hmm.Epsilon) (hmm.Verdict, lossJSON, error) {
	if arith != "exact" {
		var v hmm.Verdict
		var fr hmm.FloatResult
		var err error
		if eps == nil {
			fr, err = hmm.LossFloat(m, secs, n)
		} else {
			v, fr, err = hmm.CheckFloat(m, secs, n, *eps)
		}
		switch {
		case err == nil && (v != hmm.Undecided || arith == "float"):
			return v, floatLossJSON(m, desc, n, fr), nil
		case err == nil || errors.Is(err, hmm.ErrUnderflow) && arith == "auto":
			// undecided in float, or underflow: settle it exactly
		default:
			return "", lossJSON{}, err
		}
	}
	if eps == nil {
		r, err := hmm.Loss(m, secs, n)
		return "", toLossJSON(m, desc, n, r), err
	}
	v, r, err := hmm.Check(m, secs, n, *eps)
	return v, toLossJSON(m, desc, n, r), err
}

func checkArithmetic(a string) error {
	switch a {
	case "exact", "float", "auto":
		return nil
	}
	return fmt.Errorf("--arithmetic %q: want exact, float or auto", a)
}

func verifyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "verify",
		Short: "Verify Pufferfish privacy of a mechanism modelled as a hidden Markov model",
		Long: `verify checks mechanisms described as hidden Markov models ([LWZ]),
exactly: the forward algorithm runs in rational arithmetic and the search
visits every observation sequence up to the given length that could still
beat the best likelihood ratio found.

  loss   the exact privacy loss max_ω |ln P_π(ω) − ln P_τ(ω)|, as a float and
         as a reduced fraction, with a witness ω
  check  whether ε-Pufferfish privacy holds (ε = ln(2) is exact; a decimal ε
         is compared with a certified enclosure of e^ε)
  sweep  check over a grid of a model file's parameters

A model is a JSON file (see 'puff verify loss --help') or a built-in:
noisy-max, geometric, rr, example71, above-threshold, sparse-vector.`,
	}
	c.AddCommand(verifyLossCmd(), verifyCheckCmd(), verifySweepCmd(), verifyAuditCmd())
	return c
}

const modelFileHelp = `
Model file (JSON):
  {"states": ["h", "s"], "observations": ["ok", "cough"],
   "parameters": {"p": "1/10"},
   "transition": [["1-p", "p"], ["p", "1-p"]],
   "emission": [["3/4", "1/4"], ["1/4", "3/4"]],
   "prior": ["1/2", "1/2"],
   "secrets": [{"name": "sick", "pi_event": ["s"], "tau_event": ["h"]}]}
Probabilities are numbers or strings ("1/6", "0.25", "2*p*(1-p)"), exact.
A secret is "pi"/"tau" (two initial distributions) or "pi_event"/
"tau_event" (sets of states; the prior conditioned on each).`

func verifyLossCmd() *cobra.Command {
	var mf modelFlags
	var n int
	var asJSON bool
	var arith string
	c := &cobra.Command{
		Use:   "loss [MODEL.json | --builtin NAME] [--length N] [--json]",
		Short: "Exact privacy loss with a witness",
		Long: `loss computes the exact privacy loss over observation sequences of lengths
1..N and every secret pair, with a witness sequence.

Examples:
  puff verify loss --builtin noisy-max --queries 5 --returns value --neighbours one --json
  puff verify loss --builtin example71 --p1 0.2 --p2 0.4
  puff verify loss model.json --length 6 --set p=0.3` + modelFileHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkArithmetic(arith); err != nil {
				return err
			}
			m, secs, desc, n, err := mf.loadWithLength(args, n)
			if err != nil {
				return err
			}
			_, out, err := evaluate(m, secs, desc, n, arith, nil)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			loss := out.lossLine()
			fmt.Fprintf(w, "model\t%s\nlengths\t1..%d\nloss\t%s\narithmetic\t%s\nwitness\t%s under %s (larger under %s)\nexplored\t%d sequences\n",
				desc, n, loss, out.Arithmetic, strings.Join(out.Witness.Observations, " "), out.Witness.Secret, out.Witness.Larger, out.Explored)
			return w.Flush()
		},
	}
	mf.register(c)
	c.Flags().IntVar(&n, "length", 0, "longest observation sequence (default 1 for built-ins)")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	c.Flags().StringVar(&arith, "arithmetic", "exact", "exact (rational; gives the ratio), float (float64 enclosure, for large models) or auto (float, exact on underflow)")
	return c
}

func verifyCheckCmd() *cobra.Command {
	var mf modelFlags
	var n int
	var epsS string
	var asJSON bool
	var arith string
	c := &cobra.Command{
		Use:   "check [MODEL.json | --builtin NAME] --epsilon E [--length N] [--json]",
		Short: "Decide ε-Pufferfish privacy for all sequences up to a length",
		Long: `check decides whether ε-Pufferfish privacy holds for every observation
sequence of lengths 1..N and every secret pair. Write ε as ln(2) or
ln(3/2) for an exact verdict; a decimal ε is compared with a certified
enclosure of e^ε (the verdict is "undecided" only if the exact ratio falls
inside it). A violation comes with a witness.

Example:
  puff verify check --builtin example71 --p1 0.2 --p2 0.4 --epsilon 'ln(2)'

Exit status: 0 when privacy holds, 3 when it is violated, 5 when
undecided (the output is printed in every case), 2 on bad input.
` + modelFileHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if epsS == "" {
				return fmt.Errorf("--epsilon is required (e.g. 'ln(2)' or 0.7)")
			}
			eps, err := hmm.ParseEpsilon(epsS)
			if err != nil {
				return fmt.Errorf("--epsilon: %v", err)
			}
			if err := checkArithmetic(arith); err != nil {
				return err
			}
			m, secs, desc, n, err := mf.loadWithLength(args, n)
			if err != nil {
				return err
			}
			v, lj, err := evaluate(m, secs, desc, n, arith, &eps)
			if err != nil {
				return err
			}
			out := struct {
				Verdict       hmm.Verdict `json:"verdict"`
				Epsilon       string      `json:"epsilon"`
				EpsilonExact  bool        `json:"epsilon_exact"`
				EpsilonFloat  float64     `json:"epsilon_value"`
				ExpEpsilonLow string      `json:"exp_epsilon_low"`
				ExpEpsilonHi  string      `json:"exp_epsilon_high"`
				lossJSON
			}{v, eps.Text, eps.Exact(), eps.Value, eps.Lo.FloatString(20), eps.Hi.FloatString(20), lj}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), out); err != nil {
					return err
				}
				return verdictStatus(v)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			loss := out.lossLine()
			fmt.Fprintf(w, "verdict\t%s: %s-Pufferfish privacy for sequences of lengths 1..%d\nmodel\t%s\nloss\t%s\narithmetic\t%s\nwitness\t%s under %s\n",
				v, eps.Text, n, desc, loss, out.Arithmetic, strings.Join(out.Witness.Observations, " "), out.Witness.Secret)
			if err := w.Flush(); err != nil {
				return err
			}
			return verdictStatus(v)
		},
	}
	mf.register(c)
	c.Flags().IntVar(&n, "length", 0, "longest observation sequence (default 1 for built-ins)")
	c.Flags().StringVar(&epsS, "epsilon", "", "ε, e.g. ln(2) (exact) or 0.7")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	c.Flags().StringVar(&arith, "arithmetic", "exact", "exact (rational; gives the ratio), float (float64 enclosure; may answer undecided) or auto (float first, exact when it cannot decide): float and auto for large models")
	return c
}

// maxSweepPoints is the most grid points one sweep checks.
const maxSweepPoints = 10001

func verifySweepCmd() *cobra.Command {
	var n int
	var epsS string
	var grids []string
	var asJSON bool
	var plotPath string
	c := &cobra.Command{
		Use:   "sweep MODEL.json --epsilon E --length N --grid p=LO:HI:STEP [--grid q=...] [--json]",
		Short: "Where ε-Pufferfish holds over a grid of parameter values",
		Long: `sweep runs check at every point of a grid over a model file's parameters
(at most two) and prints a table of the loss and the verdict per point,
or JSON rows. Grid values are exact rationals (LO + i·STEP).

Example:
  puff verify sweep flu.json --epsilon 'ln(2)' --length 4 --grid p=1/20:1/2:1/20` + modelFileHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			file, err := hmm.ParseFile(f, args[0])
			if err != nil {
				return err
			}
			type axis struct {
				name string
				vals []*big.Rat
			}
			var axes []axis
			for _, g := range grids {
				name, spec, ok := strings.Cut(g, "=")
				parts := strings.Split(spec, ":")
				if !ok || len(parts) != 3 {
					return fmt.Errorf("--grid %q: want name=LO:HI:STEP", g)
				}
				var r [3]*big.Rat
				for i, p := range parts {
					if r[i], err = parseRat("grid", p); err != nil {
						return err
					}
				}
				if r[2].Sign() <= 0 || r[1].Cmp(r[0]) < 0 {
					return fmt.Errorf("--grid %q: need STEP > 0 and HI ≥ LO", g)
				}
				// number of points: ⌊(HI − LO)/STEP⌋ + 1, exactly
				span := new(big.Rat).Quo(new(big.Rat).Sub(r[1], r[0]), r[2])
				count := new(big.Int).Add(new(big.Int).Quo(span.Num(), span.Denom()), big.NewInt(1))
				if count.Cmp(big.NewInt(maxSweepPoints)) > 0 {
					return fmt.Errorf("--grid %q has %s points, more than %d: use a larger step", g, count, maxSweepPoints)
				}
				var vals []*big.Rat
				for v := new(big.Rat).Set(r[0]); v.Cmp(r[1]) <= 0; v = new(big.Rat).Add(v, r[2]) {
					vals = append(vals, v)
				}
				axes = append(axes, axis{strings.TrimSpace(name), vals})
			}
			if len(axes) == 2 && len(axes[0].vals)*len(axes[1].vals) > maxSweepPoints {
				return fmt.Errorf("the grid has %d × %d = %d points, more than %d: use larger steps", len(axes[0].vals), len(axes[1].vals), len(axes[0].vals)*len(axes[1].vals), maxSweepPoints)
			}
			if len(axes) == 1 {
				axes = append(axes, axis{"", []*big.Rat{nil}})
			}
			type row struct {
				Params  map[string]string `json:"parameters"`
				Verdict hmm.Verdict       `json:"verdict"`
				Loss    *float64          `json:"loss"`
				Ratio   string            `json:"ratio"`
			}
			var rows []row
			for _, a := range axes[0].vals {
				for _, b := range axes[1].vals {
					set := map[string]*big.Rat{axes[0].name: a}
					params := map[string]string{axes[0].name: a.RatString()}
					if b != nil {
						set[axes[1].name] = b
						params[axes[1].name] = b.RatString()
					}
					m, secs, err := file.Build(args[0], set)
					if err != nil {
						return fmt.Errorf("at %v: %w", params, err)
					}
					v, r, err := hmm.Check(m, secs, n, eps)
					if err != nil {
						return fmt.Errorf("at %v: %w", params, err)
					}
					lj := toLossJSON(m, "", n, r)
					rows = append(rows, row{params, v, lj.Loss, lj.Ratio})
				}
			}
			if plotPath != "" {
				var xs, ys []float64
				var st []chart.Status
				for _, r := range rows {
					x, _ := new(big.Rat).SetString(r.Params[axes[0].name])
					xf, _ := x.Float64()
					xs = append(xs, xf)
					y := math.Inf(1)
					if axes[1].name != "" {
						v, _ := new(big.Rat).SetString(r.Params[axes[1].name])
						y, _ = v.Float64()
					} else if r.Loss != nil {
						y = *r.Loss
					}
					ys = append(ys, y)
					st = append(st, map[hmm.Verdict]chart.Status{hmm.Holds: chart.Holds, hmm.Violated: chart.Violated}[r.Verdict])
					if r.Verdict == hmm.Undecided {
						st[len(st)-1] = chart.Undecided
					}
				}
				title := fmt.Sprintf("%s-Pufferfish over sequences of length ≤ %d", eps.Text, n)
				if axes[1].name == "" {
					err = chart.Curve(plotPath, title, axes[0].name, "privacy loss", xs, ys, st, eps.Value)
				} else {
					err = chart.Region(plotPath, title, axes[0].name, axes[1].name, xs, ys, st)
				}
				if err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"epsilon": eps.Text, "length": n, "rows": rows})
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			hdr := axes[0].name
			if axes[1].name != "" {
				hdr += "\t" + axes[1].name
			}
			fmt.Fprintf(w, "%s\tloss\tverdict (%s)\n", hdr, eps.Text)
			for _, r := range rows {
				vals := r.Params[axes[0].name]
				if axes[1].name != "" {
					vals += "\t" + r.Params[axes[1].name]
				}
				loss := math.Inf(1)
				if r.Loss != nil {
					loss = *r.Loss
				}
				fmt.Fprintf(w, "%s\t%.6g\t%s\n", vals, loss, r.Verdict)
			}
			return w.Flush()
		},
	}
	c.Flags().IntVar(&n, "length", 0, "longest observation sequence")
	c.Flags().StringVar(&epsS, "epsilon", "", "ε, e.g. ln(2)")
	c.Flags().StringArrayVar(&grids, "grid", nil, "parameter grid name=LO:HI:STEP (repeat for a second parameter)")
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
	c := &cobra.Command{
		Use:   "audit --class FILE --length T --epsilon E [--method exact|approx|groupdp|dp] [--json]",
		Short: "Machine-check puff release's own guarantee on a short chain",
		Long: `audit turns the count histogram that 'puff release' publishes for one
chain of length T (with the noise package's snapped geometric noise) into a
hidden Markov model — the chain conditioned on each secret X_s = v, with its
histogram in the hidden state — and checks the claimed ε exactly over every
secret pair and every output (per bin: below 0, each count 0..T, above T,
which attains the supremum over the product's outputs). The noise parameter
is rounded towards less noise, so "holds" is a proof for the product.

The class file must hold one chain with a given or stationary initial
distribution; keep T small (the model has T·k copies of the chain).

Example:
  puff verify audit --class class.json --length 4 --epsilon 2 --method exact`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			eps := epsF.Float()
			if classPath == "" {
				return fmt.Errorf("--class FILE is required")
			}
			if err := checkEps(eps); err != nil {
				return err
			}
			cl, err := readClass(classPath)
			if err != nil {
				return err
			}
			if len(cl.Chains) != 1 {
				return fmt.Errorf("%s: the audit needs exactly one chain (θ), the class has %d", classPath, len(cl.Chains))
			}
			r, err := audit.Histogram(cl.Chains[0], T, eps, methodF.n)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "verdict\t%s: %s release at ε = %g, chain length %d\nσ\t%.6g (per bin %.6g, sampled at %.6g)\nloss\t%.10g (ratio %s, exact)\nwitness\t%s, noisy histogram %v\nmodel\t%d hidden states, %d sequences explored\n",
				r.Verdict, r.Method, r.Epsilon, r.Length, r.Sigma, r.PerBinScale, r.EffectiveScale, r.Loss, r.Ratio, r.Secret, r.Output, r.States, r.Explored)
			return w.Flush()
		},
	}
	c.Flags().StringVar(&classPath, "class", "", "class JSON file with one chain")
	c.Flags().IntVar(&T, "length", 4, "chain length T")
	c.Flags().Var(epsF, "epsilon", "the ε the release claims: a decimal, a fraction (1/2) or ln(r)")
	c.Flags().Var(methodF, "method", "exact | approx | groupdp | dp")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
