package hmm

import "os"

// ReadFile reads the model file at path (parseFile).
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseFile(f, path)
}
