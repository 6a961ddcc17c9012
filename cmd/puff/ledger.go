package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/ledger/logfile"
)

// exitRefused is the status of a release the ledger refused (over budget):
// the reason is on stderr, nothing on stdout.
const exitRefused = 4

func ledgerCmd() *cobra.Command {
	return group("ledger init|show|export|import --ledger DSN", "A durable privacy-budget ledger (SQLite file or PostgreSQL) that every release is checked against", "ledger",
		ledgerInitCmd(), ledgerShowCmd(), ledgerExportCmd(), ledgerImportCmd())
}

func ledgerInitCmd() *cobra.Command {
	var dsn, dataset, budget, classPath, origin string
	var asJSON bool
	c := command("init --ledger DSN --dataset NAME --budget E [--class FILE] [--origin TIME]", "Create the ledger if needed and register a dataset with its total budget", "ledger-init", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			if dsn == "" || dataset == "" || budget == "" {
				return fmt.Errorf("--ledger, --dataset and --budget are required")
			}
			reg, err := ledger.ReadRegistration(dataset, budget, classPath, origin)
			if err != nil {
				return err
			}
			return withLedger(cmd, dsn, true, func(s ledger.Store) error {
				st, err := ledger.Register(cmd.Context(), s, reg)
				if err != nil {
					return err
				}
				return emit(cmd, asJSON, st, ledger.States{st}.WriteText)
			})
		})
	f := c.Flags()
	f.StringVar(&dsn, "ledger", "", "the ledger: a SQLite file (created if missing) or a postgres:// URL")
	f.StringVar(&origin, "origin", "", "time of the chain's first step, written as the data's times are (read with each release's time flags): every release places its series after it, so a day file is calibrated where it lies (docs/math.md §4.10)")
	f.StringVar(&dataset, "dataset", "", "dataset name: "+ledger.NameRule)
	f.StringVar(&budget, "budget", "", "total privacy budget ε_total: a decimal such as 1 or 2.5 (fixed once set)")
	f.StringVar(&classPath, "class", "", "the class Θ every release must be calibrated for (default: the first release's)")
	f.BoolVar(&asJSON, "json", false, "print the dataset's state as JSON")
	return c
}

// ledgerReader is a command that reads an existing ledger (show, export):
// --ledger DSN [--dataset NAME] [--json].
func ledgerReader(use, short, long, jsonUsage string, body func(cmd *cobra.Command, s ledger.Store, dataset string, asJSON bool) error) *cobra.Command {
	var dsn, dataset string
	var asJSON bool
	c := command(use, short, long, cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		if dsn == "" {
			return fmt.Errorf("--ledger is required")
		}
		return withLedger(cmd, dsn, false, func(s ledger.Store) error { return body(cmd, s, dataset, asJSON) })
	})
	f := c.Flags()
	f.StringVar(&dsn, "ledger", "", "the ledger: a SQLite file or a postgres:// URL")
	f.StringVar(&dataset, "dataset", "", "only this dataset")
	f.BoolVar(&asJSON, "json", false, jsonUsage)
	return c
}

func ledgerShowCmd() *cobra.Command {
	return ledgerReader("show --ledger DSN [--dataset NAME] [--json]", "Budget spent and remaining per dataset, and a dataset's releases", "ledger-show", "print JSON",
		func(cmd *cobra.Command, s ledger.Store, dataset string, asJSON bool) error {
			l, err := ledger.List(cmd.Context(), s, dataset)
			if err != nil {
				return err
			}
			return emit(cmd, asJSON, l, l.WriteText)
		})
}

func ledgerExportCmd() *cobra.Command {
	return ledgerReader("export --ledger DSN [--dataset NAME] [--json]", "Every recorded release: CSV, or JSON lines with its record and noisy result", "ledger-export",
		"JSON lines: one object per release with its record (segments) and noisy result",
		func(cmd *cobra.Command, s ledger.Store, dataset string, asJSON bool) error {
			return ledger.Export(cmd.Context(), s, cmd.OutOrStdout(), dataset, asJSON)
		})
}

func ledgerImportCmd() *cobra.Command {
	var dsn, logPath, dataset, budget string
	var asJSON bool
	c := command("import --log FILE --ledger DSN --budget E [--dataset NAME]", "Move a release log (puff release --log) into the durable ledger", "ledger-import", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			if dsn == "" || logPath == "" || budget == "" {
				return fmt.Errorf("--log, --ledger and --budget are required")
			}
			b, err := ledger.ParseBudget(budget)
			if err != nil {
				return fmt.Errorf("--%w", err)
			}
			m, err := logfile.ReadMigration(logPath, b, dataset) // before the ledger is created
			if err != nil {
				return err
			}
			return withLedger(cmd, dsn, true, func(s ledger.Store) error {
				sts, err := m.Into(cmd.Context(), s)
				if err != nil {
					return err
				}
				return emit(cmd, asJSON, sts, ledger.States(sts).WriteText)
			})
		})
	f := c.Flags()
	f.StringVar(&logPath, "log", "", "the release log to move (a JSON file written by puff release --log)")
	f.StringVar(&dsn, "ledger", "", "the ledger: a SQLite file (created if missing) or a postgres:// URL")
	f.StringVar(&budget, "budget", "", "total privacy budget ε_total of each imported dataset: a decimal such as 1 or 2.5 (fixed once set)")
	f.StringVar(&dataset, "dataset", "", "only this dataset of the log (default: every dataset)")
	f.BoolVar(&asJSON, "json", false, "print the imported datasets' states as a JSON array")
	return c
}
