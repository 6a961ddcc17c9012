package baseline

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

func randomP(rng *rand.Rand, k int) [][]float64 {
	P := make([][]float64, k)
	for x := range P {
		P[x] = make([]float64, k)
		s := 0.0
		for y := range P[x] {
			P[x][y] = 0.05 + rng.Float64()
			s += P[x][y]
		}
		for y := range P[x] {
			P[x][y] /= s
		}
	}
	return P
}

// bruteGamma computes γ_ij from the definition: enumerate all sequences,
// all pairs x_{−i}, x'_{−i} differing only at j with positive probability,
// and all subsets S of values of X_i.
func bruteGamma(q []float64, P [][]float64, T, i, j int) float64 {
	k := len(q)
	n := int(math.Pow(float64(k), float64(T)))
	prob := func(seq []int) float64 {
		p := q[seq[0]]
		for t := 1; t < T; t++ {
			p *= P[seq[t-1]][seq[t]]
		}
		return p
	}
	decode := func(code int) []int {
		s := make([]int, T)
		for t := range T {
			s[t] = code % k
			code /= k
		}
		return s
	}
	// conditional of X_i given the rest, keyed by the rest
	cond := map[string][]float64{}
	key := func(s []int) string {
		b := []byte{}
		for t, v := range s {
			if t != i {
				b = append(b, byte('a'+v))
			} else {
				b = append(b, '_')
			}
		}
		return string(b)
	}
	for c := range n {
		s := decode(c)
		kk := key(s)
		if cond[kk] == nil {
			cond[kk] = make([]float64, k)
		}
		cond[kk][s[i]] += prob(s)
	}
	g := 0.0
	for k1, p1 := range cond {
		for k2, p2 := range cond {
			diff := 0
			for t := range k1 {
				if k1[t] != k2[t] {
					diff++
					if t != j {
						diff = 99
					}
				}
			}
			if diff != 1 {
				continue
			}
			z1, z2 := sum(p1), sum(p2)
			if z1 == 0 || z2 == 0 {
				continue
			}
			for S := 1; S < 1<<k; S++ {
				a, b := 0.0, 0.0
				for x := range k {
					if S>>x&1 == 1 {
						a += p1[x] / z1
						b += p2[x] / z2
					}
				}
				if a > 0 {
					g = math.Max(g, 0.5*math.Log(a/b))
				}
			}
		}
	}
	return g
}

func sum(p []float64) float64 {
	s := 0.0
	for _, v := range p {
		s += v
	}
	return s
}

func TestInfluenceMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := range 12 {
		k, T := 2+trial%2, 5
		P := randomP(rng, k)
		ch, _ := markov.New(nil, P, markov.InitStationary, nil)
		q, _ := ch.Stationary()
		lo, up, err := Influence(ch, T)
		if err != nil {
			t.Fatal(err)
		}
		for i := range T {
			if i > 0 {
				if w := bruteGamma(q, P, T, i, i-1); math.Abs(w-lo[i]) > 1e-12 {
					t.Fatalf("trial %d γ_{%d,%d}: %v, brute force %v", trial, i, i-1, lo[i], w)
				}
			}
			if i < T-1 {
				if w := bruteGamma(q, P, T, i, i+1); math.Abs(w-up[i]) > 1e-12 {
					t.Fatalf("trial %d γ_{%d,%d}: %v, brute force %v", trial, i, i+1, up[i], w)
				}
			}
		}
	}
}

func TestSpectralNormAndPhiAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for trial := range 30 {
		T := 2 + trial%17
		lo, up := make([]float64, T), make([]float64, T)
		G := mat.NewDense(T, T, nil)
		for i := range T {
			if i > 0 {
				lo[i] = 0.6 * rng.Float64()
				G.Set(i, i-1, lo[i])
			}
			if i < T-1 {
				up[i] = 0.6 * rng.Float64()
				G.Set(i, i+1, up[i])
			}
		}
		var svd mat.SVD
		svd.Factorize(G, mat.SVDNone)
		want := svd.Values(nil)[0]
		if got := spectralNorm(lo, up); math.Abs(got-want) > 1e-8*want {
			t.Fatalf("T=%d: norm %v, SVD %v", T, got, want)
		}
		if lessThanOne(lo, up) != (want < 1) {
			t.Fatalf("T=%d: lessThanOne disagrees with SVD norm %v", T, want)
		}
		if want >= 1 {
			continue
		}
		I := mat.NewDense(T, T, nil)
		for i := range T {
			I.Set(i, i, 1)
		}
		I.Sub(I, G)
		var Phi mat.Dense
		if err := Phi.Inverse(I); err != nil {
			t.Fatal(err)
		}
		m := 0.0
		for i := range T {
			m = math.Max(m, mat.Sum(Phi.RowView(i)))
		}
		got, err := phiRowSumMax(lo, up)
		if err != nil || math.Abs(got-m) > 1e-10*m {
			t.Fatalf("T=%d: Φ row sum %v, dense %v (%v)", T, got, m, err)
		}
	}
}

func TestGK16InapplicableForStrongCorrelation(t *testing.T) {
	ch, _ := markov.New(nil, [][]float64{{0.95, 0.05}, {0.05, 0.95}}, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	r, err := GK16(class, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Applicable || !math.IsInf(r.Sigma, 1) || r.SpectralNorm < 1 {
		t.Fatalf("strongly correlated chain: %+v", r)
	}
	ch2, _ := markov.New(nil, [][]float64{{0.55, 0.45}, {0.45, 0.55}}, markov.InitStationary, nil)
	class2, _ := markov.NewClass(ch2.States, ch2)
	r2, _ := GK16(class2, 100, 1)
	if !r2.Applicable || r2.Sigma < DP(1) || r2.Sigma > GroupDP(100, 1) {
		t.Fatalf("weakly correlated chain: %+v", r2)
	}
}
