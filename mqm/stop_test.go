package mqm

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// countdown is a context that ends once its Err has been asked n times: a
// cancellation at a fixed point inside a search, whatever the machine's
// speed (no timed assertion).
type countdown struct {
	context.Context
	n atomic.Int64
}

func after(n int64) *countdown {
	c := &countdown{Context: context.Background()}
	c.n.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// slowWalk is a lazy walk on a cycle of k states: it mixes in about k²
// steps, so the quilt search at length T ≫ k runs long.
func slowWalk(t *testing.T, k int, init string) *markov.Class {
	t.Helper()
	P := make([][]float64, k)
	for i := range P {
		P[i] = make([]float64, k)
		P[i][i] = 0.98
		P[i][(i+1)%k] += 0.01
		P[i][(i+k-1)%k] += 0.01
	}
	kind, q := markov.InitStationary, []float64(nil)
	switch init {
	case "any":
		kind = markov.InitAny
	case "given":
		kind, q = markov.InitGiven, make([]float64, k)
		q[0] = 1
	}
	ch, err := markov.New(nil, P, kind, q)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := markov.NewClass(ch.States, ch)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// A search whose context ends part-way returns an error wrapping
// context.Canceled (the oracles check it every few milliseconds of work),
// for every initial distribution, both methods and observed patterns; a
// shared oracle stopped part-way is dropped, so the next search on the
// same Tables gives the answer of a fresh one.
func TestSearchStopsWhenItsContextEnds(t *testing.T) {
	for _, init := range []string{"stationary", "given", "any"} {
		cl := slowWalk(t, 24, init)
		for _, m := range []Method{Exact, Approx} {
			if m == Approx && init != "stationary" {
				continue
			}
			ns := []int64{0, 1, 5, 40}
			if m == Approx {
				ns = ns[:1] // its search is a few evaluations: it ends first
			}
			for _, n := range ns {
				_, err := ScaleContext(after(n), cl, 400, 1, m)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("%s %s, cancelled after %d checks: %v", init, m, n, err)
				}
			}
		}
		gaps, err := At([]int{1, 2, 5, 9, 30, 31, 80, 100, 101, 102, 130})
		if err != nil {
			t.Fatal(err)
		}
		cl = slowWalk(t, 12, init)
		tables := NewTables()
		for _, ob := range []Observation{Consecutive(1, 120), Consecutive(7, 120), gaps} {
			if _, err := tables.ScaleAtContext(after(3), cl, ob, 1, Exact); !errors.Is(err, context.Canceled) {
				t.Fatalf("%s %v, cancelled: %v", init, ob, err)
			}
			got, err := tables.ScaleAt(cl, ob, 1, Exact)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ScaleAt(cl, ob, 1, Exact)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%s %v: after a stopped search the shared tables give %+v, a fresh search %+v", init, ob, got, want)
			}
		}
	}
}
