package hmm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

func randRat(rng *rand.Rand, k int, zeros bool) []*big.Rat {
	w := make([]int64, k)
	var s int64
	for i := range w {
		w[i] = 1 + rng.Int64N(6)
		if zeros && rng.IntN(3) == 0 {
			w[i] = 0
		}
		s += w[i]
	}
	if s == 0 {
		w[0], s = 1, 1
	}
	out := make([]*big.Rat, k)
	for i := range out {
		out[i] = big.NewRat(w[i], s)
	}
	return out
}

// bruteLoss enumerates every observation sequence of lengths 1..n and
// every hidden path: the definition, without forward vectors or pruning.
func bruteLoss(m *Model, sec Secret, n int) (*big.Rat, bool) {
	k, obs := len(m.States), len(m.Obs)
	P := make([][]*big.Rat, k)
	for s := range P {
		P[s] = make([]*big.Rat, k)
		for t := range P[s] {
			P[s][t] = new(big.Rat)
		}
		for _, e := range m.Trans[s] {
			P[s][e.To] = e.P
		}
	}
	prob := func(init []*big.Rat, w []int) *big.Rat {
		total := new(big.Rat)
		path := make([]int, len(w))
		var rec func(t int, p *big.Rat)
		rec = func(t int, p *big.Rat) {
			if p.Sign() == 0 {
				return
			}
			if t == len(w) {
				total.Add(total, p)
				return
			}
			for s := range k {
				var q *big.Rat
				if t == 0 {
					q = new(big.Rat).Mul(init[s], m.Emit[s][w[t]])
				} else {
					q = new(big.Rat).Mul(p, P[path[t-1]][s])
					q.Mul(q, m.Emit[s][w[t]])
				}
				path[t] = s
				rec(t+1, q)
			}
		}
		rec(0, big.NewRat(1, 1))
		return total
	}
	best := big.NewRat(1, 1)
	for L := 1; L <= n; L++ {
		total := 1
		for range L {
			total *= obs
		}
		for x := range total {
			w := make([]int, L)
			for t, y := 0, x; t < L; t++ {
				w[t], y = y%obs, y/obs
			}
			a, b := prob(sec.Pi, w), prob(sec.Tau, w)
			if a.Sign() == 0 && b.Sign() == 0 {
				continue
			}
			if a.Sign() == 0 || b.Sign() == 0 {
				return nil, true
			}
			for _, r := range []*big.Rat{new(big.Rat).Quo(a, b), new(big.Rat).Quo(b, a)} {
				if r.Cmp(best) > 0 {
					best = r
				}
			}
		}
	}
	return best, false
}

// The pruned, parallel prefix-tree search returns exactly the brute-force
// loss on random multi-step HMMs, with and without structural zeros.
func TestLossMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 40 {
		m, sec, n := randomModel(rng, trial)
		r, err := Loss(m, []Secret{sec}, n)
		if err != nil {
			t.Fatal(err)
		}
		want, inf := bruteLoss(m, sec, n)
		if inf != (r.Ratio == nil) || (!inf && want.Cmp(r.Ratio) != 0) {
			t.Fatalf("trial %d: search %v (inf %v), brute force %v (inf %v)", trial, r.Ratio, r.Ratio == nil, want, inf)
		}
		if !inf && len(r.Witness) > 0 {
			// the witness attains the ratio
			w, _ := bruteLossOne(m, sec, r.Witness)
			if w.Cmp(r.Ratio) != 0 {
				t.Fatalf("trial %d: witness %v gives %v, not %v", trial, r.Witness, w, r.Ratio)
			}
		}
	}
}

// randomModel draws a random HMM with k = 2..4 states, 2..3 observations,
// structural zeros on some trials, a random secret pair and a length 1..5.
func randomModel(rng *rand.Rand, trial int) (*Model, Secret, int) {
	{
		k, obs := 2+trial%3, 2+trial%2
		zeros := trial%3 == 1
		m := &Model{}
		for s := range k {
			m.States = append(m.States, string(rune('a'+s)))
			row := randRat(rng, k, zeros)
			var es []Entry
			for t, p := range row {
				if p.Sign() != 0 {
					es = append(es, Entry{To: t, P: p})
				}
			}
			m.Trans = append(m.Trans, es)
			m.Emit = append(m.Emit, randRat(rng, obs, zeros && trial%2 == 0))
		}
		for o := range obs {
			m.Obs = append(m.Obs, string(rune('x'+o)))
		}
		sec := Secret{Name: "s", Pi: randRat(rng, k, false), Tau: randRat(rng, k, false)}
		return m, sec, 1 + trial%5
	}
}

