package markov

import (
	"fmt"
	"os"
)

// ReadClassFile reads the class file at path (ParseClass); a file that
// cannot be opened is an error starting "class: ".
func ReadClassFile(path string) (*Class, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("class: %w", err)
	}
	defer f.Close()
	return ParseClass(f, path)
}
