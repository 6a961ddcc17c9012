package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pufferfish-privacy/pufferfish/release"
)

func convertCmd() *cobra.Command {
	var in, out, types string
	var group int
	c := &cobra.Command{
		Use:   "convert --data FILE.csv --out FILE.parquet [--types time=int64,kw=double]",
		Short: "Write a CSV data file as Parquet (the same rows, typed columns)",
		Long:  help("convert"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" || out == "" {
				return fmt.Errorf("give --data FILE.csv and --out FILE.parquet")
			}
			ty := map[string]string{}
			if types != "" {
				for _, kv := range strings.Split(types, ",") {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || strings.TrimSpace(k) == "" {
						return fmt.Errorf("--types %q: want column=type pairs, comma-separated (types: %s)", types, strings.Join(release.ParquetTypes, ", "))
					}
					ty[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			f, err := os.Open(in)
			if err != nil {
				return err
			}
			defer f.Close()
			var r io.Reader = bufio.NewReader(f)
			if magic, _ := r.(*bufio.Reader).Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
				gz, err := gzip.NewReader(r)
				if err != nil {
					return fmt.Errorf("%s: %w", in, err)
				}
				r = gz
			}
			// written beside the target and renamed: never a half-written file
			tmp, err := os.CreateTemp(filepath.Dir(out), ".puff-convert-*")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			if err := release.WriteParquet(tmp, r, in, ty, group); err != nil {
				tmp.Close()
				return err
			}
			if err := tmp.Chmod(0o644); err != nil {
				tmp.Close()
				return err
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			return os.Rename(tmp.Name(), out)
		},
	}
	f := c.Flags()
	f.StringVar(&in, "data", "", "CSV file with a header (optionally gzip)")
	f.StringVar(&out, "out", "", "Parquet file to write")
	f.StringVar(&types, "types", "", "column=type pairs, comma-separated; types: string (the default), int64, double, timestamp (RFC 3339 times); a missing value (empty, ?, NA, NaN) of a typed column is a null")
	f.IntVar(&group, "row-group", 100000, "rows per row group")
	return c
}
