package release

import (
	"context"
	"errors"
	"os"
)

// ConsistentFiles is ConsistentReports of the JSON reports in the files
// windows and profile (puff consistent --windows, --profile).
func ConsistentFiles(ctx context.Context, windows, profile string) (*Consistent, error) {
	if windows == "" || profile == "" {
		return nil, errors.New("--windows and --profile are required: the JSON reports of `puff release --window … --json` and `puff release --profile … --json` of the same data")
	}
	w, err := os.Open(windows)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	p, err := os.Open(profile)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return ConsistentReports(ctx, w, windows, p, profile)
}
