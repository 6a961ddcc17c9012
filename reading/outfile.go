package reading

import (
	"fmt"
	"os"
)

// CheckOutput refuses an output file (named by its flag, e.g. "out") that
// is one of the inputs, given as flag and path pairs: the same file by
// os.SameFile, so the same path written another way, a symbolic link or a
// hard link to it. Paths that do not exist yet (or are not files, such as
// a postgres:// URL) pass. Every command that writes an --out file checks
// it before it reads anything.
func CheckOutput(flag, out string, inputs ...[2]string) error {
	o, err := os.Stat(out)
	if err != nil {
		return nil // not there yet: it is made
	}
	for _, in := range inputs {
		if in[1] == "" {
			continue
		}
		if i, err := os.Stat(in[1]); err == nil && os.SameFile(o, i) {
			return fmt.Errorf("--%s %s is the input --%s %s (the same file): it would be overwritten; give another output file", flag, out, in[0], in[1])
		}
	}
	return nil
}
