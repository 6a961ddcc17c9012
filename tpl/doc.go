// Package tpl computes the temporal privacy leakage of releases that are
// differentially private step by step, under an adversary who knows the
// Markov chain of the readings, and calibrates their Laplace scale.
//
// The bound is the recursion of Cao, Yoshikawa, Xiao and Xiong ([CYXX17];
// [CYXX18] Thm 4 and Thm 10), stated and proved in docs/math.md §8.1–8.5,
// extended there to classes of chains, fixed and arbitrary initial
// distributions, missing readings and several series. By the comparison
// theorem of docs/math.md §8.6 the same number bounds every release that
// is ε-DP with respect to one reading ("event-level"): windowed count
// histograms of any widths with i.i.d. Lap(b) on every bin are covered by
// the per-step bound at ε_t = 2/b, whatever the windows' widths and the
// number of states. So the per-bin scale that Calibrate returns makes
// per-step one-hot streams and windowed histograms of any widths
// ε-Pufferfish private for the class (secrets X_t = a, pairs a ≠ a').
//
// Times are 1-based, as in docs/math.md.
package tpl
