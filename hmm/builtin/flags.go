package builtin

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// Register registers the spec's flags (puff verify loss and check):
// --builtin and its parameters, --set for a model file's.
func (s *Spec) Register(f *pflag.FlagSet) {
	p := &s.Params
	f.StringVar(&s.Name, "builtin", "", "built-in mechanism: noisy-max | geometric | rr | example71 | above-threshold | sparse-vector (instead of MODEL.json)")
	f.StringVar(&s.AlphaThreshold, "alpha-threshold", "1/2", "above-threshold: noise parameter of the threshold (--alpha is the answers')")
	f.IntVar(&p.Threshold, "threshold", 1, "above-threshold, sparse-vector: the threshold, in 0..RANGE")
	f.IntVar(&p.Cutoff, "cutoff", 2, "sparse-vector: halt after this many ⊤")
	f.IntVar(&p.Queries, "queries", 3, "noisy-max: number of queries")
	f.StringVar(&p.Returns, "returns", "index", "noisy-max: index (correct) or value ([LWZ]'s wrong variant)")
	f.StringVar(&p.Neighbours, "neighbours", "one", "DP neighbours: one (one answer differs by one) or any (one answer differs arbitrarily)")
	f.StringVar(&s.Alpha, "alpha", "1/2", "noisy-max, geometric: noise parameter α (the mechanism is ln(1/α)-DP per answer)")
	f.IntVar(&p.Range, "range", 2, "noisy-max, geometric: answers and noisy values lie in 0..RANGE")
	f.StringVar(&s.Keep, "keep", "3/4", "rr: probability of reporting the true bit")
	f.StringVar(&s.P1, "p1", "1/5", "example71: probability of disease A")
	f.StringVar(&s.P2, "p2", "2/5", "example71: probability that both or neither have disease B (both)")
	f.StringSliceVar(&s.Set, "set", nil, "model file: parameter values, e.g. --set p1=0.2,p2=2/5")
}

// Load builds what the flags select — the model file args[0] or the
// built-in (exactly one of them) — and settles the sequence length: n,
// or the built-in's default when n is 0 (a model file needs n ≥ 1). A
// parameter's error names its flag.
func (s Spec) Load(args []string, n int) (b Model, _ int, err error) {
	switch {
	case (len(args) == 1) == (s.Name != ""):
		return b, 0, fmt.Errorf("give a MODEL.json file or --builtin, not both or neither")
	case len(args) == 1:
		b, err = s.LoadFile(args[0])
	default:
		b, err = s.LoadBuiltin()
	}
	if pe := (*ParamError)(nil); errors.As(err, &pe) {
		return b, 0, fmt.Errorf("--%w", err)
	} else if err != nil {
		return b, 0, err
	}
	if n == 0 {
		n = b.DefaultLength
	}
	if n < 1 {
		return b, 0, fmt.Errorf("--length N is required for a model file (observation sequences of lengths 1..N)")
	}
	return b, n, nil
}
