package noise

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// seeded is a deterministic Source for tests only.
type seeded struct{ r *rand.ChaCha8 }

func (s seeded) Uint64() uint64 { return s.r.Uint64() }

func newSeeded(seed byte) Source {
	var key [32]byte
	key[0] = seed
	return seeded{rand.NewChaCha8(key)}
}

func laplaceCDF(x, b float64) float64 {
	if x < 0 {
		return 0.5 * math.Exp(x/b)
	}
	return 1 - 0.5*math.Exp(-x/b)
}

// Kolmogorov–Smirnov test of the noise against Lap(b). The critical value
// at α = 0.001 is 1.95/√n; with a fixed seed the outcome is deterministic.
func TestLaplaceKolmogorovSmirnov(t *testing.T) {
	for i, b := range []float64{1e-6, 0.37, 1, 250, 3e9} {
		l := NewLaplace(newSeeded(byte(i + 1)))
		const n = 20000
		xs := make([]float64, n)
		for j := range xs {
			v, err := l.Add(0, b, b)
			if err != nil {
				t.Fatal(err)
			}
			xs[j] = v
		}
		slices.Sort(xs)
		d := 0.0
		for j, x := range xs {
			F := laplaceCDF(x, b)
			d = math.Max(d, math.Max(math.Abs(F-float64(j)/n), math.Abs(F-float64(j+1)/n)))
		}
		if crit := 1.95 / math.Sqrt(n); d > crit {
			t.Errorf("b=%v: KS statistic %v > %v", b, d, crit)
		}
	}
}

// The KS test must be able to fail: a sampler with the wrong scale is
// rejected.
func TestKolmogorovSmirnovDetectsWrongScale(t *testing.T) {
	l := NewLaplace(newSeeded(9))
	const n = 20000
	xs := make([]float64, n)
	for j := range xs {
		xs[j], _ = l.Add(0, 1.1, 1.1)
	}
	slices.Sort(xs)
	d := 0.0
	for j, x := range xs {
		F := laplaceCDF(x, 1)
		d = math.Max(d, math.Abs(F-float64(j+1)/n))
	}
	if d <= 1.95/math.Sqrt(n) {
		t.Fatalf("KS did not reject Lap(1.1) as Lap(1): D=%v", d)
	}
}

func TestOutputsLieOnGrid(t *testing.T) {
	l := NewLaplace(newSeeded(3))
	b := 0.7
	g := Granularity(b)
	for range 1000 {
		v, _ := l.Add(math.Pi, b, 2)
		if r := v / g; r != math.Round(r) {
			t.Fatalf("output %v is not a multiple of g=%v", v, g)
		}
	}
	if EffectiveScale(b, 2) < b {
		t.Fatal("effective scale below the requested scale")
	}
}

func TestBadArguments(t *testing.T) {
	l := NewLaplace(newSeeded(4))
	for _, c := range [][3]float64{{0, 0, 1}, {0, -1, 1}, {0, math.NaN(), 1}, {0, math.Inf(1), 1}, {math.NaN(), 1, 1}, {0, 1, 0}} {
		if _, err := l.Add(c[0], c[1], c[2]); err == nil {
			t.Errorf("Add%v: no error", c)
		}
	}
}

func TestSecureSourceVaries(t *testing.T) {
	l := NewLaplace(nil)
	a, _ := l.Add(0, 1, 1)
	b, _ := l.Add(0, 1, 1)
	c, _ := l.Add(0, 1, 1)
	if a == b && b == c {
		t.Fatal("secure source returned identical samples")
	}
}

func BenchmarkLaplace(b *testing.B) {
	l := NewLaplace(nil)
	for b.Loop() {
		_, _ = l.Add(10, 3, 1)
	}
}
