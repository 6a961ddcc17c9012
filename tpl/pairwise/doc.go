// Package pairwise bounds the temporal privacy leakage of releases that
// are differentially private per reading of a Markov chain by a ratio for
// every pair of states, certified by transport plans (docs/math.md §8.11),
// and calibrates their Laplace scale.
//
// The scalar recursion of package tpl ([CYXX18] Thm 4, Thm 10) keeps one
// number per step, the largest log-ratio of the likelihood of the rest of
// the output across states, and bounds the next step over the whole cone
// of vectors with that spread; on chains of many numeric levels, each close
// to its neighbours, that cone is far too large. Here a k×k matrix Λ bounds
// m(a)/m(a') for every ordered pair of states and every message m (the
// likelihood of the releases after, or before, step t as a function of
// X_t); Λ is certified when a transport plan for every pair maps the bound
// to itself (Certify). The loss of per-step releases with per-reading
// budget R = e^{sensitivity/b} is then at most
//
//	log R + max_{a≠a'} log Λ_F(a, a') + log Λ_B(a, a'),
//
// and by docs/math.md §8.6–8.7 so is the loss of every release that is
// event-level DP with that R: windowed histograms of any widths, several
// series, every chain of a class. The scalar recursion's bound is taken as
// a second certificate, so the bound is never above package tpl's.
package pairwise
