package markov

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
)

// Class is a finite set Θ of chains over the same states. A class built
// from a binary interval covers exactly its grid points; Interval records
// the grid so reports can say so.
type Class struct {
	States   []string
	Chains   []*Chain
	Interval *Interval
}

// Interval is the binary class of [SWC17] §5.2: every chain with
// p0 = P(0→0) and p1 = P(1→1) on the grid lo, lo+step, …, hi (both
// coordinates), each with every initial distribution.
type Interval struct {
	Lo, Hi, Step float64
	Points       int // grid points per coordinate
}

// Coverage describes in words which chains the class covers.
func (c *Class) Coverage() string {
	if c.Interval != nil {
		iv := c.Interval
		return fmt.Sprintf("exactly the %d grid points (p0, p1) ∈ {%g, %g, …, %g}² (step %g); chains between grid points are not covered",
			len(c.Chains), iv.Lo, iv.Lo+iv.Step, iv.Hi, iv.Step)
	}
	return fmt.Sprintf("exactly the %d listed chain(s)", len(c.Chains))
}

// NewClass checks that every chain uses the given states.
func NewClass(states []string, chains ...*Chain) (*Class, error) {
	if len(chains) == 0 {
		return nil, errors.New("class has no chains")
	}
	for i, ch := range chains {
		if len(ch.States) != len(states) {
			return nil, fmt.Errorf("chain %d has %d states, class has %d", i, len(ch.States), len(states))
		}
		for j := range states {
			if ch.States[j] != states[j] {
				return nil, fmt.Errorf("chain %d: state %d is %q, class has %q", i, j, ch.States[j], states[j])
			}
		}
	}
	return &Class{States: append([]string(nil), states...), Chains: chains}, nil
}

// MaxIntervalChains caps the grid of a binary interval class (every chain
// is searched): 250,000 chains is a step of 0.002 over [0, 1].
const MaxIntervalChains = 250_000

// BinaryInterval builds the interval class with the given initial kind
// ([SWC17] uses InitAny). hi − lo must be a whole number of steps.
func BinaryInterval(lo, hi, step float64, kind InitKind) (*Class, error) {
	if !(step > 0) || math.IsInf(step, 0) {
		return nil, fmt.Errorf("binary_interval.step is %v, want > 0", step)
	}
	if !(lo >= 0 && hi <= 1 && lo <= hi) {
		return nil, fmt.Errorf("binary_interval: need 0 ≤ lo ≤ hi ≤ 1, got lo=%v hi=%v", lo, hi)
	}
	nf := (hi - lo) / step
	if (nf+1)*(nf+1) > MaxIntervalChains {
		return nil, fmt.Errorf("binary_interval: step %v gives %.4g grid points per coordinate, %.4g chains, more than the limit %d: use a coarser step", step, nf+1, (nf+1)*(nf+1), MaxIntervalChains)
	}
	n := int(math.Round(nf))
	if math.Abs(nf-float64(n)) > 1e-6 {
		return nil, fmt.Errorf("binary_interval: hi − lo = %v is not a whole number of steps of %v", hi-lo, step)
	}
	if kind == InitGiven {
		return nil, errors.New("binary_interval: initial must be \"any\" or \"stationary\"")
	}
	states := []string{"0", "1"}
	grid := make([]float64, n+1)
	for j := range grid {
		// Round away representation noise (0.1+3·0.01) to 12 digits.
		grid[j] = math.Round((lo+float64(j)*step)*1e12) / 1e12
	}
	var chains []*Chain
	for _, p0 := range grid {
		for _, p1 := range grid {
			ch, err := New(states, [][]float64{{p0, 1 - p0}, {1 - p1, p1}}, kind, nil)
			if err != nil {
				return nil, fmt.Errorf("binary_interval: p0=%v p1=%v: %w", p0, p1, err)
			}
			chains = append(chains, ch)
		}
	}
	return &Class{States: states, Chains: chains, Interval: &Interval{Lo: lo, Hi: hi, Step: step, Points: n + 1}}, nil
}

type classFile struct {
	States         []string      `json:"states"`
	Chains         []chainFile   `json:"chains"`
	BinaryInterval *intervalFile `json:"binary_interval"`
}

type chainFile struct {
	Transition [][]float64     `json:"transition"`
	Initial    json.RawMessage `json:"initial"`
}

type intervalFile struct {
	Lo      *float64 `json:"lo"`
	Hi      *float64 `json:"hi"`
	Step    *float64 `json:"step"`
	Initial string   `json:"initial"`
}

