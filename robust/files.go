package robust

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/epsilon"
	"github.com/pufferfish-privacy/pufferfish/framework"
)

// BeliefsFiles is Beliefs of the framework file path against the
// adversary's framework-format file advPath, with puff robust's checks of
// its flags (--framework, --adversary, ε).
func BeliefsFiles(path, advPath string, eps float64) ([]Belief, error) {
	if path == "" || advPath == "" {
		return nil, fmt.Errorf("--framework FILE and --adversary FILE are required")
	}
	if err := epsilon.Check(eps); err != nil {
		return nil, err
	}
	f, _, err := framework.ReadFile(path, false)
	if err != nil {
		return nil, err
	}
	adv, _, err := framework.ReadFile(advPath, false)
	if err != nil {
		return nil, err
	}
	out, err := Beliefs(f, adv, eps)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", advPath, err)
	}
	return out, nil
}
