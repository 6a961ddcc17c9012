package reading

import (
	"errors"
	"fmt"
	"slices"

	"github.com/pufferfish-privacy/pufferfish/mqm"
)

// Summary is everything a release reads from the data besides the class:
// the readings per state, the distinct patterns of observation (σ depends
// on a series only through its pattern: its length, where its chain
// starts, which steps are missing) with how many series have each, and the
// public sizes. Data.Summary computes it from data in memory; a pipeline
// builds it series by series (AddSeries) and merges partial summaries
// (Merge), then releases with release.PrepareSummary. It holds no series names
// and no per-series values.
type Summary struct {
	States     []string
	Levels     *Levels
	Step       float64
	StepSource string
	Counts     []float64           // readings per state (Unknown values in none)
	Patterns   map[string]*Pattern // by PatternKey
	Sequences  int
	// Observations are the readings, Missing the missing steps inside
	// the series, Clipped and MissingValues as in Data.
	Observations, Missing, Clipped, MissingValues int
	MinLength, MaxLength                          int
	// Complete says every reading has a value, so Counts sum to
	// Observations: known from the format (Data.NullValues false), never
	// from the data. False (the default) when a value may be missing: the
	// estimate then uses only Σ ≤ Observations (docs/math.md §4.14).
	Complete bool
}

// Pattern is one observation pattern and the number of series with it.
type Pattern struct {
	Observation mqm.Observation
	Series      int
}

// PatternKey names an observation pattern (equal keys, equal σ).
func PatternKey(ob mqm.Observation) string { return fmt.Sprint(ob.Start, ob.Len, ob.Times) }

// NewSummary is an empty summary over the declared states.
func NewSummary(states []string, levels *Levels) *Summary {
	return &Summary{States: slices.Clone(states), Levels: levels, Counts: make([]float64, len(states)), Patterns: map[string]*Pattern{}}
}

// AddSeries adds one series: its readings (state indices, or Unknown)
// observed at the chain times of ob.
func (s *Summary) AddSeries(seq []int, ob mqm.Observation) error {
	if len(seq) == 0 {
		return nil
	}
	if ob.Len != len(seq) {
		return fmt.Errorf("release: a series of %d readings with a pattern of %d", len(seq), ob.Len)
	}
	for _, v := range seq {
		if v == Unknown {
			continue // a reading of unknown value: in the pattern, in no bin
		}
		if v < 0 || v >= len(s.Counts) {
			return fmt.Errorf("release: state index %d out of range", v)
		}
		s.Counts[v]++
	}
	k := PatternKey(ob)
	if p, ok := s.Patterns[k]; ok {
		p.Series++
	} else {
		s.Patterns[k] = &Pattern{Observation: ob, Series: 1}
	}
	if s.Sequences == 0 || len(seq) < s.MinLength {
		s.MinLength = len(seq)
	}
	s.MaxLength = max(s.MaxLength, len(seq))
	s.Sequences++
	s.Observations += len(seq)
	s.Missing += ob.Gaps()
	return nil
}

// Merge adds o to s (the same states and step); s is Complete only if
// both are.
func (s *Summary) Merge(o *Summary) error {
	if !slices.Equal(s.States, o.States) || s.Step != o.Step {
		return errors.New("release: merging summaries of different states or time steps")
	}
	for i, c := range o.Counts {
		s.Counts[i] += c
	}
	for k, p := range o.Patterns {
		if q, ok := s.Patterns[k]; ok {
			q.Series += p.Series
		} else {
			cp := *p
			s.Patterns[k] = &cp
		}
	}
	if o.Sequences > 0 && (s.Sequences == 0 || o.MinLength < s.MinLength) {
		s.MinLength = o.MinLength
	}
	s.MaxLength = max(s.MaxLength, o.MaxLength)
	s.Sequences += o.Sequences
	s.Observations += o.Observations
	s.Missing += o.Missing
	s.Clipped += o.Clipped
	s.MissingValues += o.MissingValues
	s.Complete = s.Complete && o.Complete
	return nil
}

// EmptySummary is an empty summary of part of the data (a window's, a
// profile cell's readings): its states, levels and time step, and
// Complete from the format (no reading can be missing its value when
// d.NullValues is false), the one place a summary learns it from Data.
func (d *Data) EmptySummary() *Summary {
	s := NewSummary(d.States, d.Levels)
	s.Step, s.StepSource = d.Step, d.StepSource
	s.Complete = !d.NullValues
	return s
}

// Summary summarises the data.
func (d *Data) Summary() *Summary {
	s := d.EmptySummary()
	s.Clipped, s.MissingValues = d.Clipped, d.MissingValues
	for i, sq := range d.Seqs {
		s.AddSeries(sq, d.Observation(i)) // Data's readings are valid state indices
	}
	return s
}
