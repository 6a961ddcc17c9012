package compose

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"

	"github.com/pufferfish-privacy/pufferfish/guarantee"
	"github.com/pufferfish-privacy/pufferfish/internal/checks"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/record"
)

// The running composition state (docs/math.md §4.11).
//
// Records composes a dataset's release records from scratch. Running keeps,
// for the records composed so far, exactly what Records reads of them —
// per chain (series) the releases grouped by identical segment with their
// exact ε sums and the facts each rule tests (all MQM, any DP, ...), and
// per dataset the streams' sum and the leakage rule's Σ 1/σ — so that a
// new record updates only the chains it touches and their rules are
// re-evaluated from their groups, never from the records. The verdict is
// then the worst chain's best claim plus the streams, as in Records.
// Every rule of Records is a function of these summaries (§4.11), so the
// verdict is the same exact rational, rule and theorem; the ledger's tests
// compare the two after every spend of random histories.

// ErrFull is returned when the running state cannot stand for the records
// (a record Records would refuse, a segment [0, 0] meaning "the whole
// chain", or no rule applying, whose reasons only the records give): the
// caller composes the records with Records instead.
var ErrFull = errors.New("compose: recompose from the records")

// Running is the dataset-wide part of the running state; the chains are
// kept apart (Chain), so a store reads and writes only those a record
// touches.
type Running struct {
	Records     int      `json:"records"`              // records composed
	Streams     int      `json:"streams,omitempty"`    // streams' charges among them
	StreamEps   *big.Rat `json:"stream_eps,omitempty"` // their ε, summed exactly
	OtherStream bool     `json:"other_stream,omitempty"`
	// SigmaOff: some record takes no part in the leakage rule (no σ);
	// otherwise SigmaSum is Σ 1/σ_i summed in record order, as Records
	// sums it.
	SigmaOff bool     `json:"sigma_off,omitempty"`
	SigmaSum floatSum `json:"sigma_sum"`
	Chains   int      `json:"chains"`            // chains seen: the order of the next
	NoRule   int      `json:"no_rule,omitempty"` // chains on which no rule applies
	// Full: a record the state cannot stand for was composed; Records
	// must compose this dataset from then on.
	Full bool `json:"full,omitempty"`
}

// floatSum is a float64 kept exactly in JSON (shortest decimal, ±Inf).
type floatSum float64

func (f floatSum) MarshalText() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(f), 'g', -1, 64)), nil
}

func (f *floatSum) UnmarshalText(b []byte) error {
	v, err := strconv.ParseFloat(string(b), 64)
	*f = floatSum(v)
	return err
}

// Chain is one chain's (series') running state.
type Chain struct {
	Name   string `json:"name"`
	Order  int    `json:"order"` // its place among the dataset's chains, by first appearance
	N      int    `json:"n"`     // ledger releases (segments) on it
	First  Kind   `json:"first"` // the first one's mechanism (single)
	AllMQM bool   `json:"all_mqm"`
	AnyDP  bool   `json:"any_dp"`
	AllDP  bool   `json:"all_dp"`
	AllFar bool   `json:"all_far"` // every one MQMApprox with an active quilt
	// Groups are the releases grouped by identical segment, sorted by
	// start, then end.
	Groups []Group `json:"groups"`
	Best   Best    `json:"best"`
}

// Group is the releases of a chain on one segment.
type Group struct {
	Start  int      `json:"start"`
	End    int      `json:"end"`
	Eps    *big.Rat `json:"eps"` // Σ ε, exact
	N      int      `json:"n"`
	AllMQM bool     `json:"all_mqm"`
	Quilt  *Quilt   `json:"quilt,omitempty"` // the first release's active quilt
}

// Best is a chain's best claim (Applies false: no rule applies to it).
type Best struct {
	Order   int
	Applies bool
	guarantee.Guarantee
	Chain string // not stored: the chain's own name
}

// bestJSON is how a chain's state stores its best claim (ledgers written
// before package guarantee read the same).
type bestJSON struct {
	Order   int      `json:"order"`
	Applies bool     `json:"applies"`
	Bound   *big.Rat `json:"bound,omitempty"`
	Rule    string   `json:"rule,omitempty"`
	Theorem string   `json:"theorem,omitempty"`
}

