// Package bdp implements local Bayesian differential privacy for readings
// that form a Markov chain ([CGSSY]; docs/math.md §6).
//
// # Definition
//
// Readings x_1..x_n come from a chain θ = (q, P). A per-reading Mechanism
// releases y_t ~ E(x_t, ·) independently for every t (randomized response
// is the binary case). An adversary A(i, K) targets x_i and knows the true
// readings x_K of a set K ∌ i; unknown readings are marginalised under θ.
// Its Bayesian differential privacy loss (BDPL) is
//
//	sup over a, a', x_K, y of ln P(y | x_i=a, x_K) / P(y | x_i=a', x_K),
//
// the supremum running over the conditionings with positive probability.
// ε-BDP means BDPL ≤ ε for every i and every K. K = all other readings is
// plain local DP; K = ∅ is the adversary the published mechanism of
// [CGSSY] is tuned for.
//
// # What is computed exactly
//
// Worst is the exact worst BDPL over every target and every K, with an
// adversary and an output that attain it (binary chains, any number of
// output symbols, O(n·m) time; chains with more states by enumeration when
// small). Limit is a rigorous upper bound on the supremum over every length
// n, within 1e-12 of it. CertifiedFlip searches the least flip probability
// whose worst case is ≤ ε, PublishedFlip is [CGSSY]'s ρ*(θ, ε), and
// Attack measures what a correlation-aware adversary actually learns.
//
// Noise for Sanitize comes from crypto/rand through noise.Secure.
package bdp
