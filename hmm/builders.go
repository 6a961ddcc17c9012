package hmm

import (
	"fmt"
	"math/big"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// oneShot is the HMM of a mechanism run once: one state per input, which
// emits the mechanism's output distribution dist(i) and then moves to an
// absorbing state "end" emitting the extra symbol "end". Sequences of
// length 1 carry all the information; longer ones add only "end" ([LWZ]'s
// encoding has an extra layer of noisy states and emits a neutral
// symbol first; the verdicts are the same).
func oneShot(inputs, outputs []string, dist func(i int) []*big.Rat) *Model {
	k := len(inputs) + 1
	m := &Model{States: append(append([]string(nil), inputs...), "end"), Obs: append(append([]string(nil), outputs...), "end")}
	m.Trans = make([][]Entry, k)
	m.Emit = make([][]*big.Rat, k)
	for s := range k {
		m.Trans[s] = []Entry{{To: k - 1, P: big.NewRat(1, 1)}}
		row := make([]*big.Rat, len(outputs)+1)
		if s < k-1 {
			copy(row, dist(s))
		}
		row[len(outputs)] = new(big.Rat)
		if s == k-1 {
			for o := range outputs {
				row[o] = new(big.Rat)
			}
			row[len(outputs)] = big.NewRat(1, 1)
		}
		m.Emit[s] = row
	}
	return m
}

// neighbourPairs is the differential-privacy special case: one secret
// pair per unordered pair of neighbouring inputs, each a point mass (the
// adversary knows everything but which neighbour it is). Inputs are the
// model's first states.
func neighbourPairs(inputs []string, adjacent func(i, j int) bool) []Secret {
	var out []Secret
	for i := range inputs {
		for j := i + 1; j < len(inputs); j++ {
			if adjacent(i, j) {
				out = append(out, Secret{Name: inputs[i] + " vs " + inputs[j], PiAt: i, TauAt: j})
			}
		}
	}
	return out
}

// maxGeometricRange is the largest m geometricMatrix accepts: its table has
// (m+1)² entries.
const maxGeometricRange = 2000

// geometricMatrix returns the truncated α-geometric distributions on {0..m}
// (docs/math.md §7): output z given v has probability (1−α)/(1+α)·α^|z−v| for
// 0 < z < m, α^v/(1+α) for z = 0 and α^(m−v)/(1+α) for z = m. It is
// ln(1/α)-DP for inputs that differ by one. geo[v][z]. Entries with the
// same value are one shared *big.Rat (read only): O(m) rationals behind the
// (m+1)² entries.
func geometricMatrix(alpha *big.Rat, m int) ([][]*big.Rat, error) {
	one := big.NewRat(1, 1)
	if alpha.Sign() <= 0 || alpha.Cmp(one) >= 0 {
		return nil, fmt.Errorf("hmm: geometric α = %s must be in (0, 1)", alpha.RatString())
	}
	if m < 1 {
		return nil, fmt.Errorf("hmm: geometric range {0..%d} needs m ≥ 1", m)
	}
	if m > maxGeometricRange {
		return nil, fmt.Errorf("%w: geometric range {0..%d}: at most {0..%d}", errTooLarge, m, maxGeometricRange)
	}
	onePlus := new(big.Rat).Add(one, alpha)
	mid := new(big.Rat).Quo(new(big.Rat).Sub(one, alpha), onePlus)
	// edge[d] = α^d/(1+α), inner[d] = (1−α)/(1+α)·α^d
	edge, inner := make([]*big.Rat, m+1), make([]*big.Rat, m+1)
	pow := big.NewRat(1, 1)
	for d := range m + 1 {
		edge[d] = new(big.Rat).Quo(pow, onePlus)
		inner[d] = new(big.Rat).Mul(mid, pow)
		pow = new(big.Rat).Mul(pow, alpha)
	}
	geo := make([][]*big.Rat, m+1)
	for v := range m + 1 {
		geo[v] = make([]*big.Rat, m+1)
		for z := range m + 1 {
			switch z {
			case 0:
				geo[v][z] = edge[v]
			case m:
				geo[v][z] = edge[m-v]
			default:
				geo[v][z] = inner[abs(z-v)]
			}
		}
	}
	return geo, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// GeometricMechanism is the α-geometric mechanism on {0..m} with its DP
// neighbour pairs (inputs differing by one).
func GeometricMechanism(alpha *big.Rat, m int) (*DPMechanism, error) {
	geo, err := geometricMatrix(alpha, m)
	if err != nil {
		return nil, err
	}
	outs := make([]string, m+1)
	for v := range outs {
		outs[v] = strconv.Itoa(v)
	}
	return &DPMechanism{
		Inputs: m + 1, Outputs: outs, Name: strconv.Itoa,
		Dist: func() func(int) []*big.Rat { return func(x int) []*big.Rat { return geo[x] } },
		Neighbours: func(x int, yield func(int)) {
			if x < m {
				yield(x + 1)
			}
		},
	}, nil
}

// geometricModel is GeometricMechanism as a one-shot HMM with its secrets.
func geometricModel(alpha *big.Rat, m int) (*Model, []Secret, error) {
	d, err := GeometricMechanism(alpha, m)
	if err != nil {
		return nil, nil, err
	}
	return d.Model()
}

// RandomizedResponse is binary randomized response that reports the truth
// with probability keep, with its one DP pair.
func RandomizedResponse(keep *big.Rat) (*DPMechanism, error) {
	one := big.NewRat(1, 1)
	if keep.Sign() < 0 || keep.Cmp(one) > 0 {
		return nil, fmt.Errorf("hmm: keep probability %s is not in [0, 1]", keep.RatString())
	}
	flip := new(big.Rat).Sub(one, keep)
	rows := [][]*big.Rat{{keep, flip}, {flip, keep}}
	return &DPMechanism{
		Inputs: 2, Outputs: []string{"0", "1"}, Name: strconv.Itoa,
		Dist: func() func(int) []*big.Rat { return func(x int) []*big.Rat { return rows[x] } },
		Neighbours: func(x int, yield func(int)) {
			if x == 0 {
				yield(1)
			}
		},
	}, nil
}

// randomizedResponseModel is RandomizedResponse as a one-shot HMM with its
// secret.
func randomizedResponseModel(keep *big.Rat) (*Model, []Secret, error) {
	d, err := RandomizedResponse(keep)
	if err != nil {
		return nil, nil, err
	}
	return d.Model()
}

// NoisyMaxReturns selects what Noisy Max reports.
type NoisyMaxReturns int

const (
	// ReturnIndex reports the index of a largest noisy value (the
	// smallest such index on ties): the correct Noisy Max.
	ReturnIndex NoisyMaxReturns = iota
	// ReturnValue reports the largest noisy value itself: the "wrong"
	// variant of [LWZ] Example 7.2.
	ReturnValue
)

// noisyMaxDist returns Noisy Max's output distribution for the query
// answers v (each in 0..m), with α-geometric noise geo on every answer:
// for the index, P(r) = Σ_z g_r(z)·Π_{j<r} G_j(z−1)·Π_{j>r} G_j(z) with
// G_j the noisy answer's CDF (ties go to the smallest index); for the
// value, P(max = z) = Π_j G_j(z) − Π_j G_j(z−1).
func noisyMaxDist(geo [][]*big.Rat, v []int, ret NoisyMaxReturns) []*big.Rat {
	m := len(geo) - 1
	cdf := func(j, z int) *big.Rat { // P(ṽ_j ≤ z)
		c := new(big.Rat)
		for t := 0; t <= z && t <= m; t++ {
			c.Add(c, geo[v[j]][t])
		}
		return c
	}
	n := len(v)
	if ret == ReturnValue {
		out := make([]*big.Rat, m+1)
		prev := new(big.Rat)
		for z := range m + 1 {
			p := big.NewRat(1, 1)
			for j := range n {
				p.Mul(p, cdf(j, z))
			}
			out[z] = new(big.Rat).Sub(p, prev)
			prev = p
		}
		return out
	}
	out := make([]*big.Rat, n)
	for r := range n {
		out[r] = new(big.Rat)
		for z := range m + 1 {
			p := new(big.Rat).Set(geo[v[r]][z])
			for j := range n {
				switch {
				case j < r:
					p.Mul(p, cdf(j, z-1))
				case j > r:
					p.Mul(p, cdf(j, z))
				}
			}
			out[r].Add(out[r], p)
		}
	}
	return out
}

// indexMemo computes Noisy Max's index distribution (noisyMaxDist) with
// each P(r) looked up by what it depends on: the answer v_r and how many
// answers of each value lie before r (their CDF at z − 1) and after r
// (at z). Inputs sharing those share one *big.Rat (read only), so 3^n
// inputs cost a few thousand exact sums instead of n·3^n, and their
// distributions hold pointers, not copies.
type indexMemo struct {
	geo   [][]*big.Rat
	cdf   [][]*big.Rat // cdf[a][z+1] = P(ṽ ≤ z | answer a), z = −1..m
	cache map[string]*big.Rat
	n     int
}

func newIndexMemo(geo [][]*big.Rat, n int) *indexMemo {
	m := len(geo) - 1
	c := &indexMemo{geo: geo, cache: map[string]*big.Rat{}, n: n}
	for a := range geo {
		row := []*big.Rat{new(big.Rat)}
		acc := new(big.Rat)
		for z := 0; z <= m; z++ {
			acc = new(big.Rat).Add(acc, geo[a][z])
			row = append(row, acc)
		}
		c.cdf = append(c.cdf, row)
	}
	return c
}

// value is P(r) for answer a at r with before[x] answers x before r and
// after[x] after it.
func (c *indexMemo) value(a int, before, after []int) *big.Rat {
	m := len(c.geo) - 1
	p := new(big.Rat)
	for z := range m + 1 {
		t := new(big.Rat).Set(c.geo[a][z])
		for x := range m + 1 {
			for range before[x] {
				t.Mul(t, c.cdf[x][z]) // G_x(z − 1)
			}
			for range after[x] {
				t.Mul(t, c.cdf[x][z+1]) // G_x(z)
			}
		}
		p.Add(p, t)
	}
	return p
}

func (c *indexMemo) dist(v []int) []*big.Rat {
	m := len(c.geo) - 1
	before := make([]int, m+1)
	after := make([]int, m+1)
	for _, a := range v {
		after[a]++
	}
	out := make([]*big.Rat, len(v))
	key := make([]byte, 0, 2*(m+1)+1)
	for r, a := range v {
		after[a]--
		key = key[:0]
		key = append(key, byte(a))
		for x := range m + 1 {
			key = append(key, byte(before[x]), byte(after[x]))
		}
		p, ok := c.cache[string(key)]
		if !ok {
			p = c.value(a, before, after)
			c.cache[string(key)] = p
		}
		out[r] = p
		before[a]++
	}
	return out
}

// maxIndexTable is the most keys of the tables by which a
// worker of NoisyMax's Interned finds the id and float of P(r), shared by
// the workers (1<<23 keys: 96 MB; 15 queries in 0..2 use 2.9·10⁶).
const maxIndexTable = 1 << 23

// indexTable is the size of the table of internedIndex for n queries in
// 0..m, or 0 when it exceeds maxIndexTable.
func indexTable(n, m int) int {
	size := (m + 1) * n
	for range 2 * m {
		if size > maxIndexTable/(n+1) {
			return 0
		}
		size *= n + 1
	}
	return size
}

// internedIndex is NoisyMax's index distribution by interned value
// (DPInterned). P(r) depends on (v_r, r, how many answers of each value
// lie before r and after r), which the key
//
//	a + (m+1)·(r + n·(B + W·A)),  B = Σ_{x<m} before[x]·(n+1)^x,
//	A = Σ_{x<m} after[x]·(n+1)^x,  W = (n+1)^m
//
// numbers densely (the counts of answer m follow from r). A neighbour that
// changes answer t from vt to z shifts every key by a constant: the
// after-counts for r < t, the answer for r = t, the before-counts for
// r > t. So a neighbour's ids cost one addition and one table look-up per
// output; a key seen first computes the whole input's distribution with
// indexMemo (whose pointers the ids stand for).
func internedIndex(tab *indexTables, n, m int, nb Neighbours) DPInterned {
	table, ftab, vals := tab.id, tab.f, tab.vals
	w := make([]int, m+1) // w[x] = (n+1)^x, 0 for x = m
	W := 1
	for x := range m {
		w[x] = W
		W *= n + 1
	}
	stride := (m + 1) * n // key step of B
	v := make([]int, n)
	kx := make([]int, n)
	fx := make([]float64, n)
	// the neighbour being yielded: answer t shifted, keys shifted by da
	// before t, dt at t, db after t
	var cur struct{ t, da, dt, db int }
	fy := make([]float64, n)
	return DPInterned{
		Value: func(id int32) *big.Rat { return vals[id] },
		IDs: func(o int) (int32, int32) {
			k := kx[o]
			switch {
			case o < cur.t:
				k += cur.da
			case o == cur.t:
				k += cur.dt
			default:
				k += cur.db
			}
			return table[kx[o]], table[k]
		},
		Visit: func(x int, self func([]float64), yield func(int, []float64)) {
			y := x
			A := 0
			for j := range n {
				v[j] = y % (m + 1)
				y /= m + 1
				A += w[v[j]]
			}
			B := 0
			for r, a := range v {
				A -= w[a]
				k := a + (m+1)*(r+n*(B+W*A))
				kx[r], fx[r] = k, ftab[k]
				B += w[a]
			}
			self(fx)
			weight := 1
			for t, vt := range v {
				for z := vt + 1; z <= m; z++ {
					if nb == DifferByOne && z != vt+1 {
						break
					}
					dw := w[z] - w[vt]
					da, db := stride*W*dw, stride*dw
					cur.t, cur.da, cur.dt, cur.db = t, da, z-vt, db
					for r, k := range kx[:t] {
						fy[r] = ftab[k+da]
					}
					fy[t] = ftab[kx[t]+z-vt]
					for r := t + 1; r < n; r++ {
						fy[r] = ftab[kx[r]+db]
					}
					yield(x+(z-vt)*weight, fy)
				}
				weight *= m + 1
			}
		},
	}
}

// indexTables are internedIndex's tables, computed once and shared read
// only by the workers: by key, the id and the float (internFloat) of
// P(r), and by id the rational (indexMemo.value).
type indexTables struct {
	id   []int32
	f    []float64
	vals []*big.Rat
}

// newIndexTables computes P(r) for every key (every answer a, position r
// and split of the other n − 1 answers' counts into before and after r),
// on GOMAXPROCS goroutines.
func newIndexTables(geo [][]*big.Rat, n, size int) *indexTables {
	m := len(geo) - 1
	tab := &indexTables{id: make([]int32, size), f: make([]float64, size)}
	for i := range tab.id {
		tab.id[i] = -1
	}
	W := 1
	for range m {
		W *= n + 1
	}
	type job struct {
		key, a   int
		bef, aft []int
	}
	var jobs []job
	// compositions calls f with every c in ℕ^(m+1) summing to total.
	var compositions func(c []int, i, left int, f func([]int))
	compositions = func(c []int, i, left int, f func([]int)) {
		if i == len(c)-1 {
			c[i] = left
			f(c)
			return
		}
		for k := 0; k <= left; k++ {
			c[i] = k
			compositions(c, i+1, left-k, f)
		}
	}
	bef, aft := make([]int, m+1), make([]int, m+1)
	for r := range n {
		compositions(bef, 0, r, func(bef []int) {
			compositions(aft, 0, n-1-r, func(aft []int) {
				B, A, pw := 0, 0, 1
				for x := range m {
					B += bef[x] * pw
					A += aft[x] * pw
					pw *= n + 1
				}
				for a := range m + 1 {
					key := a + (m+1)*(r+n*(B+W*A))
					tab.id[key] = int32(len(jobs))
					jobs = append(jobs, job{key, a, slices.Clone(bef), slices.Clone(aft)})
				}
			})
		})
	}
	tab.vals = make([]*big.Rat, len(jobs))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			memo := newIndexMemo(geo, n)
			for i := g; i < len(jobs); i += workers {
				j := jobs[i]
				p := memo.value(j.a, j.bef, j.aft)
				tab.vals[i], tab.f[j.key] = p, internFloat(p)
			}
		}()
	}
	wg.Wait()
	return tab
}

