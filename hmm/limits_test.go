package hmm

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

func flu(t *testing.T) (*Model, []Secret, Epsilon) {
	t.Helper()
	file, err := ReadFile("../examples/flu_hmm.json")
	if err != nil {
		t.Fatal(err)
	}
	m, secs, err := file.Build("flu", nil)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := ParseEpsilon("ln(3)")
	if err != nil {
		t.Fatal(err)
	}
	return m, secs, eps
}

// Issue 39: the exact check of examples/flu_hmm.json at length 5000 (a
// minute, 265 MB) is refused up front naming the limit; over a memory
// limit it is refused naming that one; the float enclosure, a few
// thousand operations a step, runs.
func TestVerificationRefusedUpFront(t *testing.T) {
	m, secs, eps := flu(t)
	start := time.Now()
	_, err := EvaluateWith(Options{}, m, secs, 5000, ExactArithmetic, &eps)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "work" || le.Stopped || !strings.Contains(err.Error(), "--max-work") {
		t.Fatalf("length 5000: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refused after %v", d)
	}
	_, err = EvaluateWith(Options{Limits: Limits{MaxWork: 1e15, MaxMemory: 50e6}}, m, secs, 5000, ExactArithmetic, &eps)
	if !errors.As(err, &le) || le.Limit != "memory" || !strings.Contains(err.Error(), "--max-memory") {
		t.Fatalf("length 5000 over 50 MB: %v", err)
	}
	// the float enclosure's pruning is weaker: its estimate (one path)
	// passes, and the work counted as it runs stops it
	_, err = EvaluateWith(Options{Limits: Limits{MaxWork: 1e8}}, m, secs, 5000, FloatArithmetic, &eps)
	if !errors.As(err, &le) || !le.Stopped || !strings.Contains(err.Error(), "--max-work") {
		t.Fatalf("float: %v", err)
	}
	if _, err := EvaluateWith(Options{}, m, secs, 200, ExactArithmetic, &eps); err != nil {
		t.Fatalf("length 200: %v", err)
	}
	// a sweep's points add up
	file, _ := ReadFile("../examples/flu_hmm.json")
	ax, err := ParseAxis("p=1/10:1/2:1/10", func(s string) (*big.Rat, error) { r, _ := new(big.Rat).SetString(s); return r, nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sweep(Options{}, file, "flu", []Axis{ax}, 2500, ExactArithmetic, eps); !errors.As(err, &le) {
		t.Fatalf("sweep of 5 points at 2500: %v", err)
	}
}

// A cancelled context stops the exact and the float searches promptly,
// with an error wrapping its cause; so does a deadline passed while the
// search runs.
func TestVerificationStopsOnCancel(t *testing.T) {
	m, secs, eps := flu(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	huge := Options{Context: ctx, Limits: Limits{MaxWork: 1e18}}
	for _, a := range []Arithmetic{ExactArithmetic, FloatArithmetic} {
		start := time.Now()
		if _, err := EvaluateWith(huge, m, secs, 10000, a, &eps); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v", a, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s: stopped after %v", a, d)
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := EvaluateWith(Options{Context: ctx, Limits: Limits{MaxWork: 1e18}}, m, secs, 10000, ExactArithmetic, &eps); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("stopped %v after a deadline of 300ms", d)
	}
}
