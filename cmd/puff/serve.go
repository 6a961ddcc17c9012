package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/serve"
	"github.com/pufferfish-privacy/pufferfish/stream"
)

func serveCmd() *cobra.Command {
	var dsn, addr, dataDir string
	var demo bool
	var limits release.Limits
	var releaseTimeout time.Duration
	var appendBytes int64
	var appendReadings int
	c := command("serve [--ledger DSN] [--addr HOST:PORT] [--data-dir DIR] [--demo]", "Serve private releases to several analysts over HTTP, with a web page, on the durable ledger", "serve", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			mqm.SetMaxMemory(uint64(maxMemoryMB) << 20)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			cmd.SetContext(ctx)
			return withLedger(cmd, dsn, true, func(store ledger.Store) error {
				srv, err := serve.New(serve.Config{Store: store, DataDir: dataDir, Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil)), Limits: limits, ReleaseTimeout: releaseTimeout,
					MaxAppendBytes: appendBytes, MaxAppendReadings: appendReadings})
				if err != nil {
					return err
				}
				defer srv.Close()
				if demo {
					if err := srv.Demo(ctx, os.Stderr); err != nil {
						return err
					}
				}
				return srv.ListenAndServe(ctx, addr, "ledger", serve.RedactDSN(dsn), "data_dir", dataDir)
			})
		})
	f := c.Flags()
	f.StringVar(&dsn, "ledger", "puff-ledger.db", "the ledger: a SQLite file (created if missing) or a postgres:// URL (several servers may share one PostgreSQL ledger)")
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address")
	f.StringVar(&dataDir, "data-dir", ".", "datasets' data files are paths inside this directory (nothing outside it can be read)")
	f.IntVar(&limits.MaxWindows, "max-windows", release.DefaultMaxWindows, "the most calendar windows one release may have (refused before any work beyond)")
	f.IntVar(&limits.MaxCells, "max-cells", release.DefaultMaxCells, "the most released numbers (windows × bins) one release may have (refused before any work beyond)")
	f.Float64Var(&limits.MaxLeakageWork, "max-leakage-work", release.DefaultMaxLeakageWork, "the most multiply-adds the pairwise leakage bound may take, estimated up front and counted as it runs (beyond it the bound is not computed, or its linear programs are left out, and the calibration says why)")
	f.IntVar(&limits.MaxStates, "max-states", release.DefaultMaxStates, fmt.Sprintf("the most states (bins, levels) a dataset's class may have, refused at registration and before any work beyond (≈ %.2g GB of memory per computation at the default)", release.StateBytes(release.DefaultMaxStates)/1e9))
	f.DurationVar(&releaseTimeout, "release-timeout", DefaultTimeout, "stop a release's or a σ's computation after this long, and any when the client leaves or the server stops (nothing is spent); 0: no limit")
	f.Int64Var(&appendBytes, "max-append-bytes", serve.DefaultMaxAppendBytes, "the most bytes one append of readings (POST /v1/streams/NAME/readings) may have after decompression: a gzip body's decompressed bytes, a plain body's bytes (413 beyond, nothing appended)")
	f.IntVar(&appendReadings, "max-append-readings", serve.DefaultMaxAppendReadings, fmt.Sprintf("the most readings one append of readings may have, at most %d (413 beyond, nothing appended)", stream.MaxRows))
	memoryFlag(c, "a release's or a σ's computation (all at once: the heap is the server's)")
	f.BoolVar(&demo, "demo", false, "register the built-in example as dataset \"activity\" (budget 3) if missing, and print an admin token on stderr if the ledger has none")
	return c
}

func tokenCmd() *cobra.Command {
	var dsn string
	var scopes []string
	var budget string
	create := command("create --ledger DSN --scope S [--scope S...] [--budget E]", "Create a token and print it (alone, once) on stdout", "token-create", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			if dsn == "" || len(scopes) == 0 {
				return fmt.Errorf("--ledger and at least one --scope are required (admin, release:DATASET, read:DATASET, feed:DATASET)")
			}
			b, err := ledger.ParseToken(scopes, budget)
			if err != nil {
				return err
			}
			return withLedger(cmd, dsn, true, func(s ledger.Store) error {
				secret, t, err := s.CreateToken(cmd.Context(), scopes, b)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "token %s created with scopes %v; it is shown once and stored only as a hash\n", t.ID, t.Scopes)
				_, err = fmt.Fprintln(cmd.OutOrStdout(), secret)
				return err
			})
		})
	create.Flags().StringVar(&dsn, "ledger", "", "the ledger (SQLite file or postgres:// URL)")
	create.Flags().StringArrayVar(&scopes, "scope", nil, "admin | release:DATASET | read:DATASET | feed:DATASET (append readings to the stream DATASET: its custodian's) (DATASET may be *); repeatable; a DATASET is "+ledger.NameRule)
	create.Flags().StringVar(&budget, "budget", "", "optional ε budget of this token inside each dataset's")
	var rdsn, id string
	revoke := command("revoke --ledger DSN --id ID", "Revoke a token (its requests get 401 from then on)", "token-revoke", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			if rdsn == "" || id == "" {
				return fmt.Errorf("--ledger and --id are required")
			}
			return withLedger(cmd, rdsn, false, func(s ledger.Store) error {
				if err := s.RevokeToken(cmd.Context(), id); err != nil {
					return err
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "token %s revoked\n", id)
				return err
			})
		})
	revoke.Flags().StringVar(&rdsn, "ledger", "", "the ledger")
	revoke.Flags().StringVar(&id, "id", "", "the token's id (the part after puff_, before the second _)")
	var ldsn string
	list := command("list --ledger DSN", "List tokens (ids, scopes, budgets, state; never secrets) as JSON", "token-list", cobra.NoArgs,
		func(cmd *cobra.Command, _ []string) error {
			if ldsn == "" {
				return fmt.Errorf("--ledger is required")
			}
			return withLedger(cmd, ldsn, false, func(s ledger.Store) error {
				ts, err := s.Tokens(cmd.Context())
				if err != nil {
					return err
				}
				if ts == nil {
					ts = []ledger.Token{}
				}
				return writeJSON(cmd.OutOrStdout(), map[string]any{"tokens": ts})
			})
		})
	list.Flags().StringVar(&ldsn, "ledger", "", "the ledger")
	return group("token create|revoke|list --ledger DSN", "Bearer tokens of puff serve (stored only as hashes)", "token", create, revoke, list)
}
