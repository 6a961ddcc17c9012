package compose_test

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/compose"
)

// Two MQM releases on the same chain add up ([SC17] Theorem III.7).
func ExampleLedger() {
	l := compose.New()
	l.AddDataset(compose.Dataset{Name: "alice", Length: 1440})
	l.Record(compose.Release{Name: "daily histogram", Dataset: "alice", Kind: compose.MQMExact, Epsilon: 0.5})
	l.Record(compose.Release{Name: "hourly counts", Dataset: "alice", Kind: compose.MQMApprox, Epsilon: 1})
	g, err := l.Guarantee("alice")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ε = %g by %s (%s)\n", g.Best.Float(), g.Best.Rule, g.Best.Theorem)
	// Output: ε = 1.5 by mqm-sequential ([SC17] Theorem III.7)
}
