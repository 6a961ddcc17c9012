package hmm

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/pufferfish-privacy/pufferfish/ratexpr"
)

// Arithmetic chooses how a loss or verdict is computed.
type Arithmetic string

const (
	// ExactArithmetic uses rationals only (big.Int numerators).
	ExactArithmetic Arithmetic = "exact"
	// FloatArithmetic answers from the float64 enclosure, an undecided
	// verdict included.
	FloatArithmetic Arithmetic = "float"
	// AutoArithmetic tries the float enclosure first and settles underflow
	// or an undecided verdict exactly.
	AutoArithmetic Arithmetic = "auto"
)

// ParseArithmetic reads exact, float or auto.
func ParseArithmetic(s string) (Arithmetic, error) {
	switch a := Arithmetic(s); a {
	case ExactArithmetic, FloatArithmetic, AutoArithmetic:
		return a, nil
	}
	return "", fmt.Errorf("arithmetic %q: want exact, float or auto", s)
}

// Evaluation is the answer of Evaluate: the verdict (empty for a loss) and
// either the exact result or the float enclosure.
type Evaluation struct {
	Verdict Verdict
	Exact   *Result      // exact arithmetic was used
	Float   *FloatResult // the float enclosure answered
	// Streamed: a DP mechanism's pairs were streamed (DPMechanism.Loss),
	// no HMM built.
	Streamed bool
}

// Evaluate computes the loss (eps nil) or the verdict for eps with the
// chosen arithmetic. It is the one strategy behind verify loss, check and
// sweep.
func Evaluate(m *Model, secrets []Secret, n int, arith Arithmetic, eps *Epsilon) (Evaluation, error) {
	return EvaluateWith(unlimited, m, secrets, n, arith, eps)
}

// EvaluateWith is Evaluate under o: each arithmetic's search is refused
// up front over o's limits and stops when o's context ends (an error
// wrapping its cause) or its work passes the limit (a *LimitError).
func EvaluateWith(o Options, m *Model, secrets []Secret, n int, arith Arithmetic, eps *Epsilon) (Evaluation, error) {
	if arith != ExactArithmetic {
		var ev Evaluation
		var fr FloatResult
		var err error
		if eps == nil {
			fr, err = lossFloatWith(o, m, secrets, n)
		} else {
			ev.Verdict, fr, err = checkFloat(o, m, secrets, n, *eps)
		}
		switch {
		case err == nil && (ev.Verdict != Undecided || arith == FloatArithmetic):
			ev.Float = &fr
			return ev, nil
		case err == nil || errors.Is(err, errUnderflow) && arith == AutoArithmetic:
			// undecided in float, or underflow: settle it exactly
		default:
			return Evaluation{}, err
		}
	}
	if eps == nil {
		r, err := lossWith(o, m, secrets, n)
		return Evaluation{Exact: &r}, err
	}
	v, r, err := checkWith(o, m, secrets, n, *eps)
	return Evaluation{Verdict: v, Exact: &r}, err
}

// maxSweepPoints is the most grid points one sweep checks.
const maxSweepPoints = 10001

// Axis is one parameter of a sweep and its exact grid values.
type Axis struct {
	Name   string
	Values []*big.Rat
}

// ParseAxis reads name=LO:HI:STEP into the grid LO, LO+STEP, …, ≤ HI
// (exact rationals). A grid of more than maxSweepPoints points is refused.
func ParseAxis(spec string, parse func(string) (*big.Rat, error)) (Axis, error) {
	name, rng, ok := strings.Cut(spec, "=")
	parts := strings.Split(rng, ":")
	if !ok || len(parts) != 3 || strings.TrimSpace(name) == "" {
		return Axis{}, fmt.Errorf("grid %q: want name=LO:HI:STEP", spec)
	}
	var r [3]*big.Rat
	for i, p := range parts {
		v, err := parse(p)
		if err != nil {
			return Axis{}, fmt.Errorf("grid %q: %w", spec, err)
		}
		r[i] = v
	}
	if r[2].Sign() <= 0 || r[1].Cmp(r[0]) < 0 {
		return Axis{}, fmt.Errorf("grid %q: need STEP > 0 and HI ≥ LO", spec)
	}
	// ⌊(HI − LO)/STEP⌋ + 1 points, exactly
	span := new(big.Rat).Quo(new(big.Rat).Sub(r[1], r[0]), r[2])
	count := new(big.Int).Add(new(big.Int).Quo(span.Num(), span.Denom()), big.NewInt(1))
	if count.Cmp(big.NewInt(maxSweepPoints)) > 0 {
		return Axis{}, fmt.Errorf("grid %q has %s points, more than %d: use a larger step", spec, count, maxSweepPoints)
	}
	ax := Axis{Name: strings.TrimSpace(name)}
	for v := new(big.Rat).Set(r[0]); v.Cmp(r[1]) <= 0; v = new(big.Rat).Add(v, r[2]) {
		ax.Values = append(ax.Values, v)
	}
	return ax, nil
}

// ParseGrids reads puff verify sweep's --grid flags (ParseAxis, values
// read with package ratexpr); an error names the flag.
func ParseGrids(grids []string) ([]Axis, error) {
	var axes []Axis
	for _, g := range grids {
		ax, err := ParseAxis(g, func(v string) (*big.Rat, error) {
			r, err := ratexpr.Eval(v, nil)
			if err != nil {
				return nil, fmt.Errorf("--grid: %v", err)
			}
			return r, nil
		})
		if err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
		axes = append(axes, ax)
	}
	return axes, nil
}

