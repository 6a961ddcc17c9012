package reading

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Spec is how to read a data file, in the words of puff release's data
// flags and of the service's JSON (each field is the flag without its
// dashes): the one translation of those words into CSVOptions. Empty
// fields take puff release's defaults (DefaultCSV, UTC); a column named
// explicitly must exist.
type Spec struct {
	SeriesCol   string   `json:"series_col,omitempty"`
	TimeCol     string   `json:"time_col,omitempty"`
	StateCol    string   `json:"state_col,omitempty"`
	Delimiter   string   `json:"delimiter,omitempty"`
	Step        float64  `json:"step,omitempty"`
	States      string   `json:"states,omitempty"` // a,b,c
	ValueCol    string   `json:"value_col,omitempty"`
	Levels      string   `json:"levels,omitempty"` // LO:HI:N
	Edges       string   `json:"edges,omitempty"`  // e1,e2,...
	LevelValues string   `json:"level_values,omitempty"`
	TimeFormat  []string `json:"time_format,omitempty"`
	TZ          string   `json:"tz,omitempty"`
	TimeUnit    float64  `json:"time_unit,omitempty"`
	Sort        bool     `json:"sort,omitempty"`
}

// FieldError names the Spec field (flag) a reading option is wrong in.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field string, err error) error { return &FieldError{field, err} }

// CSV turns the spec into reading options.
func (s Spec) CSV() (CSVOptions, error) {
	o := DefaultCSV
	if s.SeriesCol != "" {
		o.SeriesCol, o.RequireSeries = s.SeriesCol, true
	}
	if s.TimeCol != "" {
		o.TimeCol, o.RequireTime = s.TimeCol, true
	}
	if s.StateCol != "" {
		o.StateCol, o.RequireState = s.StateCol, true
	}
	var err error
	if s.Delimiter != "" {
		if o.Delimiter, err = parseDelimiter(s.Delimiter); err != nil {
			return o, fieldErr("delimiter", err)
		}
	}
	if math.IsNaN(s.Step) || math.IsInf(s.Step, 0) || s.Step < 0 {
		return o, fieldErr("step", fmt.Errorf("%v: want a finite number ≥ 0", s.Step))
	}
	o.Step = s.Step
	if o.States, err = parseStates(s.States); err != nil {
		return o, fieldErr("states", err)
	}
	o.ValueCol = s.ValueCol
	switch {
	case s.Levels != "" && s.Edges != "":
		return o, fieldErr("levels", fmt.Errorf("give levels or edges, not both"))
	case s.Levels != "":
		if o.Levels, err = ParseLevels(s.Levels); err != nil {
			return o, fieldErr("levels", err)
		}
	case s.Edges != "":
		if o.Levels, err = parseEdges(s.Edges); err != nil {
			return o, fieldErr("edges", err)
		}
	}
	if s.LevelValues != "" {
		if o.Levels == nil {
			return o, fieldErr("level-values", fmt.Errorf("needs levels or edges"))
		}
		if err := o.Levels.SetValues(s.LevelValues); err != nil {
			return o, fieldErr("level-values", err)
		}
	}
	if o.Levels != nil && o.ValueCol == "" {
		return o, fieldErr("value-col", fmt.Errorf("levels and edges discretise numeric readings: name their column"))
	}
	o.TimeFormats = s.TimeFormat
	tz := s.TZ
	if tz == "" {
		tz = "UTC"
	}
	if o.Location, err = time.LoadLocation(tz); err != nil {
		return o, fieldErr("tz", err)
	}
	if math.IsNaN(s.TimeUnit) || math.IsInf(s.TimeUnit, 0) || s.TimeUnit < 0 {
		return o, fieldErr("time-unit", fmt.Errorf("%v: want a finite number > 0", s.TimeUnit))
	}
	o.TimeUnit = s.TimeUnit
	o.Sort = s.Sort
	return o, nil
}

// ParseTime reads one time as the data's time column is read with these
// options (a time format, a number of time units, or RFC 3339), in
// seconds: how a chain origin is given.
func (o CSVOptions) ParseTime(s string) (float64, error) {
	unit := o.TimeUnit
	if unit == 0 {
		unit = 1
	}
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	return parseTime(s, o.TimeFormats, loc, unit)
}

// parseStates reads a declared state list "a,b,c" (distinct, non-empty);
// "" gives nil.
func parseStates(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	st := strings.Split(s, ",")
	seen := map[string]bool{}
	for i := range st {
		st[i] = strings.TrimSpace(st[i])
		if st[i] == "" || seen[st[i]] {
			return nil, fmt.Errorf("states %q: want distinct non-empty names separated by commas", s)
		}
		seen[st[i]] = true
	}
	return st, nil
}

// parseDelimiter reads a one-character field delimiter ("\t" for tab).
func parseDelimiter(s string) (rune, error) {
	d := strings.ReplaceAll(s, `\t`, "\t")
	if utf8.RuneCountInString(d) != 1 {
		return 0, fmt.Errorf("delimiter %q: want exactly one character", s)
	}
	r, _ := utf8.DecodeRuneInString(d)
	return r, nil
}
