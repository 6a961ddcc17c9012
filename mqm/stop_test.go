package mqm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
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

// The δ table's bound changes no result: the approx search and the
// right-only scan with the table cut at 700 distances (block minima past
// it computed, not kept) find what they find with the table whole, and
// the table stays within its bound (slowly mixing bounds grew it by 8
// bytes a distance without end: 1 GB for a length of 10⁸).
func TestApproxTableBoundKeepsResult(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 1))
	defer func(n int) { maxDeltaTable = n }(maxDeltaTable)
	past := 0 // trials whose search went past the bound
	for trial := range 60 {
		T := 1 + rng.IntN(5000)
		if trial%3 == 0 {
			T = 1 + rng.IntN(30_000)
		}
		mk := func() *approxOracle {
			r := rand.New(rand.NewPCG(uint64(trial), 9))
			return &approxOracle{T: T, piMin: 0.001 + r.Float64()*0.3, gap: math.Exp(-r.Float64() * 9), reversible: trial%2 == 0}
		}
		eps := []float64{0.1, 1, 5}[trial%3]
		maxDeltaTable = 1 << 23
		whole := mk()
		want := search(whole, T, eps)
		if len(whole.table) > 700 {
			past++
		}
		maxDeltaTable = 700
		o := mk()
		got := search(o, T, eps)
		if got != want || len(o.table) > 700 || len(o.bmin[len(rLevel)-1])*rLevel[len(rLevel)-1] > 700 {
			t.Fatalf("trial %d (T %d): bounded table %+v (%d entries), whole %+v", trial, T, got, len(o.table), want)
		}
		o1, o2 := mk(), mk()
		s1, s2 := 1, 1
		for i := 1; i <= min(T, 2000); i += 1 + rng.IntN(50) {
			b1 := nodeResult{sigma: float64(T) / eps, node: i, quilt: Quilt{i, T - i + 1}}
			b2 := b1
			o1.rightOnlyBest(i, T, eps, &s1, &b1)
			rightOnlyBest(o2.rightOnly, i, T, eps, &s2, &b2)
			if b1 != b2 || s1 != s2 {
				t.Fatalf("trial %d node %d: bounded table %+v (start %d), generic %+v (start %d)", trial, i, b1, s1, b2, s2)
			}
		}
	}
	if past < 10 {
		t.Fatalf("only %d trials went past the bound", past)
	}
}

// A search that grows the live heap past the bound stops with a
// *MemoryError naming --max-memory (a 300-state slowly mixing chain at
// length 1000 grew to 870 MB in two minutes, without bound); no bound, no
// stop.
func TestSearchStopsAtTheMemoryBound(t *testing.T) {
	defer SetMaxMemory(DefaultMaxMemory)
	cl := slowWalk(t, 24, "given")
	SetMaxMemory(1) // every heap is over it
	_, err := ScaleContext(context.Background(), cl, 400, 1, Exact)
	var me *MemoryError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "--max-memory") {
		t.Fatalf("over the memory bound: %v", err)
	}
	SetMaxMemory(0)
	if _, err := ScaleContext(after(1<<40), slowWalk(t, 6, "given"), 60, 1, Exact); err != nil {
		t.Fatalf("no bound: %v", err)
	}
}
