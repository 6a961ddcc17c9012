package noise

import (
	"math"
	"math/big"
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

// The snapped mechanism M(x) = round(x/g)·g + g·K, P(K=k) ∝ exp(−λ|k|), must
// satisfy the Laplace guarantee for every input shift s ≥ unit:
// P(M(x)=w) ≤ exp(s/b)·P(M(x')=w) at every output w. Its output pmf is exact
// on the grid, so the ratio is enumerated over outputs around the two
// rounded centres.
func TestSnappedNoiseLikelihoodRatio(t *testing.T) {
	check := func(x, xp, b, unit float64) {
		t.Helper()
		s := math.Abs(x - xp)
		g := Granularity(b)
		lambda := g / EffectiveScale(b, unit)
		c, cp := int64(math.Round(x/g)), int64(math.Round(xp/g))
		// log ratio λ(|m−c'|−|m−c|) is piecewise linear in m with breaks at
		// c and c', so outputs around the two centres cover its maximum.
		worst := math.Inf(-1)
		for _, centre := range []int64{c, cp} {
			for m := centre - 3; m <= centre+3; m++ {
				worst = math.Max(worst, lambda*float64(abs64(m-cp)-abs64(m-c)))
			}
		}
		if worst > s/b*(1+1e-15) {
			t.Fatalf("x=%v x'=%v (s=%v ≥ unit %v): log ratio %v > s/b = %v", x, xp, s, unit, worst, s/b)
		}
	}
	// Adversarial: x rounds down, x' rounds up, s just above unit.
	b, unit := 7.0, 2.0
	g := Granularity(b)
	x := 10 + 0.49*g
	check(x, x+unit+0.02*g, b, unit)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		b := math.Exp(rng.Float64()*20 - 10)
		unit := b * math.Exp(rng.Float64()*6-3)
		g := Granularity(b)
		x := (rng.Float64() - 0.5) * 1000 * g
		check(x, x+unit*(1+rng.Float64()*3), b, unit)
		check(x, x+unit, b, unit)
	}
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestScaleForNeverRoundsDown(t *testing.T) {
	for _, c := range [][2]float64{{81.51706979055051, 2}, {0.1, 0.3}, {1.0 / 3, 2.0 / 4770}, {5, 0}} {
		b := ScaleFor(c[0], c[1])
		exact := new(big.Float).SetPrec(200).Mul(big.NewFloat(c[0]).SetPrec(200), big.NewFloat(c[1]).SetPrec(200))
		if new(big.Float).SetFloat64(b).Cmp(exact) < 0 {
			t.Fatalf("ScaleFor(%v, %v) = %v below the exact product %v", c[0], c[1], b, exact)
		}
		if b > math.Nextafter(c[0]*c[1], math.Inf(1)) {
			t.Fatalf("ScaleFor(%v, %v) = %v more than one ulp up", c[0], c[1], b)
		}
	}
}

func TestReleaseLipschitzZeroIsExact(t *testing.T) {
	l := NewLaplace(nil)
	out, err := l.Release([]float64{1, 2}, 3, 0)
	if err != nil || out[0] != 1 || out[1] != 2 {
		t.Fatalf("%v %v", out, err)
	}
	if _, err := l.Release([]float64{1}, 3, math.NaN()); err == nil {
		t.Fatal("NaN Lipschitz constant accepted")
	}
}

// A vector release's loss is the sum of its coordinates' worst log
// ratios (independent noise), and the Markov Quilt Mechanism's proof needs
// it at most c·L/b when the query moves by at most c·L in L1. A count
// histogram moves two bins by 1 per reading: once g > 1 each such shift
// can snap to g, so sampling at unit L (as Release did) lost up to
// 2·g/(b·(1 + g/2)) — 3.2/b at g = 8 — against 2/b; at unit L/d it never
// exceeds c·L/b. Enumerated exactly for counts (g from 1/2 to 1024, every
// pair of integer centres of two moving bins) and relative frequencies.
func TestReleaseVectorSnapping(t *testing.T) {
	worst := func(x, xp, b, unit float64) float64 {
		g := Granularity(b)
		lambda := g / EffectiveScale(b, unit)
		c, cp := int64(math.Round(x/g)), int64(math.Round(xp/g))
		return lambda * float64(abs64(c-cp)) // the log ratio's maximum over outputs
	}
	for _, d := range []int{2, 4, 51} {
		for _, b := range []float64{0x1p39, 0x1p41, 0x1p43, 0x1p48, 9e14} {
			const L = 2.0 // counts: one reading moves two bins by 1
			unit := Unit(L, d)
			for x := range 40 {
				for y := range 40 {
					// one reading moves from bin 0 (x+1 → x) to bin 1 (y → y+1)
					loss := worst(float64(x+1), float64(x), b, unit) + worst(float64(y), float64(y+1), b, unit)
					if loss > L/b*(1+1e-12) {
						t.Fatalf("d=%d b=%g counts %d,%d: loss %v > L/b = %v", d, b, x, y, loss, L/b)
					}
				}
			}
		}
	}
	// the old unit (L) fails the same check: the test can fail
	b := 0x1p43
	if loss := 2 * (Granularity(b) / EffectiveScale(b, 2)); loss <= 2/b {
		t.Fatalf("unit L: loss %v within 2/b: the check above could not fail", loss)
	}
	// relative frequencies c/N: L = 2/N, each moving bin shifts by 1/N
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		N := 1 + rng.IntN(5000)
		d := 2 + rng.IntN(60)
		L := 2 / float64(N)
		b := L * math.Exp(rng.Float64()*80-10)
		x, y := rng.IntN(N), rng.IntN(N)
		unit := Unit(L, d)
		n := float64(N)
		loss := worst(float64(x+1)/n, float64(x)/n, b, unit) + worst(float64(y)/n, float64(y+1)/n, b, unit)
		if loss > L/b*(1+1e-12) {
			t.Fatalf("N=%d d=%d b=%g: loss %v > L/b = %v", N, d, b, loss, L/b)
		}
	}
}

func TestUnitRoundsDown(t *testing.T) {
	for _, c := range []struct {
		l float64
		d int
	}{{2, 3}, {0.1, 7}, {2.0 / 4770, 51}, {4, 36}, {1, 1}} {
		u := Unit(c.l, c.d)
		if new(big.Float).SetPrec(200).Mul(big.NewFloat(u), big.NewFloat(float64(c.d))).Cmp(big.NewFloat(c.l)) > 0 {
			t.Fatalf("Unit(%v, %d) = %v: d·unit above L", c.l, c.d, u)
		}
	}
}
