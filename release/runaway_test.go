package release

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

const sixReadings = "time,kw\n0,1.5\n60,2.5\n120,3\n180,4\n240,1\n300,7\n"

// --levels 0:10:10000 --fit on six readings ran for minutes and
// gigabytes; it is refused before the data are read or a chain fitted,
// naming the limit, an estimate of the cost and --max-states, whichever
// way the data are read (one release, windows, Load for a service).
func TestManyLevelsRefusedBeforeTheFit(t *testing.T) {
	lv, err := reading.ParseLevels("0:10:10000")
	if err != nil {
		t.Fatal(err)
	}
	req := Request{CSV: reading.CSVOptions{TimeCol: "time", ValueCol: "kw", Levels: lv}, Fit: true, Smoothing: 0.5,
		Options: Options{Epsilon: 1, Method: mechanism.Exact}}
	check := func(what string, err error) {
		t.Helper()
		var le *LimitError
		if !errors.As(err, &le) || le.Field() != "max_states" || le.Bins != 10000 {
			t.Fatalf("%s: %v", what, err)
		}
		for _, want := range []string{"10000 states", "limit of 1000 states", "--max-states", "GB"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: %q lacks %q", what, err, want)
			}
		}
	}
	_, err = Prepare(strings.NewReader(sixReadings), "f.csv", req, 0)
	check("Prepare", err)
	_, err = Prepare(strings.NewReader(sixReadings), "f.csv", req, 3600e9)
	check("Prepare windows", err)
	_, _, err = Load(strings.NewReader(sixReadings), "f.csv", req)
	check("Load", err)
	// a raised limit lets a smaller request through
	req.CSV.Levels, _ = reading.ParseLevels("0:10:20")
	req.Limits.MaxStates = 20
	if _, err := Prepare(strings.NewReader(sixReadings), "f.csv", req, 0); err != nil {
		t.Fatalf("20 levels under a limit of 20: %v", err)
	}
	req.Limits.MaxStates = 19
	_, err = Prepare(strings.NewReader(sixReadings), "f.csv", req, 0)
	if !strings.Contains(err.Error(), "limit of 19 states") {
		t.Fatalf("20 levels over a limit of 19: %v", err)
	}
}

// A release whose context ends part-way through a quilt search (not only
// between patterns or windows) returns context.Canceled and spends
// nothing: the search itself checks the context.
func TestReleaseStopsInsideTheSearch(t *testing.T) {
	k := 30
	P := make([][]float64, k)
	states := make([]string, k)
	for i := range P {
		P[i] = make([]float64, k)
		P[i][i] = 0.98
		P[i][(i+1)%k] += 0.01
		P[i][(i+k-1)%k] += 0.01
		states[i] = string(rune('A' + i))
	}
	ch, err := markov.New(states, P, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := markov.NewClass(states, ch)
	if err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	for i := range 2000 {
		csv.WriteString(states[(i/50)%k] + "\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{Epsilon: 1, Method: mechanism.Exact, Context: &cancelAfter{Context: ctx, n: 3, cancel: cancel}}
	_, err = Prepare(strings.NewReader(csv.String()), "s.csv", Request{Class: cl, Options: opts}, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled in the search: %v", err)
	}
}

// cancelAfter cancels its context at its n-th Err (inside the search: the
// release asks it once before).
type cancelAfter struct {
	context.Context
	n      int
	cancel func()
}

func (c *cancelAfter) Err() error {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return c.Context.Err()
}
