// Package compose is a privacy ledger: it records releases about correlated
// datasets and answers "what guarantee holds now, and by which theorem"
// ([SC17]; docs/math.md §4.5). Pufferfish privacy does not
// compose in general ([SC17] Theorem III.4, reproduced in the tests), so every
// answer names the rule it used, and when no rule applies the ledger says so
// instead of guessing.
//
// # Rules
//
// A dataset is one Markov chain X_1..X_T with a class Θ. Releases name a
// segment [Start, End] of it (the whole chain by default), a mechanism kind
// and an ε.
//
//   - single: one release keeps its own ε.
//   - mqm-sequential ([SC17] Thm III.7): MQM releases on the same segment: Σ ε.
//   - mqm-parallel ([SC17] Thm III.1, generalised to any number of disjoint
//     segments; releases on an identical segment are first summed by III.7;
//     any release that is ε-Pufferfish for its own segment may take part).
//     For a secret in segment g, the other releases change the likelihood
//     ratio by at most min(E_left, e(X_{e}|X_{s_g})) on the left and the
//     mirror term on the right, where X_e is the last node of the nearest
//     segment to the left, e(·|·) the max-influence across the gap, and
//     E_left the guarantee of all segments to the left for a secret in their
//     last segment (computed by the same rule). Why: given X_{s_g}, the left
//     releases are independent of everything else, so their conditional law
//     is a mixture over x_{s_g} (bounded by the influence) or over x_e
//     (bounded by their own guarantee for X_e). Claim: max over g of
//     ε_g + left term + right term. It covers secrets inside the segments.
//   - mqmapprox-far ([SC17] Thm III.3, reconstructed): every release is
//     MQMApprox with a two-sided active quilt {X_{s−a}, X_{s+b}} attaining its
//     σ, one release per segment, and each gap is at least the left segment's
//     b and the right segment's a. Then the quilt, moved to any node of the
//     segment, has every other segment in its remote set or on the quilt,
//     and the MQM proof goes through unchanged: max ε.
//   - max-divergence ([SC17] Thm III.6, reconstructed): two releases whose joint
//     law and the product of their marginals are within max-divergence Δ in
//     both directions, for every secret and θ (Δ supplied by the user or
//     computed for small models): ε_1 + ε_2 + 2Δ.
//   - dp: differentially private releases compose by summing ε per record
//     (sequential) and taking the worst record (parallel); that is Pufferfish
//     only for independent records. Under a correlated Θ, dp-group applies
//     instead: M = (M_1..M_m) changes by at most e^{Σ_j ε_j} between any two
//     databases (ε_j = the sum over releases reading record j), so
//     P(M = w | X_t = a) ≤ max_x P(M = w | x) ≤ e^{Σ_j ε_j} P(M = w | X_t = b).
//
// The reconstructed rules (III.1, III.3, III.6) are verified by brute force
// on small chains in the tests: the exact Pufferfish loss of the joint
// release never exceeds the claim.
package compose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// Kind is the mechanism of a recorded release (package mechanism; logs
// may spell exact and approx as mqm-exact and mqm-approx). GroupDP, GK16
// and any other ε-Pufferfish mechanism compose as generic Pufferfish
// releases; only MQM and DP have rules of their own.
type Kind = mechanism.Name

// The mechanism kinds the ledger treats specially.
const (
	MQMExact   = mechanism.Exact
	MQMApprox  = mechanism.Approx
	DP         = mechanism.DP
	Pufferfish = mechanism.Pufferfish
)

// Quilt is the active two-sided quilt {X_{s−A}, X_{s+B}} of an MQMApprox
// release (puff scale reports it).
type Quilt = mqm.Quilt