// valueMemo computes the reported maximum's distribution (noisyMaxDist
// with ReturnValue), which depends only on how many answers take each
// value, once per such count vector.
type valueMemo struct {
	geo   [][]*big.Rat
	cache map[string][]*big.Rat
}

func (c *valueMemo) dist(v []int) []*big.Rat {
	counts := make([]byte, len(c.geo))
	for _, a := range v {
		counts[a]++
	}
	if p, ok := c.cache[string(counts)]; ok {
		return p
	}
	p := noisyMaxDist(c.geo, v, ReturnValue)
	c.cache[string(counts)] = p
	return p
}

// maxNoisyMaxInputs is the most answer vectors ((m+1)^n) NoisyMax accepts.
const maxNoisyMaxInputs = 1 << 24

// noisyMaxInputs lists every answer vector in {0..m}^n (first coordinate
// fastest) with names like "021".
func noisyMaxInputs(n, m int) ([][]int, []string) {
	total := 1
	for range n {
		total *= m + 1
	}
	vs := make([][]int, total)
	names := make([]string, total)
	for x := range total {
		v := make([]int, n)
		var b strings.Builder
		y := x
		for j := range n {
			v[j] = y % (m + 1)
			y /= m + 1
		}
		for j := range n {
			b.WriteString(strconv.Itoa(v[j]))
		}
		vs[x], names[x] = v, b.String()
	}
	return vs, names
}

