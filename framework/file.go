package framework

import (
	"bytes"
	"fmt"
	"os"

	"github.com/pufferfish-privacy/pufferfish/epsilon"
)

// ReadFile reads the framework file at path: Parse, or ParseNetworks when
// networks is set (its thetas are kept as Bayesian networks). A file that
// cannot be opened is an error starting "framework: ".
func ReadFile(path string, networks bool) (*Framework, []int, error) {
	if networks {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("framework: %w", err)
		}
		return ParseNetworks(bytes.NewReader(raw), path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("framework: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Load checks the flags wasserstein and bn share (--framework path, ε) and
// reads the framework (ReadFile) and the database to release: the file's,
// or data (ParseData) when given.
func Load(path, data string, eps float64, networks bool) (*Framework, []int, error) {
	if path == "" {
		return nil, nil, fmt.Errorf("--framework FILE is required")
	}
	if err := epsilon.Check(eps); err != nil {
		return nil, nil, err
	}
	f, db, err := ReadFile(path, networks)
	if err != nil {
		return nil, nil, err
	}
	if data != "" {
		if db, err = f.ParseData(data); err != nil {
			return nil, nil, fmt.Errorf("--data: %w", err)
		}
	}
	return f, db, nil
}