// Release is one published output.
type Release struct {
	Name    string  `json:"name"`
	Dataset string  `json:"dataset"`
	Kind    Kind    `json:"mechanism"`
	Epsilon float64 `json:"epsilon"`
	// EpsilonExact is ε as written, when rational (record.Release):
	// composed exactly instead of Epsilon's decimal (guarantee.Charge).
	EpsilonExact string `json:"epsilon_exact,omitempty"`
	Start        int    `json:"start"` // 1-based, inclusive; 0 with End 0: the whole chain
	End          int    `json:"end"`
	Theta        string `json:"theta"`                  // label of the Θ it was calibrated for; "" = the dataset's
	Active       *Quilt `json:"active_quilt,omitempty"` // MQMApprox only
	// Sigma is the noise multiplier σ the release was drawn with
	// (record.Release.Sigma; 0: not recorded, as in logs written before
	// it was kept): the dp-leakage rule reads it.
	Sigma float64 `json:"sigma,omitempty"`
	// Calibration is the segment the noise was calibrated for (puff scale
	// --start S --length N); MQM releases must match their segment.
	Calibration *Calibration `json:"calibration,omitempty"`

	eps *big.Rat // Epsilon as an exact rational (Rat), set by Record
}

// Calibration is the chain segment a noise scale was computed for: times
// Start..End (1-based), given as End or as Length readings from Start
// (puff scale --start S --length N).
type Calibration struct {
	Start  int `json:"start"`
	End    int `json:"end,omitempty"`
	Length int `json:"length,omitempty"`
}

// end is the last calibrated time.
func (c Calibration) end() int {
	if c.End > 0 {
		return c.End
	}
	return c.Start + c.Length - 1
}

// Dataset is a chain of Length nodes with class Θ (nil if unknown).
type Dataset struct {
	Name   string
	Length int
	Class  *markov.Class
	Theta  string // label
}

// Claim is one rule's verdict: its guarantee (ε exact, what a budget is
// checked against) when it applies.
type Claim struct {
	guarantee.Guarantee
	Applies bool
	Why     string // why it does not apply, or how it was computed
}

func claim(rule, theorem string) Claim {
	return Claim{Guarantee: guarantee.Guarantee{Rule: rule, Theorem: theorem}}
}

// MarshalJSON writes {"rule", "theorem", "applies", "epsilon" (rounded
// up, when it applies and is not 0), "covers", "why"}.
func (c Claim) MarshalJSON() ([]byte, error) {
	var eps float64
	if c.Applies {
		eps = c.Float()
	}
	return json.Marshal(struct {
		Rule    string  `json:"rule"`
		Theorem string  `json:"theorem"`
		Applies bool    `json:"applies"`
		Epsilon float64 `json:"epsilon,omitempty"`
		Covers  string  `json:"covers,omitempty"`
		Why     string  `json:"why,omitempty"`
	}{c.Rule, c.Theorem, c.Applies, eps, c.Covers, c.Why})
}

// Guarantee is the best applicable claim, with all claims considered.
type Guarantee struct {
	Dataset string  `json:"dataset"`
	Best    Claim   `json:"best"`
	Claims  []Claim `json:"claims"`
}

// ErrNoRule is returned (wrapped) when no rule covers the releases.
var ErrNoRule = errors.New("no composition rule applies")

// Ledger records datasets, releases and measured dependences.
type Ledger struct {
	datasets map[string]*Dataset
	order    []string
	releases []Release
	names    map[string]bool
	rats     map[float64]*big.Rat // Rat of each recorded ε, computed once
	deps     map[[2]string]float64
	// leakage: Guarantee tries the dp-leakage rule when no other applies
	// (a ledger read from a log, ParseLog; Records tries it itself, over
	// every record and stream together).
	leakage bool
}

// New returns an empty ledger.
func New() *Ledger {
	return &Ledger{datasets: map[string]*Dataset{}, names: map[string]bool{}, rats: map[float64]*big.Rat{}, deps: map[[2]string]float64{}}
}

// AddDataset registers a chain.
func (l *Ledger) AddDataset(d Dataset) error {
	if d.Name == "" || d.Length < 1 {
		return fmt.Errorf("compose: a dataset needs a name and a length ≥ 1")
	}
	if _, dup := l.datasets[d.Name]; dup {
		return fmt.Errorf("compose: dataset %q registered twice", d.Name)
	}
	l.datasets[d.Name] = &d
	l.order = append(l.order, d.Name)
	return nil
}

