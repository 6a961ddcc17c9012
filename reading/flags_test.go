package reading

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
)

func parseDataFlags(t *testing.T, args []string, without ...string) (*DataFlags, *flag.FlagSet, error) {
	t.Helper()
	var d DataFlags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	d.Register(fs, without...)
	return &d, fs, fs.Parse(args)
}

// The flags fill the spec as puff release's flags do; a column flag left
// at its default is not required (Given blanks it), one given is.
func TestDataFlagsFillTheSpec(t *testing.T) {
	d, _, err := parseDataFlags(t, []string{"--time-col", "ts", "--value-col", "kw", "--levels", "0:3:3", "--level-values", "1,2,3",
		"--time-format", "2006-01-02", "--time-format", "15:04", "--tz", "Europe/Paris", "--time-unit", "60", "--step", "120",
		"--delimiter", ";", "--states", "a,b,c", "--sort"})
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{TimeCol: "ts", ValueCol: "kw", Levels: "0:3:3", LevelValues: "1,2,3", TimeFormat: []string{"2006-01-02", "15:04"},
		TZ: "Europe/Paris", TimeUnit: 60, Step: 120, Delimiter: ";", States: "a,b,c", Sort: true}
	if got := d.Given(); !reflect.DeepEqual(got, want) {
		t.Fatalf("spec %+v\nwant %+v", got, want)
	}
	if d.GapWarning() != "" {
		t.Fatal("a warning for a --gap not given")
	}
	opts, err := d.CSV()
	if err != nil {
		t.Fatal(err)
	}
	if opts.RequireSeries || !opts.RequireTime || opts.TimeCol != "ts" || opts.SeriesCol != "series" || opts.TimeUnit != 60 || opts.Delimiter != ';' {
		t.Fatalf("options %+v", opts)
	}
	// nothing given: puff release's defaults, no column required
	d, _, err = parseDataFlags(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Given(); !reflect.DeepEqual(got, Spec{Delimiter: ",", TZ: "UTC", TimeUnit: 1}) {
		t.Fatalf("defaults %+v", got)
	}
	if d.Spec.SeriesCol != "series" || d.Spec.TimeCol != "time" || d.Spec.StateCol != "state" {
		t.Fatalf("the column flags' defaults are not shown: %+v", d.Spec)
	}
}

// A flag set by another parser through the flag's own value (as pflag's
// AddGoFlagSet does, which the standard library's set never sees) counts
// as given.
func TestDataFlagsGivenThroughTheirValues(t *testing.T) {
	d, fs, err := parseDataFlags(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"series-col": "id", "gap": "2", "time-format": "15:04"} {
		if err := fs.Lookup(name).Value.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if g := d.Given(); g.SeriesCol != "id" || g.TimeCol != "" || !reflect.DeepEqual(g.TimeFormat, []string{"15:04"}) {
		t.Fatalf("spec %+v", g)
	}
	if !strings.HasPrefix(d.GapWarning(), "--gap has no effect") {
		t.Fatalf("warning %q", d.GapWarning())
	}
}

// Bad values are errors naming the flag, not panics.
func TestDataFlagsErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gap", "-1"}, "--gap -1"},
		{[]string{"--gap", "NaN"}, "--gap NaN"},
		{[]string{"--levels", "0:1"}, "--levels"},
		{[]string{"--levels", "0:1:2"}, "--value-col"},
		{[]string{"--tz", "Mars/Base"}, "--tz"},
		{[]string{"--step", "-2"}, "--step"},
		{[]string{"--delimiter", "ab"}, "--delimiter"},
		// 0 was taken as the default 1 (issue 34)
		{[]string{"--time-unit", "0"}, "--time-unit 0: want a finite number of seconds > 0"},
		{[]string{"--time-unit", "-0"}, "--time-unit 0"},
		{[]string{"--time-unit", "-1"}, "--time-unit"},
	} {
		d, _, err := parseDataFlags(t, c.args)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if _, err := d.CSV(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %s", c.args, err, c.want)
		}
	}
	if _, _, err := parseDataFlags(t, []string{"--step", "x"}); err == nil || !strings.Contains(err.Error(), "step") {
		t.Errorf("--step x: %v", err)
	}
}

// without leaves flags out.
func TestDataFlagsWithout(t *testing.T) {
	_, fs, err := parseDataFlags(t, nil, "sort", "gap")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if len(names) != len(dataFlagNames)-2 || fs.Lookup("sort") != nil || fs.Lookup("gap") != nil {
		t.Fatalf("flags %v", names)
	}
}
