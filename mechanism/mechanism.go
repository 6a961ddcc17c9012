// Package mechanism names the release mechanisms once, for every package
// that releases, audits, records or composes (release, audit, experiment,
// compose, the CLI). The names are the CLI's spellings.
package mechanism

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Name is a release mechanism.
type Name string

const (
	// Exact is the Markov Quilt Mechanism with exact max-influence
	// (MQMExact, [SWC17] Thm 4.3, eq. (5)).
	Exact Name = "exact"
	// Approx is the Markov Quilt Mechanism with the π_Θ, g_Θ bound
	// (MQMApprox, [SWC17] Lemma 4.8, [SWC16] Lemma B.4).
	Approx Name = "approx"
	// GK16 is Ghosh–Kleinberg inferential privacy ([GK]).
	GK16 Name = "gk16"
	// GroupDP treats the whole series as one group: ε-Pufferfish for every Θ.
	GroupDP Name = "groupdp"
	// DP is entry-level differential privacy: no protection against
	// correlation.
	DP Name = "dp"
	// Pufferfish is any other ε-Pufferfish mechanism (the Wasserstein
	// Mechanism, MQM on Bayesian networks), known to the ledger only by
	// its ε.
	Pufferfish Name = "pufferfish"
)

// Release lists the mechanisms puff release and puff scale offer, in the
// order help texts show them.
var Release = []Name{Exact, Approx, GK16, GroupDP, DP}

// aliases are other spellings accepted on input (older release logs).
var aliases = map[string]Name{"mqm-exact": Exact, "mqm-approx": Approx}

// Parse reads a mechanism name (any case; "mqm-exact" and "mqm-approx" are
// accepted for exact and approx).
func Parse(s string) (Name, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if n, ok := aliases[t]; ok {
		return n, nil
	}
	for _, n := range append(Release, Pufferfish) {
		if string(n) == t {
			return n, nil
		}
	}
	return "", fmt.Errorf("unknown mechanism %q (want one of exact, approx, gk16, groupdp, dp, pufferfish)", s)
}

// ParseRelease is Parse restricted to the mechanisms of puff release.
func ParseRelease(s string) (Name, error) {
	n, err := Parse(s)
	if err == nil && n == Pufferfish {
		err = fmt.Errorf("mechanism %q cannot release a histogram (want exact, approx, gk16, groupdp or dp)", s)
	}
	return n, err
}

// MQM reports whether n is a Markov Quilt Mechanism.
func (n Name) MQM() bool { return n == Exact || n == Approx }

// Title is the name papers use: MQMExact, MQMApprox, GK16, GroupDP, DP.
func (n Name) Title() string {
	switch n {
	case Exact:
		return "MQMExact"
	case Approx:
		return "MQMApprox"
	case GK16:
		return "GK16"
	case GroupDP:
		return "GroupDP"
	case DP:
		return "DP"
	case Pufferfish:
		return "Pufferfish"
	}
	return string(n)
}

// UnmarshalJSON accepts every spelling Parse does.
func (n *Name) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("mechanism: want a string, got %s", b)
	}
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*n = v
	return nil
}
