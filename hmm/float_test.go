package hmm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The float enclosure contains the exact loss on random HMMs (zeros
// included) and on the builders, and is narrow.
func TestFloatEnclosesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	check := func(name string, m *Model, secs []Secret, n int) {
		t.Helper()
		ex, err := Loss(m, secs, n)
		if err != nil {
			t.Fatal(err)
		}
		fl, err := LossFloat(m, secs, n)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Ratio == nil {
			if !math.IsInf(fl.LossLo, 1) {
				t.Fatalf("%s: exact loss infinite, float [%g, %g]", name, fl.LossLo, fl.LossHi)
			}
			return
		}
		if ex.Loss < fl.LossLo || ex.Loss > fl.LossHi || fl.LossHi-fl.LossLo > 1e-12 {
			t.Fatalf("%s: exact %.17g outside float [%.17g, %.17g]", name, ex.Loss, fl.LossLo, fl.LossHi)
		}
	}
	for trial := range 60 {
		m, sec, n := randomModel(rng, trial)
		check("random", m, []Secret{sec}, n)
	}
	m, secs, err := noisyMaxModel(4, 2, big.NewRat(1, 2), ReturnValue, DifferAnyhow)
	if err != nil {
		t.Fatal(err)
	}
	check("noisy max", m, secs, 1)
	m, sec, err := Example71(big.NewRat(1, 5), big.NewRat(2, 5))
	if err != nil {
		t.Fatal(err)
	}
	check("example 7.1", m, []Secret{sec}, 6)
}

// Long sequences do not underflow (forward vectors are rescaled), and the
// verdicts agree with the exact checker away from the boundary.
func TestFloatLongSequences(t *testing.T) {
	m, sec, err := Example71(big.NewRat(1, 5), big.NewRat(2, 5))
	if err != nil {
		t.Fatal(err)
	}
	secs := []Secret{sec}
	fl, err := LossFloat(m, secs, 400)
	if err != nil {
		t.Fatal(err)
	}
	if fl.LossHi-fl.LossLo > 1e-10 || fl.LossLo <= 0 {
		t.Fatalf("n = 400: [%g, %g]", fl.LossLo, fl.LossHi)
	}
	for _, e := range []string{"ln(2)", "ln(3/2)", "0.5"} {
		eps, _ := ParseEpsilon(e)
		v1, _, err := Check(m, secs, 6, eps)
		if err != nil {
			t.Fatal(err)
		}
		v2, _, err := checkFloat(Options{}, m, secs, 6, eps)
		if err != nil {
			t.Fatal(err)
		}
		if v1 != v2 {
			t.Fatalf("ε = %s: exact %s, float %s", e, v1, v2)
		}
	}
	// At ε = ln of the exact ratio the float path cannot decide.
	eps, _ := ParseEpsilon("ln(911/550)")
	if v, _, _ := checkFloat(Options{}, m, secs, 6, eps); v != Undecided {
		t.Fatalf("on the boundary the float path says %s", v)
	}
}