// Record adds a release after validating it.
func (l *Ledger) Record(r Release) error {
	d, ok := l.datasets[r.Dataset]
	if !ok {
		return fmt.Errorf("compose: release %q: unknown dataset %q", r.Name, r.Dataset)
	}
	if r.Name == "" {
		r.Name = fmt.Sprintf("release %d", len(l.releases)+1)
	}
	if l.names[r.Name] {
		return fmt.Errorf("compose: two releases are named %q", r.Name)
	}
	if err := checks.EpsilonSpent(r.Epsilon); err != nil {
		return fmt.Errorf("compose: release %q: %w", r.Name, err)
	}
	if _, err := mechanism.Parse(string(r.Kind)); err != nil {
		return fmt.Errorf("compose: release %q: %w", r.Name, err)
	}
	if r.Start == 0 && r.End == 0 {
		r.Start, r.End = 1, d.Length
	}
	if r.Start < 1 || r.End > d.Length || r.Start > r.End {
		return fmt.Errorf("compose: release %q: segment [%d, %d] is not inside 1..%d", r.Name, r.Start, r.End, d.Length)
	}
	if r.EpsilonExact != "" {
		r.eps = guarantee.Charge(r.Epsilon, r.EpsilonExact)
	} else if r.eps = l.rats[r.Epsilon]; r.eps == nil {
		r.eps = guarantee.Rat(r.Epsilon)
		l.rats[r.Epsilon] = r.eps // shared: rules never modify a bound in place
	}
	if err := checkCalibration(&r, d); err != nil {
		return err
	}
	if r.Active != nil && (r.Kind != MQMApprox || r.Active.A < 1 || r.Active.B < 1) {
		return fmt.Errorf("compose: release %q: active_quilt is for MQMApprox releases with a, b ≥ 1", r.Name)
	}
	l.releases = append(l.releases, r)
	l.names[r.Name] = true
	return nil
}

// checkCalibration refuses an MQM release whose noise was calibrated for
// another segment than the one it covers: with a fixed initial
// distribution q the segment [s, e] starts from q·P^{s−1}, and a σ
// computed from time 1 can understate the noise (a segment's ε holds only
// for the segment it was computed for). Without a calibration the release
// is taken as calibrated from time 1 over its own length, which is right
// when it starts at 1, or when every chain of the class is stationary (the
// same σ at every start) or stands for every initial distribution (which
// covers every start).
//
// MQMApprox's bound does not depend on the initial distribution, so only
// MQMExact releases are checked.
func checkCalibration(r *Release, d *Dataset) error {
	if r.Kind != MQMExact {
		return nil
	}
	// the advice, built only for an error
	fix := func() string {
		return fmt.Sprintf("recalibrate with 'puff scale --start %d --length %d' and record \"calibration\": {\"start\": %d, \"end\": %d}", r.Start, r.End-r.Start+1, r.Start, r.End)
	}
	if c := r.Calibration; c != nil {
		if c.Start != r.Start || c.end() != r.End {
			return fmt.Errorf("compose: release %q covers [%d, %d] but was calibrated for [%d, %d]: its ε does not hold for its segment; %s", r.Name, r.Start, r.End, c.Start, c.end(), fix())
		}
		return nil
	}
	if r.Start == 1 {
		return nil
	}
	if d.Class == nil {
		return fmt.Errorf("compose: release %q starts at time %d and the dataset has no class to tell whether its start matters; %s", r.Name, r.Start, fix())
	}
	for i, ch := range d.Class.Chains {
		if ch.Init == markov.InitGiven {
			return fmt.Errorf("compose: release %q starts at time %d, and chain %d of the class has a fixed initial distribution, so a σ computed from time 1 can understate the noise; %s", r.Name, r.Start, i, fix())
		}
	}
	return nil
}

// Dependence records Δ for a pair of releases ([SC17] Thm III.6).
func (l *Ledger) Dependence(a, b string, delta float64) error {
	if !(delta >= 0) || guarantee.Rat(delta) == nil {
		return fmt.Errorf("compose: Δ must be a finite number ≥ 0")
	}
	if a > b {
		a, b = b, a
	}
	l.deps[[2]string{a, b}] = delta
	return nil
}

