package tpl

// A test-only port of the MATLAB code of [CYXX17]/[CYXX18]
// (github.com/yangcao888/TPL: calcPLbyThm.m, findSup.m,
// tools/theorem10.m, tools/sortRatioM1M2_DES.m), kept as close to the
// original as Go allows, so that the package's own implementation is
// checked against an independent computation of the same quantities.

import (
	"math"
	"sort"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// mlPairs lists the ordered pairs as VChooseK(1:n, 2) followed by its
// fliplr: (1,2),(1,3),…,(2,3),… then the reversed pairs.
func mlPairs(n int) [][2]int {
	var p [][2]int
	for i := range n {
		for j := i + 1; j < n; j++ {
			p = append(p, [2]int{i, j})
		}
	}
	m := len(p)
	for i := range m {
		p = append(p, [2]int{p[i][1], p[i][0]})
	}
	return p
}

// mlCalcPLbyThm is calcPLbyThm.m: L(a) by Theorem 4, the fixed-point loop
// that drops columns whose ratio falls below the current value.
func mlCalcPLbyThm(TM [][]float64, a float64) float64 {
	n := len(TM)
	pairs := mlPairs(n)
	QM := make([][]float64, len(pairs))
	DM := make([][]float64, len(pairs))
	ind := make([][]bool, len(pairs))
	for r, p := range pairs {
		QM[r] = append([]float64(nil), TM[p[0]]...)
		DM[r] = append([]float64(nil), TM[p[1]]...)
		ind[r] = make([]bool, n)
		for c := range n {
			ind[r][c] = QM[r][c] > DM[r][c]
			if !ind[r][c] {
				QM[r][c], DM[r][c] = 0, 0
			}
		}
	}
	count := func(b [][]bool) int {
		s := 0
		for _, row := range b {
			for _, v := range row {
				if v {
					s++
				}
			}
		}
		return s
	}
	var valArr []float64
	for {
		sizeRemain := count(ind)
		valArr = make([]float64, len(pairs))
		for r := range pairs {
			sq, sd := 0.0, 0.0
			for c := range n {
				sq += QM[r][c]
				sd += DM[r][c]
			}
			valArr[r] = (sq*(math.Exp(a)-1) + 1) / (sd*(math.Exp(a)-1) + 1)
		}
		nw := make([][]bool, len(pairs))
		for r := range pairs {
			nw[r] = make([]bool, n)
			for c := range n {
				nw[r][c] = QM[r][c]/DM[r][c] > valArr[r] // NaN > v is false, as in MATLAB
			}
		}
		if sizeRemain == count(nw) {
			break
		}
		for r := range pairs {
			for c := range n {
				if nw[r][c] != ind[r][c] {
					QM[r][c], DM[r][c] = 0, 0
				}
			}
		}
		ind = nw
	}
	mx := math.Inf(-1)
	for _, v := range valArr {
		mx = math.Max(mx, v)
	}
	return math.Log(mx)
}

// mlTheorem10 is tools/theorem10.m.
func mlTheorem10(q, d, e float64) float64 {
	const eps = 2.220446049250313e-16
	switch {
	case math.Abs(q-d) < eps:
		return e
	case d != 0:
		B := d + q*math.Exp(e) - 1
		return math.Log((math.Sqrt(4*d*math.Exp(e)*(1-q)+B*B) + B) / (2 * d))
	case q != 1 && e <= math.Log(1/q):
		return math.Log((1 - q) * math.Exp(e) / (1 - q*math.Exp(e)))
	}
	return math.Inf(1)
}

// mlFindSup is findSup.m with qM, dM computed inside (sortRatioM1M2_DES
// then cumsum; NaN ratios placed last).
func mlFindSup(TM [][]float64, e float64) float64 {
	n := len(TM)
	maxSup := -1.0
	found := false
	for _, p := range mlPairs(n) {
		q, d := TM[p[0]], TM[p[1]]
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		ratio := func(c int) float64 { return q[c] / d[c] }
		sort.SliceStable(idx, func(i, j int) bool {
			ri, rj := ratio(idx[i]), ratio(idx[j])
			if math.IsNaN(rj) {
				return !math.IsNaN(ri)
			}
			if math.IsNaN(ri) {
				return false
			}
			return ri > rj
		})
		cq, cd := 0.0, 0.0
		for _, c := range idx {
			cq += q[c]
			cd += d[c]
			if q[c] > d[c] {
				found = true
				if s := mlTheorem10(cq, cd, e); s > maxSup {
					maxSup = s
				}
			}
		}
	}
	if !found {
		return e
	}
	return maxSup
}

// mlTPLConstSup is the constant per-step budget whose unbounded-stream TPL
// (sup BPL + sup FPL − e, [CYXX18] Thm 10) equals alpha, by bisection.
func mlTPLConstSup(TMB, TMF [][]float64, alpha float64) float64 {
	lo, hi := 0.0, alpha
	for range 200 {
		e := (lo + hi) / 2
		if mlFindSup(TMB, e)+mlFindSup(TMF, e)-e <= alpha {
			lo = e
		} else {
			hi = e
		}
	}
	return lo
}

// mlTPLConstFinite is the constant budget whose finite-T TPL
// (max_t BPL_t + FPL_t − e, BPL and FPL by calcPLbyThm) equals alpha.
func mlTPLConstFinite(TMB, TMF [][]float64, T int, alpha float64) float64 {
	tpl := func(e float64) float64 {
		bpl := make([]float64, T)
		fpl := make([]float64, T)
		bpl[0] = e
		for t := 1; t < T; t++ {
			bpl[t] = mlCalcPLbyThm(TMB, bpl[t-1]) + e
		}
		fpl[T-1] = e
		for t := T - 2; t >= 0; t-- {
			fpl[t] = mlCalcPLbyThm(TMF, fpl[t+1]) + e
		}
		m := 0.0
		for t := range T {
			m = math.Max(m, bpl[t]+fpl[t]-e)
		}
		return m
	}
	lo, hi := 0.0, alpha
	for range 100 {
		e := (lo + hi) / 2
		if tpl(e) <= alpha {
			lo = e
		} else {
			hi = e
		}
	}
	return lo
}

var (
	chain1 = [][]float64{{0.8, 0.2}, {0.1, 0.9}}
	chain2 = [][]float64{{0.95, 0.05}, {0.05, 0.95}}
	chain3 = [][]float64{{.7, .1, .1, .1}, {.1, .7, .1, .1}, {.1, .1, .7, .1}, {.1, .1, .1, .7}}
)

func stationaryClass(t *testing.T, P [][]float64) (*markov.Class, [][]float64) {
	t.Helper()
	ch, err := markov.New(nil, P, markov.InitStationary, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := markov.NewClass(ch.States, ch)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := ch.Reversal()
	if err != nil {
		t.Fatal(err)
	}
	return cl, rev
}

// TestMatlabPortReproducesTable: the per-bin scales of issue 28's table,
// computed by the port of the authors' code (2/ε for the constant
// allocation ε), and the package's Calibrate on the same chains.
func TestMatlabPortReproducesTable(t *testing.T) {
	cases := []struct {
		name string
		P    [][]float64
		T    int
		want float64 // per-bin scale at α = 1, two decimals
	}{
		{"chain1 sup", chain1, 0, 11.83},
		{"chain2 sup", chain2, 0, 36.47},
		{"4-state sup", chain3, 0, 8.70},
		{"chain1 T=10", chain1, 10, 9.67},
	}
	for _, c := range cases {
		cl, rev := stationaryClass(t, c.P)
		var e float64
		if c.T == 0 {
			e = mlTPLConstSup(rev, c.P, 1)
		} else {
			e = mlTPLConstFinite(rev, c.P, c.T, 1)
		}
		port := 2 / e
		if math.Abs(port-c.want) > 0.005 {
			t.Errorf("%s: port gives per-bin scale %.4f, issue table %.2f", c.name, port, c.want)
		}
		b, info, err := Calibrate(cl, c.T, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b < port*(1-1e-6) || b > port*(1+1e-6) {
			t.Errorf("%s: Calibrate %.9f, port %.9f", c.name, b, port)
		}
		if info.Loss > 1 {
			t.Errorf("%s: loss %v > 1 at the calibrated scale", c.name, info.Loss)
		}
	}
}

// TestMatlabPortStepByStep: the authors' testFindSup.m check — Theorem 10's
// supremum equals the limit of the step-by-step recursion — and the
// package's λ equals calcPLbyThm on random matrices (k = 2..6), both
// computed by the port.
func TestMatlabPortStepByStep(t *testing.T) {
	rng := newRand(7)
	for k := 2; k <= 6; k++ {
		for range 8 {
			P := randomStochastic(rng, k, 1)
			kn := newKernel(rowsOf(P), nil, 0, nil)
			for _, a := range []float64{0.05, 0.3, 1, 3} {
				want := mlCalcPLbyThm(P, a)
				if got := kn.max(a); math.Abs(got-want) > 1e-12*math.Max(1, want) {
					t.Fatalf("k=%d a=%v: λ %v, calcPLbyThm %v (P=%v)", k, a, got, want, P)
				}
			}
			for _, e := range []float64{0.01, 0.1, 0.5} {
				sup := mlFindSup(P, e)
				x := e
				for range 3000 {
					nx := mlCalcPLbyThm(P, x) + e
					if nx-x < 1e-15 {
						x = nx
						break
					}
					x = nx
				}
				// the iteration approaches the supremum from below
				if x > sup*(1+1e-9) || math.Abs(sup-x) > 1e-6*math.Max(1, x) {
					t.Fatalf("k=%d e=%v: findSup %v, iteration %v", k, e, sup, x)
				}
				if got := kn.sup(e); math.Abs(got-sup) > 1e-9*math.Max(1, sup) {
					t.Fatalf("k=%d e=%v: sup %v, findSup %v", k, e, got, sup)
				}
			}
		}
	}
}