// bruteLossOne is the ratio of one sequence by a dense rational forward pass.
func bruteLossOne(m *Model, sec Secret, w []int) (*big.Rat, bool) {
	// forward in rationals, directly
	f := func(init []*big.Rat) *big.Rat {
		v := make([]*big.Rat, len(m.States))
		for s := range v {
			v[s] = new(big.Rat).Mul(init[s], m.Emit[s][w[0]])
		}
		for t := 1; t < len(w); t++ {
			nv := make([]*big.Rat, len(v))
			for s := range nv {
				nv[s] = new(big.Rat)
			}
			for s := range v {
				for _, e := range m.Trans[s] {
					nv[e.To].Add(nv[e.To], new(big.Rat).Mul(v[s], e.P))
				}
			}
			for s := range nv {
				nv[s].Mul(nv[s], m.Emit[s][w[t]])
			}
			v = nv
		}
		tot := new(big.Rat)
		for _, x := range v {
			tot.Add(tot, x)
		}
		return tot
	}
	a, b := f(sec.Pi), f(sec.Tau)
	if a.Cmp(b) < 0 {
		a, b = b, a
	}
	return new(big.Rat).Quo(a, b), true
}

func TestParseEpsilon(t *testing.T) {
	e, err := ParseEpsilon("ln(2)")
	if err != nil || !e.Exact() || e.Lo.RatString() != "2" {
		t.Fatalf("ln(2): %+v %v", e, err)
	}
	e, _ = ParseEpsilon("ln(3/2)")
	if e.Lo.RatString() != "3/2" {
		t.Fatalf("ln(3/2): %v", e.Lo)
	}
	for _, x := range []string{"0.5", "1", "1/3", "7.25", "40"} {
		e, err := ParseEpsilon(x)
		if err != nil {
			t.Fatal(err)
		}
		lo, _ := e.Lo.Float64()
		hi, _ := e.Hi.Float64()
		want := math.Exp(e.Value)
		if e.Exact() || !(lo <= want*(1+1e-15)) || !(hi >= want*(1-1e-15)) {
			t.Errorf("%s: [%v, %v] vs %v", x, lo, hi, want)
		}
		gap := new(big.Rat).Sub(e.Hi, e.Lo)
		if g, _ := gap.Float64(); g > 1e-60*want {
			t.Errorf("%s: enclosure width %v", x, g)
		}
	}
	for _, bad := range []string{"0", "-1", "ln(1)", "ln(1/2)", "abc", "ln(x)"} {
		if _, err := ParseEpsilon(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Model files: errors name the file and entry; a parametrised model with
// a prior and two events matches brute force, and parameters can be set.
func TestModelFile(t *testing.T) {
	// Bad files name the problem.
	for _, c := range []struct{ body, msg string }{
		{`{"states": ["a"], "observations": ["x"], "transition": [["1/2"]], "emission": [[1]], "secrets": [{"pi": [1], "tau": [1]}]}`, `transition row of state "a" sums to 1/2`},
		{`{"states": ["a"], "observations": ["x"], "transition": [[1]], "emission": [["q"]], "secrets": [{"pi": [1], "tau": [1]}]}`, `emission of "x" by state "a"`},
		{`{"states": ["a"], "observations": ["x"], "transition": [[1]], "emission": [[1]], "secrets": [{"pi": [1], "tau": [1]}], "extra": 1}`, `unknown field`},
		{`{"states": ["a","b"], "observations": ["x"], "transition": [[1,0],[0,1]], "emission": [[1],[1]], "prior": [1, 0], "secrets": [{"pi_event": ["a"], "tau_event": ["b"]}]}`, `probability zero`},
	} {
		f, err := parseFile(strings.NewReader(c.body), "m.json")
		if err == nil {
			_, _, err = f.Build("m.json", nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "m.json") {
			t.Errorf("want an error containing %q, got %v", c.msg, err)
		}
	}
	// A two-state model with a parameter, built and swept.
	body := `{"states": ["h", "s"], "observations": ["ok", "cough"], "parameters": {"p": "1/10"},
	  "transition": [["1-p", "p"], ["p", "1-p"]], "emission": [["3/4", "1/4"], ["1/4", "3/4"]],
	  "prior": ["1/2", "1/2"], "secrets": [{"name": "sick", "pi_event": ["s"], "tau_event": ["h"]}]}`
	f, err := parseFile(strings.NewReader(body), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	m, secs, err := f.Build("m.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Loss(m, secs, 4)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := bruteLoss(m, secs[0], 4)
	if b.Cmp(r.Ratio) != 0 {
		t.Fatalf("file model: %v vs brute %v", r.Ratio, b)
	}
	m2, secs2, err := f.Build("m.json", map[string]*big.Rat{"p": big.NewRat(1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := Loss(m2, secs2, 4)
	if r2.Ratio.RatString() != "3" { // p = 1/2: readings independent, one emission ratio 3
		t.Fatalf("p = 1/2: ratio %v", r2.Ratio)
	}
	if _, _, err := f.Build("m.json", map[string]*big.Rat{"q": big.NewRat(1, 2)}); err == nil {
		t.Error("unknown parameter accepted")
	}
}
