package audit

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/epsilon"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
)

// HistogramFile is Histogram of the one chain (θ) of the class file at
// classPath, with puff verify audit's checks of its flags (--class, ε).
func HistogramFile(classPath string, T int, eps float64, method mechanism.Name) (Report, error) {
	if classPath == "" {
		return Report{}, fmt.Errorf("--class FILE is required")
	}
	if err := epsilon.Check(eps); err != nil {
		return Report{}, err
	}
	cl, err := markov.ReadClassFile(classPath)
	if err != nil {
		return Report{}, err
	}
	if len(cl.Chains) != 1 {
		return Report{}, fmt.Errorf("%s: the audit needs exactly one chain (θ), the class has %d", classPath, len(cl.Chains))
	}
	return Histogram(cl.Chains[0], T, eps, method)
}
