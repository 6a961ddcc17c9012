package framework

import (
	"bytes"
	"fmt"
	"os"
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