// Guarantee answers for one dataset: every rule's claim, and the smallest ε
// among those that apply. It returns an error wrapping ErrNoRule, with every
// rule's reason, when none applies.
func (l *Ledger) Guarantee(dataset string) (Guarantee, error) {
	d, ok := l.datasets[dataset]
	if !ok {
		return Guarantee{}, fmt.Errorf("compose: unknown dataset %q", dataset)
	}
	var rs []Release
	for _, r := range l.releases {
		if r.Dataset == dataset {
			rs = append(rs, r)
		}
	}
	g := Guarantee{Dataset: dataset}
	if len(rs) == 0 {
		g.Best = Claim{Guarantee: guarantee.None(), Applies: true, Why: "nothing released"}
		g.Best.Covers = "everything"
		return g, nil
	}
	for _, r := range rs {
		if r.Theta != "" && d.Theta != "" && r.Theta != d.Theta {
			c := Claim{Guarantee: guarantee.Guarantee{Rule: "any"}, Why: fmt.Sprintf("release %q was calibrated for Θ %q, the dataset's is %q: its ε says nothing under this Θ", r.Name, r.Theta, d.Theta)}
			g.Claims = []Claim{c}
			return g, fmt.Errorf("compose: %w: %s", ErrNoRule, c.Why)
		}
	}
	g.Claims = []Claim{
		single(rs), sequential(rs), parallel(d, rs), far(rs), divergence(l, rs), dpRule(d, rs),
	}
	for i, c := range g.Claims {
		if c.Applies {
			if math.IsInf(c.Float(), 0) {
				// a bound beyond float64 is no guarantee
				g.Claims[i].Applies, g.Claims[i].Epsilon = false, nil
				g.Claims[i].Why = strings.TrimSpace("the bound is infinite. " + c.Why)
			}
		}
	}
	best := -1
	for i, c := range g.Claims {
		if c.Applies && (best < 0 || c.Epsilon.Cmp(g.Claims[best].Epsilon) < 0) {
			best = i
		}
	}
	if best < 0 && l.leakage {
		// the durable ledger's last rule (Records), only when no other
		// applies: the same totals on a log and on its import
		g.Claims = append(g.Claims, leakageClaim(d, rs))
		if c := g.Claims[len(g.Claims)-1]; c.Applies && !math.IsInf(c.Float(), 0) {
			best = len(g.Claims) - 1
		}
	}
	if best < 0 {
		var why []string
		for _, c := range g.Claims {
			why = append(why, c.Rule+": "+c.Why)
		}
		return g, fmt.Errorf("compose: %w to these %d releases (Pufferfish does not compose in general, [SC17] Thm III.4):\n  %s", ErrNoRule, len(rs), strings.Join(why, "\n  "))
	}
	g.Best = g.Claims[best]
	return g, nil
}

// The rules' names and theorems (shared with the running state, running.go).
const (
	singleRule        = "single"
	singleTheorem     = "the release's own guarantee"
	sequentialRule    = "mqm-sequential"
	sequentialTheorem = "[SC17] Theorem III.7"
	dpRuleName        = "dp"
	dpGroupRule       = "dp-group"
	dpTheorem         = "DP sequential and parallel composition; group privacy under correlation"
)

func isMQM(k Kind) bool { return k.MQM() }

func names(rs []Release) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Name)
	}
	return strings.Join(s, ", ")
}

func single(rs []Release) Claim {
	c := claim(singleRule, singleTheorem)
	if len(rs) != 1 {
		c.Why = fmt.Sprintf("%d releases", len(rs))
		return c
	}
	if rs[0].Kind == DP {
		c.Why = "a DP release is ε-Pufferfish only for independent records (see dp)"
		return c
	}
	c.Applies, c.Epsilon = true, new(big.Rat).Set(rs[0].eps)
	c.Covers = fmt.Sprintf("secrets X_t, t in [%d, %d]", rs[0].Start, rs[0].End)
	return c
}