// Neighbours selects the DP neighbour relation on answer vectors.
type Neighbours int

const (
	// DifferByOne: one coordinate differs, by exactly one.
	DifferByOne Neighbours = iota
	// DifferAnyhow: one coordinate differs, by any amount.
	DifferAnyhow
)

// NoisyMax is Noisy Max over n queries with answers in {0..m} and
// α-geometric noise, with its DP neighbour pairs. Input x is the answer
// vector whose t-th answer is the base-(m+1) digit of x at weight
// (m+1)^t (first answer fastest), named like "021"; neighbours are listed
// under the input whose differing answer is smaller, by answer position
// and then the other input's answer. [LWZ]'s instance is α = 1/2, m = 2.
func NoisyMax(n, m int, alpha *big.Rat, ret NoisyMaxReturns, nb Neighbours) (*DPMechanism, error) {
	if n < 1 {
		return nil, fmt.Errorf("hmm: Noisy Max needs at least one query")
	}
	if m > 250 {
		return nil, fmt.Errorf("hmm: Noisy Max answers in 0..%d: at most 0..250", m)
	}
	geo, err := geometricMatrix(alpha, m)
	if err != nil {
		return nil, err
	}
	total := 1
	for range n {
		if total > maxNoisyMaxInputs/(m+1) {
			return nil, fmt.Errorf("%w: %d queries in 0..%d make more than %d answer vectors", errTooLarge, n, m, maxNoisyMaxInputs)
		}
		total *= m + 1
	}
	digits := func(x int, v []int) {
		for j := range n {
			v[j] = x % (m + 1)
			x /= m + 1
		}
	}
	var outs []string
	if ret == ReturnIndex {
		for r := range n {
			outs = append(outs, "index "+strconv.Itoa(r+1))
		}
	} else {
		for z := range m + 1 {
			outs = append(outs, "max "+strconv.Itoa(z))
		}
	}
	var interned func() DPInterned
	if size := indexTable(n, m); ret == ReturnIndex && size > 0 {
		tables := sync.OnceValue(func() *indexTables { return newIndexTables(geo, n, size) })
		interned = func() DPInterned { return internedIndex(tables(), n, m, nb) }
	}
	// Each input lists, per answer v_t, the larger answers z it may
	// become: m − v_t of them (any) or one unless v_t = m (by one); summed
	// over the inputs, n·(m+1)^(n−1) times Σ_v of that.
	per := int64(m) * int64(m+1) / 2
	if nb == DifferByOne {
		per = int64(m)
	}
	pairs := int64(n) * int64(total/(m+1)) * per
	return &DPMechanism{
		Inputs: total, Outputs: outs, Pairs: pairs,
		Name: func(x int) string {
			v := make([]int, n)
			digits(x, v)
			var b strings.Builder
			for _, a := range v {
				b.WriteString(strconv.Itoa(a))
			}
			return b.String()
		},
		Dist: func() func(int) []*big.Rat {
			v := make([]int, n)
			var dist func([]int) []*big.Rat
			if ret == ReturnIndex {
				dist = newIndexMemo(geo, n).dist
			} else {
				dist = (&valueMemo{geo: geo, cache: map[string][]*big.Rat{}}).dist
			}
			return func(x int) []*big.Rat {
				digits(x, v)
				return dist(v)
			}
		},
		Interned: interned,
		Neighbours: func(x int, yield func(int)) {
			w, y := 1, x
			for range n {
				vt := y % (m + 1)
				y /= m + 1
				for z := vt + 1; z <= m; z++ {
					if nb == DifferByOne && z != vt+1 {
						break
					}
					yield(x + (z-vt)*w)
				}
				w *= m + 1
			}
		},
	}, nil
}

