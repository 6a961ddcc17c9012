package hmm

import "os"

// ReadFile reads the model file at path (ParseFile).
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseFile(f, path)
}