// SweepPoint is one grid point of a sweep and its evaluation.
type SweepPoint struct {
	Params map[string]*big.Rat
	Model  *Model
	Evaluation
}

// Sweep checks ε-Pufferfish privacy of the model file at every point of
// the grid (one or two axes; at most maxSweepPoints points), with the same
// arithmetic strategy as Evaluate, under o (EvaluateWith): o's work limit
// is the whole sweep's, checked up front on the sum of every point's
// estimate.
func Sweep(o Options, file *File, name string, axes []Axis, n int, arith Arithmetic, eps Epsilon) ([]SweepPoint, error) {
	switch {
	case len(axes) == 0 || len(axes) > 2:
		return nil, fmt.Errorf("sweep: give one or two parameters")
	case len(axes) == 2 && len(axes[0].Values)*len(axes[1].Values) > maxSweepPoints:
		return nil, fmt.Errorf("sweep: the grid has %d × %d points, more than %d: use larger steps", len(axes[0].Values), len(axes[1].Values), maxSweepPoints)
	}
	second := []*big.Rat{nil}
	if len(axes) == 2 {
		second = axes[1].Values
	}
	var out []SweepPoint
	var secrets [][]Secret
	var total Cost
	var first costModel
	for _, a := range axes[0].Values {
		for _, b := range second {
			set := map[string]*big.Rat{axes[0].Name: a}
			if b != nil {
				set[axes[1].Name] = b
			}
			m, secs, err := file.Build(name, set)
			if err == nil {
				err = checkInputs(m, secs, n)
			}
			if err != nil {
				return nil, fmt.Errorf("at %s: %w", pointString(set), err)
			}
			out, secrets = append(out, SweepPoint{Params: set, Model: m}), append(secrets, secs)
			c := costModelOf(m, secs, arith)
			if len(out) == 1 {
				first = c
			}
			e := c.estimate(n)
			total.Work, total.Memory = total.Work+e.Work, max(total.Memory, e.Memory)
		}
	}
	if err := o.refuse(total, first, n); err != nil {
		return nil, fmt.Errorf("sweep of %d points: %w", len(out), err)
	}
	for i := range out {
		ev, err := EvaluateWith(o, out[i].Model, secrets[i], n, arith, &eps)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", pointString(out[i].Params), err)
		}
		out[i].Evaluation = ev
	}
	return out, nil
}

func pointString(set map[string]*big.Rat) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(set)) {
		parts = append(parts, k+"="+set[k].RatString())
	}
	return strings.Join(parts, ", ")
}

// SweepResult is a sweep as puff verify sweep prints it (JSON field names
// are a contract).
type SweepResult struct {
	Epsilon string     `json:"epsilon"`
	Length  int        `json:"length"`
	Rows    []SweepRow `json:"rows"`
	axes    []string
}

// SweepRow is one grid point: its parameters (exact, as fractions), the
// verdict and the loss (null when infinite).
type SweepRow struct {
	Params  map[string]string `json:"parameters"`
	Verdict Verdict           `json:"verdict"`
	Loss    *float64          `json:"loss"`
	Ratio   string            `json:"ratio"`
}

// SweepResultOf describes the points of a sweep over axes.
func SweepResultOf(points []SweepPoint, axes []Axis, n int, eps Epsilon) SweepResult {
	out := SweepResult{Epsilon: eps.Text, Length: n}
	for _, a := range axes {
		out.axes = append(out.axes, a.Name)
	}
	for _, pt := range points {
		params := map[string]string{}
		for k, v := range pt.Params {
			params[k] = v.RatString()
		}
		lr := NewLossReport(pt.Model.Obs, "", n, pt.Evaluation)
		out.Rows = append(out.Rows, SweepRow{params, pt.Verdict, lr.Loss, lr.Ratio})
	}
	return out
}

// Coordinates returns, per row, the first parameter and either the second
// parameter or (one axis) the loss (+Inf when infinite): what a plot of the
// sweep draws.
func (s SweepResult) Coordinates() (xs, ys []float64) {
	for _, r := range s.Rows {
		x, _ := new(big.Rat).SetString(r.Params[s.axes[0]])
		xf, _ := x.Float64()
		y := math.Inf(1)
		if len(s.axes) == 2 {
			v, _ := new(big.Rat).SetString(r.Params[s.axes[1]])
			y, _ = v.Float64()
		} else if r.Loss != nil {
			y = *r.Loss
		}
		xs, ys = append(xs, xf), append(ys, y)
	}
	return xs, ys
}

// WriteText prints the sweep as a table, one row per grid point.
func (s SweepResult) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "%s\tloss\tverdict (%s)\n", strings.Join(s.axes, "\t"), s.Epsilon)
	for _, r := range s.Rows {
		var vals []string
		for _, a := range s.axes {
			vals = append(vals, r.Params[a])
		}
		loss := math.Inf(1)
		if r.Loss != nil {
			loss = *r.Loss
		}
		fmt.Fprintf(w, "%s\t%.6g\t%s\n", strings.Join(vals, "\t"), loss, r.Verdict)
	}
	return w.Flush()
}

// ParseSet reads name=value parameter settings (exact numbers).
func ParseSet(kvs []string) (map[string]*big.Rat, error) {
	set := map[string]*big.Rat{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want name=value", kv)
		}
		r, err := ratexpr.Eval(v, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		set[strings.TrimSpace(k)] = r
	}
	return set, nil
}