// noisyMaxModel is NoisyMax as a one-shot HMM with its secret pairs.
func noisyMaxModel(n, m int, alpha *big.Rat, ret NoisyMaxReturns, nb Neighbours) (*Model, []Secret, error) {
	d, err := NoisyMax(n, m, alpha, ret, nb)
	if err != nil {
		return nil, nil, err
	}
	return d.Model()
}

// Example71 is [LWZ] Example 7.1 built as the paper describes it: three
// diseases A, B, C and two people (John, Alice); the input (i, j, k)
// counts the people with A, B and C (Noisy Max over these three counts
// with the ½-geometric noise on {0,1,2}, reporting the index of the
// largest, ties to the smallest index). The adversary believes each person
// has A independently with probability p1, that both or neither have B
// (both with probability p2), and knows nothing about C. The secret pair is
// "John has C" (π: k uniform on {1, 2}) against "John does not" (τ: k
// uniform on {0, 1}); [LWZ] Tables 1–2.
func Example71(p1, p2 *big.Rat) (*Model, Secret, error) {
	one := big.NewRat(1, 1)
	for _, p := range []*big.Rat{p1, p2} {
		if p.Sign() < 0 || p.Cmp(one) > 0 {
			return nil, Secret{}, fmt.Errorf("hmm: p = %s is not a probability", p.RatString())
		}
	}
	model, _, err := noisyMaxModel(3, 2, big.NewRat(1, 2), ReturnIndex, DifferByOne)
	if err != nil {
		return nil, Secret{}, err
	}
	q1 := new(big.Rat).Sub(one, p1)
	pa := []*big.Rat{new(big.Rat).Mul(q1, q1), new(big.Rat).Mul(big.NewRat(2, 1), new(big.Rat).Mul(p1, q1)), new(big.Rat).Mul(p1, p1)}
	pb := []*big.Rat{new(big.Rat).Sub(one, p2), new(big.Rat), new(big.Rat).Set(p2)}
	h := big.NewRat(1, 2)
	pcPi := []*big.Rat{new(big.Rat), h, h}
	pcTau := []*big.Rat{h, h, new(big.Rat)}
	vs, _ := noisyMaxInputs(3, 2)
	sec := Secret{Name: "John has C vs John does not", Pi: make([]*big.Rat, len(model.States)), Tau: make([]*big.Rat, len(model.States))}
	for s, v := range vs {
		ab := new(big.Rat).Mul(pa[v[0]], pb[v[1]])
		sec.Pi[s] = new(big.Rat).Mul(ab, pcPi[v[2]])
		sec.Tau[s] = new(big.Rat).Mul(ab, pcTau[v[2]])
	}
	return model, sec, nil
}

