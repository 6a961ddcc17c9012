package estimate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bisect is the projection onto {c ≥ 0, Σ c = n} computed independently
// of Simplex: τ by bisection on the decreasing function
// f(τ) = Σ max(y_i − τ, 0) − n, which is n at… f(min y − n/k) ≥ 0 and
// f(max y) = −n ≤ 0.
func bisect(y []float64, n float64) []float64 {
	f := func(tau float64) float64 {
		s := 0.0
		for _, v := range y {
			s += max(v-tau, 0)
		}
		return s - n
	}
	lo, hi := slices.Min(y)-n/float64(len(y))-1, slices.Max(y)
	for range 200 {
		mid := (lo + hi) / 2
		if f(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	c := make([]float64, len(y))
	for i, v := range y {
		c[i] = max(v-(lo+hi)/2, 0)
	}
	return c
}

func randomVector(r *rand.Rand) ([]float64, float64) {
	k := 1 + r.IntN(12)
	y := make([]float64, k)
	scale := []float64{0.01, 1, 100, 1e4}[r.IntN(4)]
	for i := range y {
		y[i] = (r.Float64()*2 - 0.5) * scale
		if r.IntN(5) == 0 {
			y[i] = math.Round(y[i]) // ties
		}
	}
	if r.IntN(6) == 0 {
		y = append(y, y[0]) // repeated values
	}
	n := math.Round(r.Float64() * scale * float64(k) / 2)
	if r.IntN(8) == 0 {
		n = 0
	}
	return y, n
}

func dist2(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s
}

// The projection satisfies its constraints, the KKT conditions (one τ with
// c_i = y_i − τ where c_i > 0 and y_i ≤ τ where c_i = 0), matches the
// bisection, is idempotent, and no random point of the simplex is closer
// to y.
func TestSimplexProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for it := range 3000 {
		y, n := randomVector(r)
		c, err := Simplex(y, n)
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-9 * (1 + n + slices.Max(y) - slices.Min(y))
		sum := 0.0
		for _, v := range c {
			if v < 0 {
				t.Fatalf("%d: negative estimate %v of %v", it, c, y)
			}
			sum += v
		}
		if math.Abs(sum-n) > tol {
			t.Fatalf("%d: estimate %v sums to %v, want %v", it, c, sum, n)
		}
		// KKT: τ from the positive coordinates
		tau := math.NaN()
		for i := range c {
			if c[i] > 0 {
				if math.IsNaN(tau) {
					tau = y[i] - c[i]
				} else if math.Abs(y[i]-c[i]-tau) > tol {
					t.Fatalf("%d: y − c differs on the support: %v %v", it, y, c)
				}
			}
		}
		for i := range c {
			if c[i] == 0 && !math.IsNaN(tau) && y[i] > tau+tol {
				t.Fatalf("%d: bin %d is 0 though y = %v > τ = %v", it, i, y[i], tau)
			}
		}
		b := bisect(y, n)
		for i := range c {
			if math.Abs(b[i]-c[i]) > 1e-6*(1+math.Abs(c[i])) {
				t.Fatalf("%d: sort %v, bisection %v (y %v, n %v)", it, c, b, y, n)
			}
		}
		cc, _ := Simplex(c, n)
		for i := range c {
			if math.Abs(cc[i]-c[i]) > tol {
				t.Fatalf("%d: not idempotent: %v then %v", it, c, cc)
			}
		}
		d := dist2(c, y)
		for range 20 {
			p := make([]float64, len(y))
			s := 0.0
			for i := range p {
				p[i] = r.ExpFloat64()
				s += p[i]
			}
			for i := range p {
				p[i] *= n / s
			}
			if dist2(p, y) < d*(1-1e-12)-tol*tol {
				t.Fatalf("%d: %v is closer to %v than the projection %v", it, p, y, c)
			}
		}
	}
}

// AtMost is the orthant's projection when that sums to at most n, the
// simplex's otherwise; it satisfies its KKT conditions (τ ≥ 0 with
// complementary slackness) and no random point of {c ≥ 0, Σ c ≤ n} is
// closer.
func TestAtMostProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for it := range 3000 {
		y, n := randomVector(r)
		c, err := AtMost(y, n)
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-9 * (1 + n + slices.Max(y) - slices.Min(y))
		sum := 0.0
		for _, v := range c {
			if v < 0 {
				t.Fatalf("%d: negative %v", it, c)
			}
			sum += v
		}
		if sum > n+tol {
			t.Fatalf("%d: %v sums to %v > %v", it, c, sum, n)
		}
		// c_i = max(y_i − τ, 0) with τ ≥ 0, and τ > 0 only if Σ c = n
		tau := max(0, slices.Max(y)) // every bin 0: any τ ≥ max y
		for i := range c {
			if c[i] > 0 {
				tau = y[i] - c[i]
			}
		}
		if tau < -tol || (tau > tol && math.Abs(sum-n) > tol) {
			t.Fatalf("%d: KKT fails: τ %v, sum %v, n %v", it, tau, sum, n)
		}
		for i := range c {
			if math.Abs(c[i]-max(y[i]-tau, 0)) > tol {
				t.Fatalf("%d: c %v is not max(y − %v, 0) of %v", it, c, tau, y)
			}
		}
		d := dist2(c, y)
		for range 20 {
			p := make([]float64, len(y))
			s := 0.0
			for i := range p {
				p[i] = r.ExpFloat64()
				s += p[i]
			}
			f := r.Float64()
			for i := range p {
				p[i] *= f * n / s
			}
			if dist2(p, y) < d*(1-1e-12)-tol*tol {
				t.Fatalf("%d: %v is closer to %v than %v", it, p, y, c)
			}
		}
	}
}

