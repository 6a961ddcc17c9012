// Package markov provides finite-state Markov chains θ = (q, P) and classes Θ
// of them: the data model of the Markov Quilt Mechanism ([SWC17] §4;
// docs/math.md §4).
//
// A Chain holds k named states, a row-stochastic transition matrix P and an
// initial distribution that is either given, the stationary distribution, or
// "any" (the chain stands for every initial distribution at once, docs/math.md §4.2).
// Constructors validate: every entry finite and in [0, 1], every row summing
// to 1 within RowTol. Inputs are never modified; matrices are copied.
//
// What is exact and what is numerical: Irreducible, Period and Reachable are
// exact graph computations on the zero pattern of P. Stationary, Eigengap
// and PPStarGap are float64 linear algebra (gonum) accurate to about 1e-14;
// callers that turn them into privacy guarantees (package mqm) shrink them in
// the safe direction.
package markov
