package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/stream"
)

func streamCmd() *cobra.Command {
	return group("stream init|append|show --ledger DSN --dataset NAME", "A dataset fed over time: every window released once, all of them for one charge of ε", "stream",
		streamInitCmd(), streamAppendCmd(), streamShowCmd())
}

func streamInitCmd() *cobra.Command {
	var df dataFlags
	var dsn, dataset, classPath, window, query string
	var asJSON, running bool
	var limits release.Limits
	var timeout time.Duration
	epsF, methodF := newEps("1"), newMethod()
	c := command("init --ledger DSN --dataset NAME --class FILE --window D --epsilon E", "Declare a stream on a ledger dataset and charge its budget once", "stream-init", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			if dsn == "" || dataset == "" || classPath == "" || window == "" {
				return fmt.Errorf("--ledger, --dataset, --class and --window are required")
			}
			ctx, cancel := computing(cmd, timeout)
			defer cancel()
			s, err := stream.Declaration{ClassPath: classPath, Data: &df.DataFlags, Window: window, Epsilon: epsF.Float(), EpsilonRat: epsF.Rat(),
				Method: methodF.Name, Query: query, Running: running, Limits: limits}.Declare(ctx)
			if err != nil {
				return stoppedErr(err, timeout)
			}
			return withLedger(cmd, dsn, false, func(store ledger.Store) error {
				st, err := stream.Start(cmd.Context(), store, dataset, s)
				if err != nil {
					return err
				}
				return emit(cmd, asJSON, st, st.WriteText)
			})
		})
	df.register(c)
	c.Flags().MarkHidden("data")
	c.Flags().MarkHidden("gap")
	f := c.Flags()
	f.StringVar(&dsn, "ledger", "", "the ledger (SQLite file or postgres:// URL) holding the dataset (puff ledger init)")
	f.StringVar(&dataset, "dataset", "", "the dataset the stream belongs to")
	f.StringVar(&classPath, "class", "", "class file (JSON) describing Θ")
	f.StringVar(&window, "window", "", "window length (e.g. 1h, 24h); calendar windows in --tz")
	f.StringVar(&query, "query", "counts", "counts, relative or mean")
	f.Var(epsF, "epsilon", "ε for every window of the stream together: a decimal, a fraction (1/2) or ln(r)")
	f.Var(methodF, "method", "exact | approx")
	f.BoolVar(&running, "running", false, "after every closed window, release the count histogram since the first window (binary-tree mechanism: noise grows as log³ t in variance, not t)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	limitFlags(c, &limits, &timeout)
	return c
}

func streamAppendCmd() *cobra.Command {
	var dsn, dataset, path, closeAt string
	var asJSON bool
	c := command("append --ledger DSN --dataset NAME --data FILE [--close TIME] [--json]", "Append readings to a stream and release every window they close", "stream-append", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			if dsn == "" || dataset == "" || path == "" && closeAt == "" {
				return fmt.Errorf("--ledger, --dataset and --data (or --close) are required")
			}
			return withLedger(cmd, dsn, false, func(store ledger.Store) error {
				wins, dup, err := stream.AppendFile(cmd.Context(), store, dataset, path, closeAt)
				if err != nil {
					return err
				}
				v := map[string]any{"windows": wins}
				if dup {
					v["duplicate"] = true
				}
				return emit(cmd, asJSON, v, func(w io.Writer) error { return stream.WriteWindows(w, wins, dup) })
			})
		})
	f := c.Flags()
	f.StringVar(&dsn, "ledger", "", "the ledger holding the stream")
	f.StringVar(&dataset, "dataset", "", "the stream's dataset")
	f.StringVar(&path, "data", "", "readings that continue the stream (CSV, optionally gzip), read with the stream's flags")
	f.StringVar(&closeAt, "close", "", "also close every window that ends at or before this time (written as the data's times are)")
	f.BoolVar(&asJSON, "json", false, `print {"windows": [...]} (the windows this append released)`)
	return c
}

func streamShowCmd() *cobra.Command {
	var dsn, dataset string
	var asJSON bool
	c := command("show --ledger DSN --dataset NAME [--json]", "Print a stream's settings and every window it released (nothing is drawn)", "stream-show", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			if dsn == "" || dataset == "" {
				return fmt.Errorf("--ledger and --dataset are required")
			}
			return withLedger(cmd, dsn, false, func(store ledger.Store) error {
				sh, err := stream.Show(cmd.Context(), store, dataset)
				if err != nil {
					return err
				} else if asJSON {
					return sh.WriteJSON(cmd.OutOrStdout())
				}
				return sh.WriteText(cmd.OutOrStdout())
			})
		})
	f := c.Flags()
	f.StringVar(&dsn, "ledger", "", "the ledger holding the stream")
	f.StringVar(&dataset, "dataset", "", "the stream's dataset")
	f.BoolVar(&asJSON, "json", false, `print {"dataset", "stream", "windows": [...]}`)
	return c
}