func sequential(rs []Release) Claim {
	c := claim(sequentialRule, sequentialTheorem)
	sum := zero()
	for _, r := range rs {
		if !isMQM(r.Kind) {
			c.Why = fmt.Sprintf("release %q is %s, not MQM", r.Name, r.Kind)
			return c
		}
		if r.Start != rs[0].Start || r.End != rs[0].End {
			c.Why = "the releases cover different segments"
			return c
		}
		sum = add(sum, r.eps)
	}
	c.Applies, c.Epsilon = true, sum
	c.Covers = fmt.Sprintf("secrets X_t, t in [%d, %d]", rs[0].Start, rs[0].End)
	return c
}

// segment is a group of releases on one identical segment.
type segment struct {
	start, end int
	eps        *big.Rat
	n          int       // releases in the group
	allMQM     bool      // every release of the group is MQM
	quilt      *Quilt    // the active quilt of its first release (far)
	rs         []Release // the releases (only to name them in reasons)
}

// segments groups releases by segment and checks disjointness; a group with
// more than one release needs all of them MQM (summed by III.7).
func segments(rs []Release) ([]segment, string) {
	var out []segment
	index := map[[2]int]int{}
	for _, r := range rs {
		i, ok := index[[2]int{r.Start, r.End}]
		if !ok {
			out = append(out, segment{start: r.Start, end: r.End, eps: zero(), allMQM: true, quilt: r.Active})
			i = len(out) - 1
			index[[2]int{r.Start, r.End}] = i
		}
		out[i].eps = add(out[i].eps, r.eps)
		out[i].n++
		out[i].allMQM = out[i].allMQM && isMQM(r.Kind)
		out[i].rs = append(out[i].rs, r)
	}
	return checkSegments(out)
}

// checkSegments sorts groups by start and checks that groups of several
// releases are all MQM and that distinct segments are disjoint (the
// running state's groups, docs/math.md §4.11, go through it too).
func checkSegments(out []segment) ([]segment, string) {
	sort.Slice(out, func(a, b int) bool { return out[a].start < out[b].start })
	for i, s := range out {
		if s.n > 1 && !s.allMQM {
			for _, r := range s.rs {
				if !isMQM(r.Kind) {
					return nil, fmt.Sprintf("releases %s share segment [%d, %d] and %q is not MQM", names(s.rs), s.start, s.end, r.Name)
				}
			}
			return nil, fmt.Sprintf("%d releases share segment [%d, %d] and not all are MQM", s.n, s.start, s.end)
		}
		if i > 0 && out[i-1].end >= s.start {
			return nil, fmt.Sprintf("segments [%d, %d] and [%d, %d] overlap without being identical", out[i-1].start, out[i-1].end, s.start, s.end)
		}
	}
	return out, ""
}

func covers(segs []segment) string {
	var s []string
	for _, g := range segs {
		s = append(s, fmt.Sprintf("[%d, %d]", g.start, g.end))
	}
	return "secrets X_t for t in " + strings.Join(s, ", ")
}

const (
	parallelRule    = "mqm-parallel"
	parallelTheorem = "[SC17] Theorem III.1 (reconstructed, generalised; with III.7 inside a segment)"
)

func parallel(d *Dataset, rs []Release) Claim {
	c := claim(parallelRule, parallelTheorem)
	for _, r := range rs {
		if r.Kind == DP {
			c.Why = fmt.Sprintf("release %q is DP (see dp)", r.Name)
			return c
		}
	}
	segs, why := segments(rs)
	if segs == nil {
		c.Why = why
		return c
	}
	return parallelSegments(d.Class, segs)
}

