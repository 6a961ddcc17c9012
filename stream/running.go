package stream

import (
	"errors"
	"math/bits"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Running totals (puff stream init --running): after every closed window
// the count histogram since the stream's first window, released with the
// binary-tree mechanism grown by doubling (docs/math.md §4.12, [CSS11]):
// window t (counted over the windows that held readings) of epoch
// K = ⌊log₂ t⌋ draws one node, the sum of the last 2^p windows
// (p the trailing zero bits of u = t − 2^K + 1), with per-bin scale
// σ·2(K+1); each reading lies in at most K+1 nodes, so the stream's one
// charge of ε covers every node, and the totals are sums of nodes.

// Tree is a running stream's tree (part of State, never printed: Acc holds
// true counts).
type Tree struct {
	// Windows is t, the windows with readings closed so far.
	Windows int64 `json:"windows"`
	// Start is the first window's start: every total runs from it.
	Start string `json:"start,omitempty"`
	// Observations are the readings in the closed windows (public: the
	// pattern).
	Observations int `json:"observations"`
	// Incomplete says a closed window's files could hold readings without
	// a value (Open.Complete false): the totals' estimate then sums to at
	// most Observations (docs/math.md §4.14).
	Incomplete bool `json:"incomplete,omitempty"`
	// Acc[ℓ] is the true node of level ℓ of the current epoch while bit ℓ
	// of u is set (nil otherwise): what the next higher node adds up.
	Acc []*Open `json:"acc"`
	// Noisy[ℓ] is the node drawn for bit ℓ of u (nil when the bit is 0),
	// NoisyVar[ℓ] its per-bin noise variance: drawn once, reused by every
	// later total of the epoch.
	Noisy    [][]float64 `json:"noisy"`
	NoisyVar []float64   `json:"noisy_var"`
	// Past is the sum of the finished epochs' roots (PastNodes of them),
	// PastVar its per-bin noise variance.
	Past      []float64 `json:"past"`
	PastVar   float64   `json:"past_var"`
	PastNodes int       `json:"past_nodes"`
}

// Running is what a running stream prints for a closed window beside the
// node it drew (the window's report): the total since Start.
type Running struct {
	// Windows is t; Start – the window's end is the span of the total.
	Windows      int64  `json:"windows"`
	Start        string `json:"start"`
	Observations int    `json:"observations"`
	// Total is the noisy cumulative count histogram: the sum of Nodes
	// nodes drawn so far (post-processing).
	Total []release.Bin `json:"total"`
	Nodes int           `json:"nodes"`
	// Variance is the per-bin variance of Total's noise, Σ 2·b² over the
	// nodes summed (b each node's noise scale); Levels is h = K+1, the
	// levels of the window's epoch (the node's Lipschitz constant is 2h).
	Variance float64 `json:"variance"`
	Levels   int     `json:"levels"`
	// Node is the span of the node drawn at this window: windows
	// From..Windows (counted as Windows is).
	From int64 `json:"from"`
}

// ErrRunningQuery refuses --running with a query other than counts.
var ErrRunningQuery = errors.New("--running releases cumulative counts: use --query counts")

// SetRunning makes s a running stream (docs/math.md §4.12): counts only.
func (s *Settings) SetRunning() error {
	if s.Query != "counts" {
		return ErrRunningQuery
	}
	s.Running = true
	s.Scale.Guarantee += "; running totals by the binary-tree mechanism, each reading in at most ⌊log₂ t⌋+1 nodes of scale σ·2(⌊log₂ t⌋+1) (docs/math.md §4.12)"
	return nil
}

// close draws the node of the next closed window o (calendar window k)
// and returns the window as printed: the node's report and the total.
func (tr *Tree) close(o *Open, states []string, levels *reading.Levels, step float64, base *release.Report, class *markov.Class, opt release.Options, k int64, width time.Duration, loc *time.Location) (Window, error) {
	t := tr.Windows + 1
	K := bits.Len64(uint64(t)) - 1
	u := t - 1<<K + 1
	if u == 1 { // a new epoch: K+1 levels
		tr.Acc, tr.Noisy, tr.NoisyVar = make([]*Open, K+1), make([][]float64, K+1), make([]float64, K+1)
	}
	p := bits.TrailingZeros64(uint64(u))
	node := o.clone()
	for l := range p {
		node.merge(tr.Acc[l])
		tr.Acc[l], tr.Noisy[l], tr.NoisyVar[l] = nil, nil, 0
	}
	r, err := release.ReleaseNode(base, node.summary(states, levels, step), class, opt, K+1)
	if err != nil {
		return Window{}, err
	}
	start, end := release.WindowBounds(k, width, loc)
	if t == 1 {
		tr.Start = start
	}
	drawn := make([]float64, len(r.Histogram))
	for i, b := range r.Histogram {
		drawn[i] = b.Value
	}
	tr.Acc[p], tr.Noisy[p], tr.NoisyVar[p] = node, drawn, 2*r.NoiseScale*r.NoiseScale
	tr.Windows = t
	for _, n := range o.Series {
		tr.Observations += n.N
	}
	tr.Incomplete = tr.Incomplete || !o.Complete
	run := &Running{Windows: t, Start: tr.Start, Observations: tr.Observations, Levels: K + 1, From: t - 1<<p + 1,
		Nodes: tr.PastNodes, Variance: tr.PastVar}
	total := make([]float64, len(drawn))
	if tr.Past != nil {
		copy(total, tr.Past)
	}
	for l, v := range tr.Noisy {
		if v == nil {
			continue
		}
		for i := range total {
			total[i] += v[i]
		}
		run.Nodes++
		run.Variance += tr.NoisyVar[l]
	}
	// the total's own estimate (the node's report has the node's): the
	// noisy total projected with the readings so far, post-processing
	// (docs/math.md §4.14)
	est, err := release.ConsistentCounts(total, float64(tr.Observations), !tr.Incomplete)
	if err != nil {
		return Window{}, err
	}
	for i, b := range r.Histogram {
		b.Value, b.Estimate = total[i], &est[i]
		run.Total = append(run.Total, b)
	}
	if u == 1<<K { // the epoch's root: it joins the past
		tr.Past, tr.PastVar, tr.PastNodes = total, run.Variance, run.Nodes
		tr.Acc, tr.Noisy, tr.NoisyVar = nil, nil, nil
	}
	return Window{Window: release.Window{Start: start, End: end, Report: r}, Running: run}, nil
}

// merge adds o's readings to n.
func (n *Open) merge(o *Open) {
	if o == nil {
		return
	}
	for i, c := range o.Counts {
		n.Counts[i] += c
	}
	n.Complete = n.Complete && o.Complete
	for name, p := range o.Series {
		q := n.Series[name]
		if q == nil {
			n.Series[name] = &Part{N: p.N, Times: p.Times}
			continue
		}
		q.N += p.N
		q.Times[0], q.Times[1] = min(q.Times[0], p.Times[0]), max(q.Times[1], p.Times[1])
	}
}

func (n *Open) clone() *Open {
	c := &Open{Counts: append([]float64(nil), n.Counts...), Series: make(map[string]*Part, len(n.Series)), Complete: n.Complete}
	for name, p := range n.Series {
		q := *p
		c.Series[name] = &q
	}
	return c
}
