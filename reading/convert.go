package reading

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ParseParquetTypes reads column=type pairs, comma-separated (types:
// parquetTypes), as WriteParquet takes them; "" is none.
func ParseParquetTypes(s string) (map[string]string, error) {
	ty := map[string]string{}
	if s == "" {
		return ty, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("types %q: want column=type pairs, comma-separated (types: %s)", s, strings.Join(parquetTypes, ", "))
		}
		ty[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return ty, nil
}

// ConvertFile writes the CSV file in (optionally gzip) as the Parquet file
// out (WriteParquet): written beside out and renamed, so out is never
// half-written, with mode 0644.
func ConvertFile(in, out string, types map[string]string, rowsPerGroup int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		r = gz
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".puff-convert-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := WriteParquet(tmp, r, in, types, rowsPerGroup); err != nil {
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
}