// parallelSegments is the parallel rule over checked segment groups (no
// DP release among them).
func parallelSegments(class *markov.Class, segs []segment) Claim {
	c := claim(parallelRule, parallelTheorem)
	if len(segs) < 2 {
		c.Why = "only one segment"
		return c
	}
	if err := checkClass(class); err != nil {
		c.Why = err.Error()
		return c
	}
	m := len(segs)
	inf := newInfluences(class)
	// left[g]: influence term from segments left of g; E[g]: guarantee of
	// segments 0..g for a secret in segment g (no right side).
	left := make([]*big.Rat, m)
	E := make([]*big.Rat, m)
	for g := range m {
		left[g] = zero()
		if g > 0 {
			e, err := inf.backward(segs[g].start-segs[g-1].end, segs[g].start)
			if err != nil {
				c.Why = err.Error()
				return c
			}
			left[g] = capBy(E[g-1], e)
		}
		E[g] = add(segs[g].eps, left[g])
	}
	right := make([]*big.Rat, m)
	F := make([]*big.Rat, m)
	for g := m - 1; g >= 0; g-- {
		right[g] = zero()
		if g < m-1 {
			e, err := inf.forward(segs[g+1].start-segs[g].end, segs[g].end)
			if err != nil {
				c.Why = err.Error()
				return c
			}
			right[g] = capBy(F[g+1], e)
		}
		F[g] = add(segs[g].eps, right[g])
	}
	worst := zero()
	var parts []string
	for g := range m {
		v := add(add(segs[g].eps, left[g]), right[g])
		worst = maxRat(worst, v)
		parts = append(parts, fmt.Sprintf("[%d, %d]: %.6g + %.6g + %.6g", segs[g].start, segs[g].end, guarantee.Up(segs[g].eps), guarantee.Up(left[g]), guarantee.Up(right[g])))
	}
	c.Applies, c.Epsilon, c.Covers = true, worst, covers(segs)
	c.Why = "own ε + left term + right term per segment: " + strings.Join(parts, "; ")
	return c
}

const (
	farRule    = "mqmapprox-far"
	farTheorem = "[SC17] Theorem III.3 (reconstructed)"
)

func far(rs []Release) Claim {
	c := claim(farRule, farTheorem)
	for _, r := range rs {
		if r.Kind != MQMApprox || r.Active == nil {
			c.Why = fmt.Sprintf("release %q is not MQMApprox with a recorded two-sided active quilt", r.Name)
			return c
		}
	}
	segs, why := segments(rs)
	if segs == nil {
		c.Why = why
		return c
	}
	return farSegments(segs)
}

// farSegments is the far rule over checked segment groups of MQMApprox
// releases, each with its active quilt.
func farSegments(segs []segment) Claim {
	c := claim(farRule, farTheorem)
	worst := zero()
	for g, s := range segs {
		if s.n > 1 {
			c.Why = fmt.Sprintf("segment [%d, %d] has %d releases", s.start, s.end, s.n)
			return c
		}
		if g > 0 {
			p := segs[g-1]
			gap := s.start - p.end
			if gap < p.quilt.B || gap < s.quilt.A {
				c.Why = fmt.Sprintf("gap %d between [%d, %d] and [%d, %d] is shorter than the quilts' reach (b = %d, a = %d)", gap, p.start, p.end, s.start, s.end, p.quilt.B, s.quilt.A)
				return c
			}
		}
		worst = maxRat(worst, s.eps)
	}
	c.Applies, c.Epsilon, c.Covers = true, worst, covers(segs)
	return c
}

func divergence(l *Ledger, rs []Release) Claim {
	c := claim("max-divergence", "[SC17] Theorem III.6 (reconstructed)")
	if len(rs) != 2 {
		c.Why = "needs exactly two releases"
		return c
	}
	a, b := rs[0].Name, rs[1].Name
	if a > b {
		a, b = b, a
	}
	delta, ok := l.deps[[2]string{a, b}]
	if !ok {
		c.Why = "no dependence Δ recorded for the pair"
		return c
	}
	for _, r := range rs {
		if r.Kind == DP {
			c.Why = fmt.Sprintf("release %q is DP (see dp)", r.Name)
			return c
		}
	}
	c.Applies = true
	c.Epsilon = add(add(rs[0].eps, rs[1].eps), new(big.Rat).Mul(big.NewRat(2, 1), guarantee.Rat(delta)))
	c.Covers = "the secrets both releases protect"
	c.Why = fmt.Sprintf("ε₁ + ε₂ + 2Δ with Δ = %g", delta)
	return c
}

