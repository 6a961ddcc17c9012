// Package record is the one typed description of a release that travels
// from the mechanism (package release) to the report, the ledger (package
// compose and the durable stores) and the service, without hand copying.
package record

import (
	"math/big"

	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// Release is one release as the ledger sees it: the mechanism, ε, the class
// it was calibrated for (by content hash) and the chain segments it read.
type Release struct {
	Mechanism mechanism.Name `json:"mechanism"`
	Epsilon   float64        `json:"epsilon"`
	// EpsilonExact is ε as the exact rational the user wrote ("1/3",
	// "0.1" as "1/10"), when it was written as a number and Epsilon is its
	// nearest float64: the ledger composes it exactly (Charge).
	// Empty for ln(r) and older records: the ledger reads Epsilon.
	EpsilonExact string `json:"epsilon_exact,omitempty"`
	Class        string `json:"class"` // markov.Class.Hash of the class the noise was calibrated for
	Query        string `json:"query"`
	// Profile is the profile kind when the release answered Query for
	// every cell of a profile (hour-of-day, day-of-week, week-hour;
	// docs/math.md §4.15); empty for every other release and in older
	// records.
	Profile  string    `json:"profile,omitempty"`
	Segments []Segment `json:"segments"`
	// Stream marks a stream's one charge: a release about every series
	// of the dataset at every time (its σ holds at every place and length,
	// docs/math.md §4.9), so it has no segments and composes with every
	// other release of the dataset by summing (package compose).
	Stream bool `json:"stream,omitempty"`
	// Sigma is the noise multiplier the release was drawn with (its
	// per-bin Laplace scale over its Lipschitz constant): changing one
	// reading changes its output density by at most e^{1/σ}, so it is
	// (1/σ)-DP per reading, which package compose's leakage rule reads
	// (docs/math.md §8.6). 0: not recorded (older records).
	Sigma float64 `json:"sigma,omitempty"`
}

// QueryName is the query as the ledger lists it: Query, with the profile
// kind when there is one ("mean by hour-of-day").
func (r *Release) QueryName() string {
	if r.Profile == "" {
		return r.Query
	}
	return r.Query + " by " + r.Profile
}

// Charge is the exact ε the ledger charges for the release
// (guarantee.Charge): the rational the user wrote when Epsilon is its
// nearest float, else Epsilon's shortest decimal; never below what the
// release loses. nil for a NaN or infinite Epsilon.
func (r *Release) Charge() *big.Rat { return guarantee.Charge(r.Epsilon, r.EpsilonExact) }

// Segment is the part of one series' chain a release read: chain times
// First..Last, counted from the series' first reading (time 1), and, for
// MQM, the quilt that attains σ for this series' pattern of readings.
type Segment struct {
	Series   string     `json:"series"`
	First    int        `json:"first"`
	Last     int        `json:"last"`
	Readings int        `json:"readings"`
	Quilt    *mqm.Quilt `json:"active_quilt,omitempty"` // two-sided MQM quilts only
}