// Worked values: the projection is checked by hand.
func TestSimplexByHand(t *testing.T) {
	for _, tc := range []struct {
		y    []float64
		n    float64
		want []float64
	}{
		{[]float64{-700, 1500, 30}, 1000, []float64{0, 1000, 0}}, // τ = 500
		{[]float64{600, 500, -3}, 1000, []float64{550, 450, 0}},  // τ = 50
		{[]float64{10, 10}, 10, []float64{5, 5}},                 // τ = 5
		{[]float64{-5, -7}, 4, []float64{3, 1}},                  // τ = −8
		{[]float64{3, 1}, 0, []float64{0, 0}},                    // n = 0
		{[]float64{2.5, 2.5, 0}, 5, []float64{2.5, 2.5, 0}},      // already there
	} {
		c, err := Simplex(tc.y, tc.n)
		if err != nil || !slices.Equal(c, tc.want) {
			t.Errorf("Simplex(%v, %v) = %v, %v; want %v", tc.y, tc.n, c, err, tc.want)
		}
	}
	if c, _ := AtMost([]float64{-3, 2, 1}, 10); !slices.Equal(c, []float64{0, 2, 1}) {
		t.Errorf("AtMost below the cap: %v", c)
	}
	if c, _ := AtMost([]float64{-3, 8, 6}, 10); !slices.Equal(c, []float64{0, 6, 4}) {
		t.Errorf("AtMost over the cap: %v", c)
	}
	if Clamp(-2, 0, 10) != 0 || Clamp(12, 0, 10) != 10 || Clamp(3, 0, 10) != 3 {
		t.Error("Clamp")
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		y []float64
		n float64
	}{{[]float64{1}, -1}, {[]float64{1}, math.NaN()}, {[]float64{1}, math.Inf(1)}, {[]float64{math.NaN()}, 1}, {nil, 1}} {
		if _, err := Simplex(tc.y, tc.n); err == nil {
			t.Errorf("Simplex(%v, %v): no error", tc.y, tc.n)
		}
	}
	if _, err := AtMost([]float64{math.Inf(-1)}, 1); err == nil {
		t.Error("AtMost of −Inf: no error")
	}
}
