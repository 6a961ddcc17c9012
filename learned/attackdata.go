package learned

import (
	"fmt"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/bdp"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// AttackData is puff local attack --adversary lstm on data (named name):
// sanitise its binary series with the flip of kind for ε, train the LSTM on the first part of each series and score it
// and the model-based attackers on the rest (Attack).
func AttackData(data *reading.Data, name string, kind bdp.FlipKind, eps, trainFrac float64, cfg Config) (Report, error) {
	if len(data.States) != 2 {
		return Report{}, fmt.Errorf("%s: the attack needs binary readings (two states), found %d (%s); name them with --states", name, len(data.States), strings.Join(data.States, ", "))
	}
	r, err := Attack(data.States, data.Runs(), kind, eps, trainFrac, cfg)
	if err != nil {
		return Report{}, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}
