package ledger

import (
	"context"
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// ReadRegistration is a dataset's registration as puff ledger init gives
// it: its name, total budget (ParseBudget), the class file every release
// must be calibrated for ("" for the first release's) and the chain's
// origin.
func ReadRegistration(name, budget, classPath, origin string) (Registration, error) {
	b, err := ParseBudget(budget)
	if err != nil {
		return Registration{}, fmt.Errorf("--%w", err)
	}
	var class *markov.Class
	if classPath != "" {
		if class, err = markov.ReadClassFile(classPath); err != nil {
			return Registration{}, err
		}
	}
	return Registration{Name: name, Budget: b, Class: class, Origin: origin}, nil
}

// Register registers r in s (Store.Init) and returns the dataset's state.
func Register(ctx context.Context, s Store, r Registration) (State, error) {
	if err := s.Init(ctx, r); err != nil {
		return State{}, err
	}
	return s.Dataset(ctx, r.Name)
}
