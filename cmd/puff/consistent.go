package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/release"
)

func consistentCmd() *cobra.Command {
	var windows, profile string
	var asJSON bool
	var timeout time.Duration
	c := command("consistent --windows W.json --profile P.json [--json]", "Make a windowed release and a profile release of the same readings consistent with each other (post-processing, no privacy cost)", "consistent", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		ctx, cancel := computing(cmd, timeout)
		defer cancel()
		res, err := release.ConsistentFiles(ctx, windows, profile)
		if err != nil {
			return err
		}
		for _, m := range res.Warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "puff: warning:", m)
		}
		return emit(cmd, asJSON, res, res.WriteText)
	})
	f := c.Flags()
	f.StringVar(&windows, "windows", "", "the JSON report (`FILE`) of a windowed release: puff release --window … --json")
	f.StringVar(&profile, "profile", "", "the JSON report (`FILE`) of a profile release of the same readings: puff release --profile … --json")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "stop the computation after this long")
	return c
}