// MarshalJSON writes {"order", "applies", "bound" (exact, "p/q"), "rule",
// "theorem"}.
func (b Best) MarshalJSON() ([]byte, error) {
	return json.Marshal(bestJSON{b.Order, b.Applies, b.Epsilon, b.Rule, b.Theorem})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (b *Best) UnmarshalJSON(data []byte) error {
	var j bestJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*b = Best{Order: j.Order, Applies: j.Applies, Guarantee: guarantee.Guarantee{Epsilon: j.Bound, Rule: j.Rule, Theorem: j.Theorem}}
	return nil
}

// Touches lists the chains a record's segments are on (none for a
// stream), each once, in order.
func Touches(rec *record.Release) []string {
	if rec.Stream {
		return nil
	}
	var out []string
	for _, sg := range rec.Segments {
		if c := SeriesChain(sg.Series); !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Add composes one more record into the state. chains must hold the
// current state of every existing chain the record touches (Touches); the
// record's new chains are added to it, and the best claim of every touched
// chain is re-evaluated. On ErrFull nothing was changed.
func (r *Running) Add(class *markov.Class, rec *record.Release, chains map[string]*Chain) error {
	if r.Full || class == nil {
		return ErrFull
	}
	hash := class.Hash()
	if rec.Class != hash {
		return ErrFull
	}
	var eps *big.Rat
	if rec.Stream {
		if eps = rec.Charge(); eps == nil || eps.Sign() <= 0 {
			return ErrFull
		}
	} else {
		// what Ledger.Record checks of each entry (Entries), so that
		// the state holds only records Records accepts
		if checks.EpsilonSpent(rec.Epsilon) != nil {
			return ErrFull
		}
		if _, err := mechanism.Parse(string(rec.Mechanism)); err != nil {
			return ErrFull
		}
		eps = rec.Charge()
		seen := map[[3]string]bool{}
		for _, sg := range rec.Segments {
			if sg.First < 1 || sg.First > sg.Last {
				return ErrFull // [0, 0] is the whole chain: its length moves
			}
			if rec.Mechanism == MQMApprox && sg.Quilt != nil && (sg.Quilt.A < 1 || sg.Quilt.B < 1) {
				return ErrFull
			}
			k := [3]string{SeriesChain(sg.Series), strconv.Itoa(sg.First), strconv.Itoa(sg.Last)}
			if seen[k] {
				return ErrFull // two entries of one name
			}
			seen[k] = true
		}
	}
	r.Records++
	if leakageReady(rec, hash) {
		r.SigmaSum += floatSum(1 / rec.Sigma)
	} else {
		r.SigmaOff = true
	}
	if rec.Stream {
		r.Streams++
		if r.StreamEps == nil {
			r.StreamEps = zero()
		}
		r.StreamEps = add(r.StreamEps, eps)
		if !rec.Mechanism.MQM() {
			r.OtherStream = true
		}
		return nil
	}
	for _, sg := range rec.Segments {
		name := SeriesChain(sg.Series)
		c := chains[name]
		if c == nil {
			c = &Chain{Name: name, Order: r.Chains, First: rec.Mechanism, AllMQM: true, AllDP: true, AllFar: true, Best: Best{Applies: true}}
			r.Chains++
			chains[name] = c
		}
		var q *Quilt
		if rec.Mechanism == MQMApprox && sg.Quilt != nil {
			qq := *sg.Quilt
			q = &qq
		}
		c.add(rec.Mechanism, eps, sg.First, sg.Last, q)
	}
	for _, name := range Touches(rec) {
		c := chains[name]
		if !c.Best.Applies {
			r.NoRule--
		}
		c.Best = c.best(class)
		if !c.Best.Applies {
			r.NoRule++
		}
	}
	return nil
}

// add records one release on the chain.
func (c *Chain) add(kind Kind, eps *big.Rat, start, end int, q *Quilt) {
	c.N++
	c.AllMQM = c.AllMQM && isMQM(kind)
	c.AnyDP = c.AnyDP || kind == DP
	c.AllDP = c.AllDP && kind == DP
	c.AllFar = c.AllFar && kind == MQMApprox && q != nil
	i := sort.Search(len(c.Groups), func(i int) bool {
		g := c.Groups[i]
		return g.Start > start || g.Start == start && g.End >= end
	})
	if i == len(c.Groups) || c.Groups[i].Start != start || c.Groups[i].End != end {
		c.Groups = slices.Insert(c.Groups, i, Group{Start: start, End: end, Eps: zero(), AllMQM: true, Quilt: q})
	}
	g := &c.Groups[i]
	g.Eps = add(g.Eps, eps) // a new rational: bounds may share the old one
	g.N++
	g.AllMQM = g.AllMQM && isMQM(kind)
}

// segments are the chain's groups as the rules take them.
func (c *Chain) segments() []segment {
	out := make([]segment, len(c.Groups))
	for i, g := range c.Groups {
		out[i] = segment{start: g.Start, end: g.End, eps: g.Eps, n: g.N, allMQM: g.AllMQM, quilt: g.Quilt}
	}
	return out
}

// best is Ledger.Guarantee's best claim for the chain's releases,
// evaluated from the groups: the same claims in the same order (§4.11).
func (c *Chain) best(class *markov.Class) Best {
	claims := make([]Claim, 0, 6)
	single := claim(singleRule, singleTheorem)
	if c.N == 1 && c.First != DP {
		single.Applies, single.Epsilon = true, new(big.Rat).Set(c.Groups[0].Eps)
	}
	seq := claim(sequentialRule, sequentialTheorem)
	if c.AllMQM && len(c.Groups) == 1 {
		seq.Applies, seq.Epsilon = true, new(big.Rat).Set(c.Groups[0].Eps)
	}
	par := claim(parallelRule, parallelTheorem)
	if !c.AnyDP {
		if segs, _ := checkSegments(c.segments()); segs != nil {
			par = parallelSegments(class, segs)
		}
	}
	fa := claim(farRule, farTheorem)
	if c.AllFar {
		if segs, _ := checkSegments(c.segments()); segs != nil {
			fa = farSegments(segs)
		}
	}
	// max-divergence needs a recorded Δ: release records never have one
	div := claim("max-divergence", "")
	dp := claim(dpRuleName, dpTheorem)
	if c.AllDP {
		dp = dpGroups(class, c.Groups)
	}
	claims = append(claims, single, seq, par, fa, div, dp)
	best := -1
	for i, cl := range claims {
		if !cl.Applies || isInfUp(cl.Epsilon) {
			continue
		}
		if best < 0 || cl.Epsilon.Cmp(claims[best].Epsilon) < 0 {
			best = i
		}
	}
	if best < 0 {
		return Best{Order: c.Order, Chain: c.Name}
	}
	b := claims[best]
	return Best{Order: c.Order, Applies: true, Guarantee: b.Guarantee, Chain: c.Name}
}

// isInfUp is Guarantee's test of a bound beyond float64 (no guarantee).
func isInfUp(r *big.Rat) bool { return math.IsInf(guarantee.Up(r), 0) }

// dpGroups is dpRule over groups: the ε a record is exposed to is the sum
// over the groups covering it, and Σ_j ε_j is Σ over groups of ε × length.
func dpGroups(class *markov.Class, gs []Group) Claim {
	c := claim(dpRuleName, dpTheorem)
	if independent(class) {
		ev := make([]event, 0, 2*len(gs))
		for _, g := range gs {
			ev = append(ev, event{g.Start, g.Eps}, event{g.End + 1, new(big.Rat).Neg(g.Eps)})
		}
		c.Applies, c.Epsilon = true, mostExposed(ev)
		return c
	}
	sum := zero()
	for _, g := range gs {
		sum = add(sum, new(big.Rat).Mul(g.Eps, big.NewRat(int64(g.End-g.Start+1), 1)))
	}
	c.Rule = dpGroupRule
	c.Applies, c.Epsilon = true, sum
	return c
}

// Verdict is Records' answer from the running state: bests holds the best
// claim of every chain of the dataset (any order). It returns ErrFull when
// the state cannot give the answer (Full, or no rule applies and the
// leakage rule does not either: only the records name the reasons).
func (r *Running) Verdict(class *markov.Class, bests []Best) (Verdict, error) {
	return r.VerdictContext(context.Background(), class, bests)
}

// VerdictContext is Verdict whose leakage rule stops when ctx ends, with
// ctx's error.
func (r *Running) VerdictContext(ctx context.Context, class *markov.Class, bests []Best) (Verdict, error) {
	if r.Full || class == nil {
		return Verdict{}, ErrFull
	}
	if r.Records == 0 {
		return Verdict{Guarantee: guarantee.None()}, nil
	}
	if r.OtherStream && r.Records > 1 || r.NoRule > 0 {
		if !r.SigmaOff {
			if lk, ok := leakageOf(ctx, class, float64(r.SigmaSum)); ok {
				return lk, nil
			}
			if err := ctx.Err(); err != nil {
				return Verdict{}, err
			}
		}
		return Verdict{}, ErrFull
	}
	if len(bests) != r.Chains {
		return Verdict{}, ErrFull // a state that does not hold together: the records answer
	}
	bests = slices.Clone(bests)
	slices.SortFunc(bests, func(a, b Best) int { return a.Order - b.Order })
	v := Verdict{Guarantee: guarantee.None()}
	for _, b := range bests {
		if !b.Applies {
			return Verdict{}, ErrFull
		}
		// ≥: the last chain attaining the maximum names the rule, as in Records
		if b.Epsilon.Cmp(v.Epsilon) >= 0 {
			v = Verdict{Guarantee: b.Guarantee, Chain: b.Chain}
		}
	}
	eps := r.StreamEps
	if eps == nil {
		eps = zero()
	}
	return withStreams(v, r.Streams, eps), nil
}
