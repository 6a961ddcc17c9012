package reading

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// DataFlags are the reading flags of puff release, registered once for
// every command that reads data the way it does (puff release, the Beam
// pipeline puffbeam): the Spec they fill, the deprecated --gap, and which
// of them were given. Register puts them on a standard library flag set;
// pflag's FlagSet.AddGoFlagSet brings that set to a cobra command
// unchanged (what was given is recorded by the flags' own values, so
// either parser's Set is seen).
type DataFlags struct {
	Spec Spec
	Gap  float64 // deprecated, no effect (GapWarning)
	set  map[string]bool
}

// stringValue is a string flag that records being given (its name, less
// "Value", is the type pflag shows: string).
type stringValue struct {
	p    *string
	name string
	set  map[string]bool
}

func (v *stringValue) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return *v.p
}

func (v *stringValue) Set(s string) error {
	*v.p = s
	v.set[v.name] = true
	return nil
}

// stringArrayValue is a repeatable string flag (pflag shows stringArray).
type stringArrayValue struct{ p *[]string }

func (v *stringArrayValue) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ";")
}

func (v *stringArrayValue) Set(s string) error {
	*v.p = append(*v.p, s)
	return nil
}

// float64Value is a float flag that records being given (pflag shows
// float64).
type float64Value struct {
	p    *float64
	name string
	set  map[string]bool
}

func (v *float64Value) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return fmt.Sprint(*v.p)
}

func (v *float64Value) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q: want a number", s)
	}
	*v.p = x
	v.set[v.name] = true
	return nil
}

// dataFlagNames are the flags Register defines, in order.
var dataFlagNames = []string{"series-col", "time-col", "state-col", "delimiter", "step", "gap", "states", "value-col", "levels", "edges", "level-values", "time-format", "tz", "time-unit", "sort"}

// Register defines the reading flags on fs, with puff release's defaults
// and help, except the ones named in without (e.g. "sort" where series
// are always ordered).
func (d *DataFlags) Register(fs *flag.FlagSet, without ...string) {
	if d.set == nil {
		d.set = map[string]bool{}
	}
	// the defaults, as puff release's flags show them (Given blanks a
	// column flag left at its default: Spec.CSV then does not require it)
	d.Spec.SeriesCol, d.Spec.TimeCol, d.Spec.StateCol = DefaultCSV.SeriesCol, DefaultCSV.TimeCol, DefaultCSV.StateCol
	d.Spec.Delimiter, d.Spec.TZ, d.Spec.TimeUnit = ",", "UTC", 1
	str := func(p *string, name, usage string) {
		fs.Var(&stringValue{p: p, name: name, set: d.set}, name, usage)
	}
	num := func(p *float64, name, usage string) {
		fs.Var(&float64Value{p: p, name: name, set: d.set}, name, usage)
	}
	def := map[string]func(){
		"series-col": func() {
			str(&d.Spec.SeriesCol, "series-col", "name of the series column (absent: one series; named explicitly: required)")
		},
		"time-col": func() {
			str(&d.Spec.TimeCol, "time-col", "name of the time column (absent: rows are consecutive readings; named explicitly: required)")
		},
		"state-col": func() { str(&d.Spec.StateCol, "state-col", "name of the state column") },
		"delimiter": func() { str(&d.Spec.Delimiter, "delimiter", "field delimiter (one character; \\t for tab)") },
		"step": func() {
			num(&d.Spec.Step, "step", "time step of the readings' grid; a difference of g+1 steps is g missing readings (0: the smallest positive difference in the data)")
		},
		"gap": func() {
			num(&d.Gap, "gap", "deprecated, no effect: a series is never split; missing readings are placed on the --step grid and the chain runs through them")
		},
		"states": func() {
			str(&d.Spec.States, "states", "the declared states in order, comma-separated (e.g. sleep,sit,walk,run): the histogram's bins")
		},
		"value-col": func() {
			str(&d.Spec.ValueCol, "value-col", "a column of numeric readings (instead of --state-col), discretised by --levels or --edges; an empty, ?, NA or NaN value is a reading of unknown value (in the number of readings and σ, in no bin)")
		},
		"levels": func() {
			str(&d.Spec.Levels, "levels", "LO:HI:N — N equal-width levels over public bounds [LO, HI] (values outside go to the end levels and are counted; bins computed from the data are not offered: they would reveal it)")
		},
		"edges": func() {
			str(&d.Spec.Edges, "edges", "e1,e2,...: levels between consecutive public edges (instead of --levels)")
		},
		"level-values": func() {
			str(&d.Spec.LevelValues, "level-values", "each level's value for --query mean (default: the midpoints)")
		},
		"time-format": func() {
			fs.Var(&stringArrayValue{&d.Spec.TimeFormat}, "time-format", "Go layout of the time column (repeat to try several), e.g. '2/1/2006 15:04:05'; default: numbers (seconds) or RFC 3339")
		},
		"tz": func() {
			str(&d.Spec.TZ, "tz", "time zone of times without one, and of --window boundaries (IANA name)")
		},
		"time-unit": func() {
			num(&d.Spec.TimeUnit, "time-unit", "seconds per unit of a numeric time (60 when times count minutes)")
		},
		"sort": func() {
			fs.BoolVar(&d.Spec.Sort, "sort", false, "order each series by time instead of refusing times that go backwards (holds every row in memory until the end; without it, rows grouped by series in time order are streamed in memory that grows with the series, not the rows)")
		},
	}
	for _, name := range dataFlagNames {
		if !slices.Contains(without, name) {
			def[name]()
		}
	}
}

// Given is the spec of the flags with a column flag left at its default
// blanked: Spec.CSV requires only the columns named explicitly.
func (d *DataFlags) Given() Spec {
	s := d.Spec
	for name, p := range map[string]*string{"series-col": &s.SeriesCol, "time-col": &s.TimeCol, "state-col": &s.StateCol} {
		if !d.set[name] {
			*p = ""
		}
	}
	return s
}

// CSV is the reading options of the flags (Given's Spec.CSV); an error
// names its flag (--levels: …).
func (d *DataFlags) CSV() (CSVOptions, error) {
	if math.IsNaN(d.Gap) || d.Gap < 0 || math.IsInf(d.Gap, 0) {
		return CSVOptions{}, fmt.Errorf("--gap %v: want a finite number ≥ 0", d.Gap)
	}
	if d.set["time-unit"] && d.Spec.TimeUnit == 0 {
		// Spec's 0 is "not given" (the default, 1): a unit given as 0
		// would read every numeric time as 1 second each
		return CSVOptions{}, errors.New("--time-unit 0: want a finite number of seconds > 0 (60 when times count minutes)")
	}
	opts, err := d.Given().CSV()
	if err != nil {
		return opts, fmt.Errorf("--%w", err)
	}
	return opts, nil
}

// GapWarning is the report's warning when --gap was given, else "".
func (d *DataFlags) GapWarning() string {
	if !d.set["gap"] {
		return ""
	}
	return "--gap has no effect: series are never split into independent pieces (pieces of one series are correlated); readings are placed on the time grid and missing ones are accounted for"
}
