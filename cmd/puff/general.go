package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"math/big"
	"os"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/framework"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/noise"
	"github.com/pufferfish-privacy/pufferfish/ratexpr"
	"github.com/pufferfish-privacy/pufferfish/robust"
	"github.com/pufferfish-privacy/pufferfish/wasserstein"
	"github.com/spf13/cobra"
)

const frameworkHelp = `A framework file (JSON) lists the records, their domain, the query and Θ:

  {"records": 4, "domain": [0, 1], "query": "sum",
   "thetas": [{"joint": [[[0,0,0,0], "1/10"], [[1,0,0,0], 0.05], ...]}]}

  records  number of records, or "names": ["Ann", "Bob", ...]
  domain   the values one record takes (numbers)
  query    "sum", "histogram" or {"count": value}
  thetas   Θ: each a "joint" table ([assignment, probability] entries;
           unlisted assignments have probability 0; the total must be
           exactly 1) or a Bayesian "network" (one node per record:
           {"name", "parents": [names], "cpt": [[row], ...]}, rows in
           mixed radix over the parents, first parent most significant)
  pairs    optional: [{"record": "Ann", "values": [0, 1]}]; default every
           (X_i = a, X_i = b), a ≠ b
  data     optional: the database to release, one value per record

Probabilities are exact: numbers are read as the decimals they spell and
strings may hold fractions or expressions ("1/6", "1-1/5").`

func readFramework(path string) (*framework.Framework, []int, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("framework: %w", err)
	}
	defer fh.Close()
	return framework.Parse(fh, path)
}

// loadFramework checks the common flags of wasserstein and bn and reads the
// framework (networks kept unexpanded for bn) and the database to release.
func loadFramework(path, dataS string, eps float64, networks bool) (*framework.Framework, []int, error) {
	if path == "" {
		return nil, nil, fmt.Errorf("--framework FILE is required")
	}
	if err := checkEps(eps); err != nil {
		return nil, nil, err
	}
	var f *framework.Framework
	var data []int
	var err error
	if networks {
		f, data, err = readFrameworkNetworks(path)
	} else {
		f, data, err = readFramework(path)
	}
	if err != nil {
		return nil, nil, err
	}
	if dataS != "" {
		if data, err = f.ParseData(dataS); err != nil {
			return nil, nil, fmt.Errorf("--data: %w", err)
		}
	}
	return f, data, nil
}

func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