// aboveThresholdModel is discretised Above Threshold (the first step of
// Sparse Vector): a noisy threshold T̃ drawn once from the αT-geometric
// mechanism around t on {0..m}; for each query i = 1..N in turn a noisy
// answer from the αQ-geometric mechanism around its value on {0..m};
// output ⊤ and halt at the first answer ≥ T̃, ⊥ otherwise (after N ⊥ the
// run halts too). Observations are "bot", "top" and "halt". It is
// sparseVectorModel with cutoff 1.
func aboveThresholdModel(t, m int, alphaT, alphaQ *big.Rat, inputs [][]int, pairs [][2]int) (*Model, []Secret, error) {
	return sparseVectorModel(t, m, 1, alphaT, alphaQ, inputs, pairs)
}

// sparseVectorModel is discretised Sparse Vector with cutoff c (Dwork–Roth's
// Sparse): Above Threshold that, after each ⊤, draws a fresh noisy threshold
// and continues, halting after c ⊤ or N queries. Observations are "bot",
// "top" and "halt".
//
// Because an HMM's emission cannot steer its transition, each step's
// outcome is decided by the transition into a state (i, T̃, outcome, ⊤ so
// far) that then emits the outcome deterministically; a fresh threshold is
// drawn by the transition that follows a ⊤. The DP inputs (answer vectors)
// are part of the hidden state, one copy of the chain per input, so two
// inputs become two initial distributions of one model: the returned
// secrets compare every pair of inputs in pairs (indices into inputs).
func sparseVectorModel(t, m, c int, alphaT, alphaQ *big.Rat, inputs [][]int, pairs [][2]int) (*Model, []Secret, error) {
	geoT, err := geometricMatrix(alphaT, m)
	if err != nil {
		return nil, nil, err
	}
	geoQ, err := geometricMatrix(alphaQ, m)
	if err != nil {
		return nil, nil, err
	}
	if t < 0 || t > m {
		return nil, nil, fmt.Errorf("hmm: threshold %d outside 0..%d", t, m)
	}
	if c < 1 {
		return nil, nil, fmt.Errorf("hmm: cutoff %d must be at least 1", c)
	}
	if len(inputs) == 0 {
		return nil, nil, fmt.Errorf("hmm: no answer vectors")
	}
	n := len(inputs[0])
	for _, q := range inputs {
		if len(q) != n {
			return nil, nil, fmt.Errorf("hmm: answer vectors of different lengths")
		}
		for _, v := range q {
			if v < 0 || v > m {
				return nil, nil, fmt.Errorf("hmm: answer %d outside 0..%d", v, m)
			}
		}
	}
	// State layout: per input x, step i (0-based), tops so far j, threshold
	// τ, outcome o (0 = bot, 1 = top); then one shared halt state. The
	// model and one start vector per input hold about inputs × states
	// pointers.
	per := n * c * (m + 1) * 2
	if err := sparseVectorSize(len(inputs), per); err != nil {
		return nil, nil, err
	}
	one := big.NewRat(1, 1)
	// above[v][τ] = P(noisy answer ≥ τ | answer v)
	above := make([][]*big.Rat, m+1)
	for v := range above {
		above[v] = make([]*big.Rat, m+2)
		above[v][m+1] = new(big.Rat)
		for tau := m; tau >= 0; tau-- {
			above[v][tau] = new(big.Rat).Add(above[v][tau+1], geoQ[v][tau])
		}
	}
	id := func(x, i, j, tau, o int) int { return x*per + ((i*c+j)*(m+1)+tau)*2 + o }
	halt := len(inputs) * per
	model := &Model{Obs: []string{"bot", "top", "halt"}}
	model.States = make([]string, halt+1)
	model.Trans = make([][]Entry, halt+1)
	model.Emit = make([][]*big.Rat, halt+1)
	// into lists the entries for answering query i of input x with
	// threshold τ (probability w) and j tops so far.
	into := func(x, i, j, tau int, w *big.Rat) []Entry {
		pTop := above[inputs[x][i]][tau]
		return []Entry{{id(x, i, j, tau, 1), new(big.Rat).Mul(w, pTop)}, {id(x, i, j, tau, 0), new(big.Rat).Mul(w, new(big.Rat).Sub(one, pTop))}}
	}
	for x := range inputs {
		for i := range n {
			for j := range c {
				for tau := range m + 1 {
					for o := range 2 {
						s := id(x, i, j, tau, o)
						model.States[s] = fmt.Sprintf("x%d q%d tops%d T%d %s", x, i+1, j, tau, []string{"bot", "top"}[o])
						model.Emit[s] = []*big.Rat{new(big.Rat), new(big.Rat), new(big.Rat)}
						model.Emit[s][o].SetInt64(1)
						if (o == 1 && j+1 == c) || i == n-1 {
							model.Trans[s] = []Entry{{halt, big.NewRat(1, 1)}}
							continue
						}
						var es []Entry
						if o == 0 {
							es = into(x, i+1, j, tau, one)
						} else {
							for nt := range m + 1 { // fresh threshold after ⊤
								es = append(es, into(x, i+1, j+1, nt, geoT[t][nt])...)
							}
						}
						model.Trans[s] = nonzero(es)
					}
				}
			}
		}
	}
	model.States[halt] = "halt"
	model.Trans[halt] = []Entry{{halt, big.NewRat(1, 1)}}
	model.Emit[halt] = []*big.Rat{new(big.Rat), new(big.Rat), big.NewRat(1, 1)}
	// One start vector per input, shared (read only) by every secret pair
	// that involves it.
	starts := make([][]*big.Rat, len(inputs))
	start := func(x int) []*big.Rat {
		if starts[x] != nil {
			return starts[x]
		}
		d := make([]*big.Rat, halt+1)
		for tau := range m + 1 {
			for _, e := range into(x, 0, 0, tau, geoT[t][tau]) {
				d[e.To] = e.P
			}
		}
		starts[x] = d
		return d
	}
	var secrets []Secret
	for _, p := range pairs {
		secrets = append(secrets, Secret{Name: fmt.Sprintf("%v vs %v", inputs[p[0]], inputs[p[1]]), Pi: start(p[0]), Tau: start(p[1])})
	}
	return model, secrets, nil
}