func dpRule(d *Dataset, rs []Release) Claim {
	c := claim(dpRuleName, dpTheorem)
	// The ε each record is exposed to changes only where a release starts
	// or ends: sweep those events (memory O(releases), any length).
	var ev []event
	sum := zero()
	for _, r := range rs {
		if r.Kind != DP {
			c.Why = fmt.Sprintf("release %q is %s, not DP", r.Name, r.Kind)
			return c
		}
		ev = append(ev, event{r.Start, r.eps}, event{r.End + 1, new(big.Rat).Neg(r.eps)})
		sum = add(sum, new(big.Rat).Mul(r.eps, big.NewRat(int64(r.End-r.Start+1), 1)))
	}
	if independent(d.Class) {
		c.Applies, c.Epsilon = true, mostExposed(ev)
		c.Covers = "every record (Θ has independent records, so DP is Pufferfish)"
		return c
	}
	c.Rule = dpGroupRule
	c.Applies, c.Epsilon = true, sum
	c.Covers = "every record, under any correlation"
	c.Why = "Σ over records of the ε each record was exposed to"
	return c
}

// leakageClaim is the dp-leakage rule (Records' last) on one chain's
// releases: each recorded its σ_i and was calibrated for the dataset's
// class, so together they are (Σ 1/σ_i)-DP per reading and docs/math.md
// §8.6 bounds their loss (leakageOf).
func leakageClaim(d *Dataset, rs []Release) Claim {
	c := claim(LeakageRule, "")
	if d.Class == nil {
		c.Why = "the dataset's class Θ is not known"
		return c
	}
	hash := d.Class.Hash()
	sum := 0.0
	for _, r := range rs {
		if !(r.Sigma > 0) || math.IsInf(r.Sigma, 0) {
			c.Why = fmt.Sprintf("release %q recorded no σ", r.Name)
			return c
		}
		if r.Theta != hash {
			c.Why = fmt.Sprintf("release %q was calibrated for Θ %q, not for the dataset's class %q", r.Name, r.Theta, hash)
			return c
		}
		sum += 1 / r.Sigma
	}
	v, ok := leakageOf(context.Background(), d.Class, sum)
	if !ok {
		c.Why = "the temporal leakage bound is not finite for the class at this σ"
		return c
	}
	c.Applies, c.Guarantee = true, v.Guarantee
	c.Covers = "every record"
	return c
}

// independent reports whether every chain has identical rows (X_{t+1} does
// not depend on X_t) and a known class; nil classes count as correlated.
func independent(cl *markov.Class) bool {
	if cl == nil {
		return false
	}
	for _, ch := range cl.Chains {
		for _, row := range ch.P {
			for y, p := range row {
				if p != ch.P[0][y] {
					return false
				}
			}
		}
	}
	return true
}

// MarshalJSON writes a guarantee with "best": null when no rule applies
// (never a zero ε), and every claim with its reason.
func (g Guarantee) MarshalJSON() ([]byte, error) {
	var best *Claim
	if g.Best.Rule != "" {
		best = &g.Best
	}
	return json.Marshal(struct {
		Dataset string  `json:"dataset"`
		Best    *Claim  `json:"best"`
		Claims  []Claim `json:"claims"`
	}{g.Dataset, best, g.Claims})
}

// WriteText prints the best claim of each guarantee as puff compose does
// (datasets without an applicable rule are left to the error).
func WriteText(w io.Writer, gs []Guarantee) error {
	for _, g := range gs {
		if g.Best.Rule == "" {
			continue
		}
		fmt.Fprintf(w, "%s: ε = %.6g by %s (%s); covers %s\n", g.Dataset, g.Best.Float(), g.Best.Rule, g.Best.Theorem, g.Best.Covers)
		if g.Best.Why != "" {
			fmt.Fprintf(w, "  %s\n", g.Best.Why)
		}
	}
	return nil
}