// ParseClass reads a class file (JSON):
//
//	{"states": ["a","b"], "chains": [{"transition": [[0.9,0.1],[0.2,0.8]], "initial": "stationary"}]}
//
// where "initial" is a probability vector, "stationary" or "any" (default
// "stationary"), or
//
//	{"binary_interval": {"lo": 0.1, "hi": 0.9, "step": 0.01}}
//
// (optional "initial": "any" (default) or "stationary"). name is used in
// error messages.
func ParseClass(r io.Reader, name string) (*Class, error) {
	data, err := strictjson.ReadAll(r, "class "+name)
	if err != nil {
		return nil, err
	}
	f, ok := decodeClassFast(data)
	if !ok {
		if err := strictjson.Decode(data, "class "+name, &f); err != nil {
			return nil, err
		}
	}
	if f.BinaryInterval != nil {
		if f.Chains != nil {
			return nil, fmt.Errorf("class %s: give either \"chains\" or \"binary_interval\", not both", name)
		}
		iv := f.BinaryInterval
		if iv.Lo == nil || iv.Hi == nil || iv.Step == nil {
			return nil, fmt.Errorf("class %s: binary_interval needs lo, hi and step", name)
		}
		kind := InitAny
		switch iv.Initial {
		case "", "any":
		case "stationary":
			kind = InitStationary
		default:
			return nil, fmt.Errorf("class %s: binary_interval.initial is %q, want \"any\" or \"stationary\"", name, iv.Initial)
		}
		c, err := BinaryInterval(*iv.Lo, *iv.Hi, *iv.Step, kind)
		if err != nil {
			return nil, fmt.Errorf("class %s: %w", name, err)
		}
		if f.States != nil {
			if len(f.States) != 2 {
				return nil, fmt.Errorf("class %s: binary_interval needs exactly 2 states, got %d", name, len(f.States))
			}
			c.States = append([]string(nil), f.States...)
			for _, ch := range c.Chains {
				ch.States = c.States
			}
		}
		return c, nil
	}
	if len(f.Chains) == 0 {
		return nil, fmt.Errorf("class %s: no \"chains\" (and no \"binary_interval\")", name)
	}
	chains := make([]*Chain, len(f.Chains))
	for i, cf := range f.Chains {
		field := fmt.Sprintf("chains[%d]", i)
		if cf.Transition == nil {
			return nil, fmt.Errorf("class %s: %s: missing \"transition\"", name, field)
		}
		states := f.States // nil: New names them 0..k-1
		kind, q, err := parseInitial(cf.Initial)
		if err != nil {
			return nil, fmt.Errorf("class %s: %s.initial: %w", name, field, err)
		}
		ch, err := New(states, cf.Transition, kind, q)
		if err != nil {
			return nil, fmt.Errorf("class %s: %s: %w", name, field, err)
		}
		chains[i] = ch
	}
	c, err := NewClass(chains[0].States, chains...)
	if err != nil {
		return nil, fmt.Errorf("class %s: %w", name, err)
	}
	return c, nil
}

func parseInitial(raw json.RawMessage) (InitKind, []float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return InitStationary, nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "stationary":
			return InitStationary, nil, nil
		case "any":
			return InitAny, nil, nil
		}
		return 0, nil, fmt.Errorf("%q, want a probability vector, \"stationary\" or \"any\"", s)
	}
	var q []float64
	if err := json.Unmarshal(raw, &q); err != nil {
		return 0, nil, fmt.Errorf("want a probability vector, \"stationary\" or \"any\"")
	}
	return InitGiven, q, nil
}

// MarshalJSON writes the class in the class-file format ParseClass reads
// (an interval class as its binary_interval), so a class survives a round
// trip and has one canonical text (Hash).
func (c *Class) MarshalJSON() ([]byte, error) {
	if iv := c.Interval; iv != nil {
		init := "any"
		if len(c.Chains) > 0 && c.Chains[0].Init == InitStationary {
			init = "stationary"
		}
		return json.Marshal(struct {
			States []string `json:"states"`
			BI     any      `json:"binary_interval"`
		}{c.States, map[string]any{"lo": iv.Lo, "hi": iv.Hi, "step": iv.Step, "initial": init}})
	}
	type chainOut struct {
		Transition [][]float64 `json:"transition"`
		Initial    any         `json:"initial"`
	}
	out := struct {
		States []string   `json:"states"`
		Chains []chainOut `json:"chains"`
	}{States: c.States}
	for _, ch := range c.Chains {
		var init any = ch.Init.String()
		if ch.Init == InitGiven {
			init = ch.Q
		}
		out.Chains = append(out.Chains, chainOut{ch.P, init})
	}
	return json.Marshal(out)
}

// Hash identifies the class by its content: "sha256:" and the hex digest
// of its canonical JSON (MarshalJSON). Two classes with the same states,
// chains and initial distributions have the same hash.
func (c *Class) Hash() string {
	b, err := c.MarshalJSON()
	if err != nil {
		return "sha256:unavailable"
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// AnyStart is the class with every fixed initial distribution replaced by
// "any" (every initial distribution), and c itself when no chain has one.
// A chain observed from an unknown place has the law q·P^{S−1} at its
// first reading for some unknown S; "any" covers every such law, so a σ
// computed for AnyStart holds wherever the data starts (docs/math.md
// §4.10, §4.9). Stationary starts are kept: q·P^{S−1} = π at every S.
func (c *Class) AnyStart() *Class {
	out := &Class{States: c.States, Chains: make([]*Chain, len(c.Chains)), Interval: c.Interval}
	changed := false
	for i, ch := range c.Chains {
		out.Chains[i] = ch
		if ch.Init == InitGiven {
			out.Chains[i] = &Chain{States: ch.States, P: ch.P, Init: InitAny}
			changed = true
		}
	}
	if !changed {
		return c
	}
	return out
}

// FixedStart reports whether some chain of c has a fixed initial
// distribution, so that σ depends on where in the chain data starts.
func (c *Class) FixedStart() bool { return c.AnyStart() != c }