func nonzero(es []Entry) []Entry {
	var out []Entry
	for _, e := range es {
		if e.P.Sign() != 0 {
			out = append(out, e)
		}
	}
	return out
}

// aboveThresholdDP builds Above Threshold over every answer vector in
// {0..m}^n with DP neighbour pairs for sensitivity-1 queries: every answer
// may change by at most one (|q_i − q'_i| ≤ 1 for all i).
func aboveThresholdDP(n, t, m int, alphaT, alphaQ *big.Rat) (*Model, []Secret, error) {
	return SparseVectorDP(n, t, m, 1, alphaT, alphaQ)
}

// maxSparseVectorCells bounds sparseVectorModel's size: answer vectors ×
// hidden states (each cell a pointer of a start vector).
const maxSparseVectorCells = 1 << 27

// sparseVectorSize refuses a Sparse Vector model of inputs answer vectors
// with per hidden states each (plus the halt state) above
// maxSparseVectorCells.
func sparseVectorSize(inputs, per int) error {
	if states := float64(inputs)*float64(per) + 1; states*float64(inputs) > maxSparseVectorCells {
		return fmt.Errorf("%w: %d answer vectors × %.0f hidden states exceed %d cells (about 1 GB); use fewer queries, a smaller range or cutoff", errTooLarge, inputs, states, int64(maxSparseVectorCells))
	}
	return nil
}

