package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/release"
)

func consistentCmd() *cobra.Command {
	var windows, profile string
	var asJSON bool
	var timeout time.Duration
	c := command("consistent --windows W.json --profile P.json [--json]", "Make a windowed release and a profile release of the same readings consistent with each other (post-processing, no privacy cost)", "consistent", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		if windows == "" || profile == "" {
			return errors.New("--windows and --profile are required: the JSON reports of `puff release --window … --json` and `puff release --profile … --json` of the same data")
		}
		w, err := os.Open(windows)
		if err != nil {
			return err
		}
		defer w.Close()
		p, err := os.Open(profile)
		if err != nil {
			return err
		}
		defer p.Close()
		ctx, cancel := computing(cmd, timeout)
		defer cancel()
		res, err := release.ConsistentReports(ctx, w, windows, p, profile)
		if err != nil {
			return err
		}
		for _, m := range res.Warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "puff: warning:", m)
		}
		out := cmd.OutOrStdout()
		if asJSON {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		}
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		row := func(name string, v []float64) {
			var b strings.Builder
			for _, x := range v {
				fmt.Fprintf(&b, "\t%.6g", x)
			}
			fmt.Fprintf(tw, "%s%s\n", name, b.String())
		}
		fmt.Fprintf(tw, "estimate\t%s\n", strings.Join(res.Bins, "\t"))
		for _, e := range res.Windows {
			row(e.Start+" – "+e.End, e.Estimate)
		}
		for _, e := range res.Profile {
			row("cell "+e.Cell, e.Estimate)
		}
		row("total", res.Total)
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "\n%d windows and %d profile cells of %g readings: every histogram non-negative and summing to its readings (at most, where a value may be missing), and both sides' totals equal (largest difference of a bin's totals: %.3g before, %.3g after); a projection of the two releases' private values only, at no privacy cost (docs/math.md §4.14)\n",
			len(res.Windows), len(res.Profile), res.Readings, res.DisagreementBefore, res.DisagreementAfter)
		return err
	})
	f := c.Flags()
	f.StringVar(&windows, "windows", "", "the JSON report (`FILE`) of a windowed release: puff release --window … --json")
	f.StringVar(&profile, "profile", "", "the JSON report (`FILE`) of a profile release of the same readings: puff release --profile … --json")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "stop the computation after this long")
	return c
}
