package markov

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestBinaryClosedForms(t *testing.T) {
	for _, p := range [][2]float64{{0.9, 0.7}, {0.2, 0.4}, {0.5, 0.5}} {
		p0, p1 := p[0], p[1]
		ch, err := New(nil, [][]float64{{p0, 1 - p0}, {1 - p1, p1}}, InitStationary, nil)
		if err != nil {
			t.Fatal(err)
		}
		pi, _ := ch.Stationary()
		// [SWC16] Lemma B.12: π = ((1−p1), (1−p0)) / (2−p0−p1)
		if want := (1 - p1) / (2 - p0 - p1); math.Abs(pi[0]-want) > 1e-14 {
			t.Fatalf("π0 = %v, want %v", pi[0], want)
		}
		rev, _ := ch.Reversible()
		if !rev {
			t.Fatal("binary chain not reversible")
		}
		// eigenvalues 1 and p0+p1−1
		g, err := ch.Eigengap()
		if err != nil || math.Abs(g-(1-math.Abs(p0+p1-1))) > 1e-12 {
			t.Fatalf("eigengap %v (%v), want %v", g, err, 1-math.Abs(p0+p1-1))
		}
		// P·P* = P² for reversible chains: eigenvalue (p0+p1−1)²
		gg, err := ch.PPStarGap()
		if err != nil || math.Abs(gg-(1-(p0+p1-1)*(p0+p1-1))) > 1e-12 {
			t.Fatalf("PP* gap %v (%v)", gg, err)
		}
	}
}

func TestStructure(t *testing.T) {
	per, _ := New(nil, [][]float64{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}}, InitStationary, nil)
	if p, _ := per.Period(); p != 3 {
		t.Fatalf("period %d, want 3", p)
	}
	if err := per.CheckErgodic(); err == nil || !strings.Contains(err.Error(), "period 3") {
		t.Fatalf("CheckErgodic: %v", err)
	}
	red, _ := New(nil, [][]float64{{1, 0}, {0.5, 0.5}}, InitStationary, nil)
	if red.Irreducible() {
		t.Fatal("reducible chain called irreducible")
	}
	if pi, err := red.Stationary(); err != nil || pi[0] != 1 || pi[1] != 0 {
		t.Fatalf("stationary of a reducible chain with one closed class: %v %v", pi, err)
	}
	P3 := per.Pow(3)
	for i := range 3 {
		if P3[i][i] != 1 {
			t.Fatalf("P^3 = %v, want I", P3)
		}
	}
}

func TestValidationErrors(t *testing.T) {
	cases := []struct {
		P    [][]float64
		want string
	}{
		{[][]float64{{0.5, 0.4}, {0.5, 0.5}}, "row 0"},
		{[][]float64{{math.NaN(), 1}, {0.5, 0.5}}, "finite"},
		{[][]float64{{1.5, -0.5}, {0.5, 0.5}}, "[0, 1]"},
		{[][]float64{{1}, {0.5, 0.5}}, "entries"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if _, err := New(nil, c.P, InitStationary, nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %v, want %q", c.P, err, c.want)
			}
		})
	}
	if _, err := ParseClass(strings.NewReader(`{"chains": [{"transition": [[1]], "initial": "sometimes"}]}`), "c.json"); err == nil || !strings.Contains(err.Error(), "chains[0].initial") {
		t.Errorf("bad initial: %v", err)
	}
	if _, err := ParseClass(strings.NewReader(`{"binary_interval": {"lo": 0.1, "hi": 0.9, "step": 0.3}}`), "c.json"); err == nil {
		t.Error("interval with a non-integer number of steps accepted")
	}
	if _, err := ParseClass(strings.NewReader("{\n\"chains\": [{\"transition\": [[1]]}], \"extra\": 1}"), "c.json"); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("unknown field: %v", err)
	}
}

func TestFit(t *testing.T) {
	ch, err := Fit([]string{"a", "b"}, [][]int{{0, 0, 1, 1, 0}, {1, 1}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// transitions: a→a, a→b, b→b, b→a, b→b  →  P(a,·) = (1/2, 1/2), P(b,·) = (1/3, 2/3)
	if ch.P[0][0] != 0.5 || math.Abs(ch.P[1][1]-2.0/3) > 1e-15 {
		t.Fatalf("P = %v", ch.P)
	}
	if _, err := Fit([]string{"a", "b"}, [][]int{{0, 0, 1}}, 0); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("unestimable row: %v", err)
	}
	if ch, err := Fit([]string{"a", "b"}, [][]int{{0, 0, 1}}, 1); err != nil || ch.P[1][0] != 0.5 {
		t.Fatalf("smoothing: %v %v", ch, err)
	}
}

func TestIntervalGrid(t *testing.T) {
	c, err := BinaryInterval(0.1, 0.9, 0.01, InitAny)
	if err != nil || len(c.Chains) != 81*81 {
		t.Fatalf("%v chains, %v", len(c.Chains), err)
	}
	if !strings.Contains(c.Coverage(), "grid points") {
		t.Fatal(c.Coverage())
	}
}