// SparseVectorDP is sparseVectorModel with cutoff c over every answer
// vector in {0..m}^n and the DP neighbour pairs of aboveThresholdDP.
func SparseVectorDP(n, t, m, c int, alphaT, alphaQ *big.Rat) (*Model, []Secret, error) {
	if n < 1 || m < 1 || c < 1 {
		return nil, nil, fmt.Errorf("hmm: Sparse Vector needs at least one query, a range 0..m with m ≥ 1 and a cutoff ≥ 1")
	}
	total := 1
	for range n {
		if total > 1<<14/(m+1) {
			return nil, nil, fmt.Errorf("%w: %d queries in 0..%d make more than %d answer vectors", errTooLarge, n, m, 1<<14)
		}
		total *= m + 1
	}
	if err := sparseVectorSize(total, n*c*(m+1)*2); err != nil {
		return nil, nil, err // before the pairs are enumerated
	}
	vs, _ := noisyMaxInputs(n, m)
	var pairs [][2]int
	for x := range vs {
		for y := x + 1; y < len(vs); y++ {
			ok := true
			for i := range n {
				ok = ok && abs(vs[x][i]-vs[y][i]) <= 1
			}
			if ok {
				pairs = append(pairs, [2]int{x, y})
			}
		}
	}
	return sparseVectorModel(t, m, c, alphaT, alphaQ, vs, pairs)
}
