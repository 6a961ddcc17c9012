// Package mqm implements the Markov Quilt Mechanism for Markov chains
// ([SWC17] §4 and App. B.8; [SWC17] §4; docs/math.md §4).
//
// # Guarantee
//
// Let Θ be a class of Markov chains of length T, with secrets X_i = a and
// secret pairs (X_i = a, X_i = b), a ≠ b. For an L-Lipschitz query F,
// releasing F(D) + σ_max·L·Lap(1) with σ_max from Scale is ε-Pufferfish
// private in that framework ([SWC17] Theorem 4.3). For a vector query that
// is L-Lipschitz in L1, add independent σ_max·L·Lap(1) to every coordinate.
//
// # One search, two oracles
//
// A quilt of node i is written with the imaginary-node convention of
// [SWC16] App. B.8.2: Quilt{A, B} is {X_{i−A}, X_{i+B}}, where A = i means there
// is no left node (X_0) and B = T−i+1 means there is no right node
// (X_{T+1}). Its nearby set has A+B−1 nodes in every case, and the trivial
// quilt is {i, T−i+1} with card T.
//
// The max-influence of a quilt comes from an oracle:
//   - Exact (docs/math.md §4.2, [SWC17] eq. (5)): from P^d tabulated per distance;
//     initial distribution given, stationary, or "any" (supremum over all
//     initial distributions, [SWC17] App. C.4).
//   - Approx (docs/math.md §4.3; [SWC16] Lemma B.4, [SWC17] Lemma 4.8): from π_Θ
//     and g_Θ only; valid for every initial distribution.
//
// The search (scale.go) is oblivious to the oracle. Exact influences are
// computed per chain θ and the release uses max_θ σ_max(θ), which is valid
// because the privacy proof fixes one θ (docs/math.md §4) and never adds more noise
// than the class-level max-influence would.
//
// # Exact and bounds
//
// Exact influences are float64 evaluations of the exact formula; every
// influence is then increased by a rounding allowance (see allowance) so
// that floating-point error can only add noise. Approx influences are upper
// bounds by construction; π_Θ and g_Θ are shrunk by a relative 1e-9 before
// use for the same reason.
package mqm
