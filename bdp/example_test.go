package bdp_test

import (
	"fmt"

	"github.com/pufferfish-privacy/pufferfish/bdp"
)

// The published flip ρ* protects against adversaries with no side
// knowledge, but not against one who knows the readings on both sides of
// the target ([CGSSY]; docs/math.md §6).
func ExampleWorst() {
	ch, _ := bdp.SymmetricChain(0.4)
	rho, _ := bdp.PublishedFlip(0.4, 4)
	mech, _ := bdp.RandomizedResponse(rho, rho)
	l, _ := bdp.Worst(ch, mech, 5, bdp.AnyKnown)
	fmt.Printf("loss %.6f: target %d, known %v, outputs %v\n", l.Loss, l.Adversary.Target, l.Adversary.Known, l.Output)
	// Output: loss 4.110912: target 3, known [{1 1} {5 1}], outputs [{2 4 0}]
}

// The certified flip keeps every adversary within ε at every length.
func ExampleCertifiedFlip() {
	ch, _ := bdp.SymmetricChain(0.4)
	c, _ := bdp.CertifiedFlip(ch, 4, 0)
	fmt.Printf("flip %.6f, worst loss %.6f\n", c.Flip, c.Worst.Loss)
	// Output: flip 0.041848, worst loss 4.000000
}

// [CGSSY]'s headline: DP noise at ε = 0.5 on a strongly correlated chain.
func ExampleAttack() {
	ch, _ := bdp.SymmetricChain(0.02)
	mech, _ := bdp.RandomizedResponse(bdp.DPFlip(0.5), bdp.DPFlip(0.5))
	r, _ := bdp.Attack(ch, mech, 30, 15)
	fmt.Printf("single reading %.6f, correlation-aware %.6f (implied ε %.3f)\n",
		r.SingleReading.Success, r.CorrelationAware.Success, r.CorrelationAware.ImpliedEpsilon)
	// Output: single reading 0.622459, correlation-aware 0.831215 (implied ε 1.594)
}