func wassersteinCmd() *cobra.Command {
	var path, deltaS, dataS string
	epsF := newEps("")
	var asJSON bool
	c := &cobra.Command{
		Use:   "wasserstein",
		Short: "Wasserstein Mechanism: ε-Pufferfish for any framework over discrete data",
		Long: `wasserstein computes W, the largest ∞-Wasserstein distance between the
distributions of the query given two secrets X_i = a and X_i = b, over every
secret pair and every θ in Θ ([SWC17] Algorithm 1), exactly in rational
arithmetic. Releasing F(D) + Lap(W/ε) is ε-Pufferfish private (Theorem 3.2).
With --delta, W is the (ε, δ) variant of App. A.4: mass δ may be discarded
from each conditional, chosen optimally. The group-DP baseline (largest
group of dependent records × the query's Lipschitz constant) is printed for
comparison; Theorem 3.3 says W never exceeds it.

When the framework holds "data" (or --data is given), one private answer is
released with crypto/rand noise.

` + frameworkHelp + `

Examples:
  puff wasserstein --framework framework/testdata/flu.json --epsilon 1
  puff wasserstein --framework flu.json --epsilon 1 --json | jq .sigma
  puff wasserstein --framework flu.json --epsilon 1 --delta 1/100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			eps := epsF.Float()
			f, data, err := loadFramework(path, dataS, eps, false)
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
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, rep)
			}
			return rep.WriteText(f, out)
		},
	}
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
	c := &cobra.Command{
		Use:   "robust",
		Short: "Privacy against an adversary whose belief lies outside Θ (Theorem 2.4)",
		Long: `robust bounds what an ε-Pufferfish mechanism calibrated for Θ guarantees
against an adversary who believes a distribution θ̃ outside Θ ([SWC17]
Theorem 2.4): ε + 2Δ, where Δ is the smallest, over θ in Θ, of the largest
two-way max-divergence between θ̃ and θ conditioned on any secret. It names
the θ attaining the minimum and the secret attaining the maximum.

For a scalar query it also computes, by brute force, the actual privacy loss
under θ̃ of the Wasserstein Mechanism calibrated on Θ, which never exceeds
the bound.

--adversary is a file in the framework format (same records and domain);
each of its thetas is one belief θ̃.

Example:
  puff robust --framework flu.json --adversary believed.json --epsilon 1 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			eps := epsF.Float()
			if path == "" || advPath == "" {
				return fmt.Errorf("--framework FILE and --adversary FILE are required")
			}
			if err := checkEps(eps); err != nil {
				return err
			}
			f, _, err := readFramework(path)
			if err != nil {
				return err
			}
			adv, _, err := readFramework(advPath)
			if err != nil {
				return err
			}
			out, err := robust.Beliefs(f, adv, eps)
			if err != nil {
				return fmt.Errorf("%s: %w", advPath, err)
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(w, map[string]any{"epsilon": eps, "beliefs": out})
			}
			return robust.WriteBeliefs(w, out)
		},
	}
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
	c := &cobra.Command{
		Use:   "bn",
		Short: "Markov Quilt Mechanism on Bayesian networks (Algorithm 2)",
		Long: `bn runs the Markov Quilt Mechanism ([SWC17] Algorithm 2) on a framework
whose thetas are Bayesian networks. For every node X_i it scores candidate
Markov quilts — in each branch of the moral graph around X_i, either no
quilt or the layer of nodes at distance r — by card(X_N) / (ε − e(X_Q|X_i))
with the exact max-influence from variable elimination, and takes the best;
σ_max is the worst node over every network. Releasing F(D) + σ_max·L·Lap(1)
(every coordinate for a histogram; L = the query's Lipschitz constant) is
ε-Pufferfish private (Theorem 4.3). On a chain this is exactly puff scale's
MQMExact.

Inputs too large for exact search fail with the table or candidate count
that would be needed (raise --table-limit / --candidate-limit / --work-limit at your own
cost).

` + frameworkHelp + `

Example:
  puff bn --framework tree.json --epsilon 1 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			eps := epsF.Float()
			f, data, err := loadFramework(path, dataS, eps, true)
			if err != nil {
				return err
			}
			rep, err := mqm.RunNetwork(f, data, eps, mqm.NetworkOptions{TableLimit: tableLimit, CandidateLimit: candLimit, WorkLimit: workLimit}, noise.NewLaplace(nil))
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, rep)
			}
			return rep.WriteText(out)
		},
	}
	c.Flags().StringVar(&path, "framework", "", "framework JSON file whose thetas are networks")
	c.Flags().Var(epsF, "epsilon", "privacy parameter ε > 0: a decimal, a fraction (1/2) or ln(r)")
	c.Flags().StringVar(&dataS, "data", "", "comma-separated database to release (overrides the file's data)")
	c.Flags().IntVar(&tableLimit, "table-limit", 0, "largest inference table (entries); 0 = 4194304")
	c.Flags().IntVar(&candLimit, "candidate-limit", 0, "most candidate quilts per node; 0 = 4194304")
	c.Flags().Float64Var(&workLimit, "work-limit", 0, "most estimated search steps (≈ 7 s per 1e8); 0 = 2e8")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// readFrameworkNetworks parses a framework whose thetas are all networks,
// without expanding them into joint tables (networks may be far too large).
func readFrameworkNetworks(path string) (*framework.Framework, []int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("framework: %w", err)
	}
	return framework.ParseNetworks(bytes.NewReader(raw), path)
}

func composeCmd() *cobra.Command {
	var logPath, dataset string
	var asJSON bool
	c := &cobra.Command{
		Use:   "compose",
		Short: "Total Pufferfish guarantee of a sequence of releases, and the rule used",
		Long: `compose reads a release log and prints, for every dataset, the guarantee
that holds for all its releases together and the theorem it rests on:

  single          one release: its own ε
  mqm-sequential  MQM releases on the same segment: Σ ε ([SC17] Thm III.7)
  mqm-parallel    releases on disjoint segments: each pays its own ε plus the
                  max-influence across the gaps, capped by the neighbours' ε
                  ([SC17] Thm III.1, generalised; needs the dataset's class)
  mqmapprox-far   MQMApprox releases with two-sided active quilts on segments
                  farther apart than the quilts reach: max ε ([SC17] Thm III.3)
  max-divergence  two releases with a recorded dependence Δ: ε₁ + ε₂ + 2Δ
                  ([SC17] Thm III.6)
  dp / dp-group   DP releases: per-record sums (independent records), or the
                  sum over all records under correlation (group privacy)

The smallest claim among the rules that apply is reported. When none
applies to a dataset, compose prints the others, gives that dataset
"best": null with every rule's reason, and exits with an error: Pufferfish
privacy does not compose in general ([SC17] Thm III.4).

Log format (JSON):
  {"datasets": [{"name": "alice", "length": 1440, "class": "class.json"}],
   "releases": [{"name": "am", "dataset": "alice", "mechanism": "mqm-exact",
                 "epsilon": 0.5, "start": 1, "end": 720}, ...],
   "dependence": [{"releases": ["am", "pm"], "delta": 0.1}]}
mechanism is exact (or mqm-exact), approx (or mqm-approx), gk16, groupdp,
dp or pufferfish (any other ε-Pufferfish mechanism); start/end are 1-based
and default to the whole chain; MQMApprox releases may record their
"active_quilt": {"a": A, "b": B} (from puff scale --json). An mqm-exact
release on a segment that starts after time 1 records the segment its
noise was calibrated for, "calibration": {"start": S, "length": N} (from
puff scale --start S --length N); a record whose calibration does not match
its segment is refused, and so is one without a calibration when the class
has a fixed initial distribution (σ computed from time 1 can understate
the noise later in the chain).

Example:
  puff compose --log releases.json --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if logPath == "" {
				return fmt.Errorf("--log FILE is required")
			}
			fh, err := os.Open(logPath)
			if err != nil {
				return fmt.Errorf("log: %w", err)
			}
			defer fh.Close()
			l, err := compose.ParseLog(fh, logPath)
			if err != nil {
				return err
			}
			names := l.Datasets()
			if dataset != "" {
				names = []string{dataset}
			}
			if len(names) == 0 {
				return fmt.Errorf("%s: the log lists no datasets", logPath)
			}
			var out []compose.Guarantee
			var failed []string
			for _, d := range names {
				g, err := l.Guarantee(d)
				if err != nil && !errors.Is(err, compose.ErrNoRule) {
					return err
				}
				if err != nil {
					failed = append(failed, err.Error())
				}
				out = append(out, g)
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(w, map[string]any{"datasets": out}); err != nil {
					return err
				}
			} else if err := compose.WriteText(w, out); err != nil {
				return err
			}
			if failed != nil {
				return fmt.Errorf("%s", strings.Join(failed, "\n"))
			}
			return nil
		},
	}
	c.Flags().StringVar(&logPath, "log", "", "release log JSON file")
	c.Flags().StringVar(&dataset, "dataset", "", "only this dataset (default: all)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
