package tpl

import (
	"context"
	"errors"
	"math/rand"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// denseTestChain is a k-state chain with every entry positive (a fitted
// chain with smoothing looks like this): its kernels hold about k³/2
// prefixes, so at k = 120 one calibration takes a second or more.
func denseTestChain(t *testing.T, k int, init markov.InitKind, q []float64) *markov.Chain {
	t.Helper()
	r := rand.New(rand.NewSource(1))
	P := make([][]float64, k)
	for i := range P {
		P[i] = make([]float64, k)
		s := 0.0
		for j := range P[i] {
			P[i][j] = 0.5 + r.Float64()
			s += P[i][j]
		}
		for j := range P[i] {
			P[i][j] /= s
		}
	}
	ch, err := markov.New(nil, P, init, q)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// stopsPromptly runs f under a context cancelled after 50 ms and wants it
// back within 5 s with an error wrapping context.Canceled (generous: the
// checks come every ~10⁵ operations, a millisecond or less).
func stopsPromptly(t *testing.T, name string, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error %v, want one wrapping context.Canceled", name, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still running 5 s after its context was cancelled", name)
	}
}

func TestContextStopsTheScalarRecursion(t *testing.T) {
	stat := denseTestChain(t, 120, markov.InitStationary, nil)
	class, err := markov.NewClass(stat.States, stat)
	if err != nil {
		t.Fatal(err)
	}
	stopsPromptly(t, "CalibrateContext(T = 0)", func(ctx context.Context) error {
		_, _, err := CalibrateContext(ctx, class, 0, 1, nil)
		return err
	})
	stopsPromptly(t, "LossContext(T = 0)", func(ctx context.Context) error {
		_, err := LossContext(ctx, class, 0, 2, nil)
		return err
	})
	// the finite recursion: long enough that the steps, not the kernels,
	// are running when the context ends
	eps := make([]float64, 1<<20)
	for i := range eps {
		eps[i] = 0.5
	}
	small := denseTestChain(t, 20, markov.InitStationary, nil)
	stopsPromptly(t, "LeakageContext", func(ctx context.Context) error {
		_, err := LeakageContext(ctx, small, eps)
		return err
	})
	// a given start runs the recursion to a long horizon
	q := make([]float64, 60)
	q[0] = 1
	given := denseTestChain(t, 60, markov.InitGiven, q)
	stopsPromptly(t, "LeakageSupContext(given start)", func(ctx context.Context) error {
		_, err := LeakageSupContext(ctx, given, 0.5)
		return err
	})
	// an ended context stops before any work
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := CalibrateContext(ctx, class, 0, 1, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v", err)
	}
}

// Calibrate builds each chain's kernels once, so its answer is the one of
// bisecting over fresh evaluations of Loss.
func TestCalibrateReusesKernels(t *testing.T) {
	ch := denseTestChain(t, 12, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	for _, T := range []int{0, 30} {
		b, info, err := Calibrate(class, T, 0.8, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Loss(class, T, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Loss != info.Loss || r.Loss > 0.8 {
			t.Fatalf("T = %d: fresh loss %v at b = %v, calibration's %v", T, r.Loss, b, info.Loss)
		}
		if r2, _ := Loss(class, T, info.Lower, nil); r2.Loss <= 0.8*(1-Slack) {
			t.Fatalf("T = %d: the bracket's lower end %v reaches the target (%v)", T, info.Lower, r2.Loss)
		}
	}
}

func TestWorkGrowsWithStatesAndLength(t *testing.T) {
	cls := func(k int, init markov.InitKind) *markov.Class {
		var q []float64
		if init == markov.InitGiven {
			q = make([]float64, k)
			q[0] = 1
		}
		ch := denseTestChain(t, k, init, q)
		c, _ := markov.NewClass(ch.States, ch)
		return c
	}
	for _, init := range []markov.InitKind{markov.InitStationary, markov.InitAny, markov.InitGiven} {
		// (a given start's horizon keeps ≈ 2·10⁸ operations per step of
		// the bisection at every size)
		w10, w100 := Work(cls(10, init), 0), Work(cls(100, init), 0)
		if grow := map[bool]float64{true: 1, false: 100}[init == markov.InitGiven]; !(w10 > 0 && w100 > grow*w10) {
			t.Errorf("%v: work %g at 10 states, %g at 100", init, w10, w100)
		}
		if wt := Work(cls(10, init), 1000); !(wt > Work(cls(10, init), 10)) {
			t.Errorf("%v: work does not grow with T", init)
		}
	}
	// the fitted 300-state chain of issue 40: tens of seconds
	if w := Work(cls(300, markov.InitStationary), 0); w < 1e10 {
		t.Errorf("300 states: work %g, want ≥ 1e10", w)
	}
}
