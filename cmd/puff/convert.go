package main

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/spf13/cobra"
)

func convertCmd() *cobra.Command {
	var in, out, types string
	var group int
	c := command("convert --data FILE.csv --out FILE.parquet [--types time=int64,kw=double]", "Write a CSV data file as Parquet (the same rows, typed columns)", "convert", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		if in == "" || out == "" {
			return fmt.Errorf("give --data FILE.csv and --out FILE.parquet")
		}
		if err := reading.CheckOutput("out", out, [2]string{"data", in}); err != nil {
			return err
		}
		ty, err := reading.ParseParquetTypes(types)
		if err != nil {
			return fmt.Errorf("--%w", err)
		}
		return reading.ConvertFile(in, out, ty, group)
	})
	f := c.Flags()
	f.StringVar(&in, "data", "", "CSV file with a header (optionally gzip)")
	f.StringVar(&out, "out", "", "Parquet file to write")
	f.StringVar(&types, "types", "", "column=type pairs, comma-separated; types: string (the default), int64, double, timestamp (RFC 3339 times); a missing value (empty, ?, NA, NaN) of a typed column is a null")
	f.IntVar(&group, "row-group", 100000, "rows per row group")
	return c
}
