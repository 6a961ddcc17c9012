package markov

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// RowTol is the tolerance within which every row of a transition matrix and
// every given initial distribution must sum to 1.
const RowTol = 1e-9

// InitKind says which initial distributions a Chain stands for.
type InitKind int

const (
	// InitGiven: one fixed initial distribution q.
	InitGiven InitKind = iota
	// InitStationary: q = π, the stationary distribution of P.
	InitStationary
	// InitAny: every initial distribution on the simplex (docs/math.md §4.2,
	// [SWC17] App. C.4). Influences are suprema over q.
	InitAny
)

func (k InitKind) String() string {
	switch k {
	case InitGiven:
		return "given"
	case InitStationary:
		return "stationary"
	case InitAny:
		return "any"
	}
	return fmt.Sprintf("InitKind(%d)", int(k))
}

// Chain is a Markov chain θ = (q, P) over len(States) states.
type Chain struct {
	States []string    // state names, len k
	P      [][]float64 // k×k row-stochastic transition matrix
	Init   InitKind
	Q      []float64 // initial distribution when Init == InitGiven, else nil
}

// ErrNotIrreducible and ErrPeriodic are returned (wrapped) by computations
// that need an ergodic chain.
var (
	ErrNotIrreducible = errors.New("chain is not irreducible")
	ErrPeriodic       = errors.New("chain is periodic")
)

// New validates P (and q when kind is InitGiven) and returns a chain that
// owns copies of them. states may be nil, in which case states are named
// "0".."k-1".
func New(states []string, P [][]float64, kind InitKind, q []float64) (*Chain, error) {
	k := len(P)
	if k == 0 {
		return nil, errors.New("transition matrix is empty")
	}
	if states == nil {
		states = make([]string, k)
		for i := range states {
			states[i] = fmt.Sprint(i)
		}
	}
	if len(states) != k {
		return nil, fmt.Errorf("%d state names but the transition matrix has %d rows", len(states), k)
	}
	seen := map[string]bool{}
	for i, s := range states {
		if seen[s] {
			return nil, fmt.Errorf("state %d: duplicate name %q", i, s)
		}
		seen[s] = true
	}
	c := &Chain{States: append([]string(nil), states...), Init: kind, P: make([][]float64, k)}
	for i, row := range P {
		if len(row) != k {
			return nil, fmt.Errorf("transition row %d: has %d entries, want %d", i, len(row), k)
		}
		if err := checkDist(row); err != nil {
			return nil, fmt.Errorf("transition row %d (state %q): %w", i, states[i], err)
		}
		c.P[i] = append([]float64(nil), row...)
	}
	switch kind {
	case InitGiven:
		if len(q) != k {
			return nil, fmt.Errorf("initial distribution has %d entries, want %d", len(q), k)
		}
		if err := checkDist(q); err != nil {
			return nil, fmt.Errorf("initial distribution: %w", err)
		}
		c.Q = append([]float64(nil), q...)
	case InitStationary, InitAny:
		if q != nil {
			return nil, fmt.Errorf("initial distribution given with kind %v", kind)
		}
	default:
		return nil, fmt.Errorf("unknown initial kind %d", int(kind))
	}
	return c, nil
}

func checkDist(p []float64) error {
	sum := 0.0
	for j, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("entry %d is %v, want a finite probability", j, v)
		}
		if v < 0 || v > 1 {
			return fmt.Errorf("entry %d is %v, want a probability in [0, 1]", j, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > RowTol {
		return fmt.Errorf("sums to %.12g, want 1 (tolerance %g)", sum, RowTol)
	}
	return nil
}

// K is the number of states.
func (c *Chain) K() int { return len(c.P) }

// Dense returns P as a gonum matrix (a copy).
func (c *Chain) Dense() *mat.Dense {
	k := c.K()
	m := mat.NewDense(k, k, nil)
	for i, row := range c.P {
		m.SetRow(i, row)
	}
	return m
}

// Reachable reports, for every pair (x, y), whether y can be reached from x
// in one or more steps. Exact (graph search on the zero pattern).
func (c *Chain) Reachable() [][]bool {
	k := c.K()
	r := make([][]bool, k)
	for x := range k {
		r[x] = make([]bool, k)
		stack := []int{}
		for y := range k {
			if c.P[x][y] > 0 && !r[x][y] {
				r[x][y] = true
				stack = append(stack, y)
			}
		}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for y := range k {
				if c.P[u][y] > 0 && !r[x][y] {
					r[x][y] = true
					stack = append(stack, y)
				}
			}
		}
	}
	return r
}

// Irreducible reports whether every state reaches every state. Exact:
// every state reaches every state exactly when state 0 reaches every state
// and every state reaches state 0 (a path x → 0 → y; for one state, its
// row sums to 1, so it reaches itself), found by two graph searches from
// 0, over the transitions and over the reversed transitions: O(k²).
func (c *Chain) Irreducible() bool {
	return c.allFrom0(false) && c.allFrom0(true)
}

// allFrom0 reports whether a search from state 0 along the transitions
// with positive probability (reversed: against them) visits every state.
func (c *Chain) allFrom0(reversed bool) bool {
	k := c.K()
	seen := make([]bool, k)
	seen[0] = true
	stack, n := []int{0}, 1
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for v := range k {
			p := c.P[u][v]
			if reversed {
				p = c.P[v][u]
			}
			if p > 0 && !seen[v] {
				seen[v] = true
				stack = append(stack, v)
				n++
			}
		}
	}
	return n == k
}

// Period returns the period of an irreducible chain: the gcd of the lengths
// of its cycles (1 means aperiodic). Exact: breadth-first levels from state
// 0 give period = gcd over edges (u→v) of level(u)+1−level(v).
func (c *Chain) Period() (int, error) {
	if !c.Irreducible() {
		return 0, ErrNotIrreducible
	}
	k := c.K()
	level := make([]int, k)
	for i := range level {
		level[i] = -1
	}
	level[0] = 0
	queue := []int{0}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for v := range k {
			if c.P[u][v] > 0 && level[v] < 0 {
				level[v] = level[u] + 1
				queue = append(queue, v)
			}
		}
	}
	g := 0
	for u := range k {
		for v := range k {
			if c.P[u][v] > 0 {
				g = gcd(g, abs(level[u]+1-level[v]))
			}
		}
	}
	return g, nil
}

// CheckErgodic returns nil when the chain is irreducible and aperiodic, and
// otherwise an error that says which property fails.
func (c *Chain) CheckErgodic() error {
	p, err := c.Period()
	if err != nil {
		return err
	}
	if p != 1 {
		return fmt.Errorf("%w with period %d", ErrPeriodic, p)
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// Stationary returns the stationary distribution π (πP = π) of an
// irreducible chain, which is then unique and positive. It solves the
// linear system (Pᵀ − I)π = 0 with one equation replaced by Σπ = 1.
func (c *Chain) Stationary() ([]float64, error) {
	if !c.Irreducible() {
		return c.reducibleStationary()
	}
	pi, err := StationaryGTH(context.Background(), c.P)
	if err != nil {
		return nil, fmt.Errorf("stationary distribution: %w", err)
	}
	return pi, nil
}

// reducibleStationary handles a reducible chain: its stationary
// distributions are the mixtures of those of its closed communicating
// classes, so π is unique exactly when there is one closed class; π is
// then that class's (irreducible) stationary distribution and zero on
// every transient state. Exact class structure (graph search).
func (c *Chain) reducibleStationary() ([]float64, error) {
	r := c.Reachable()
	k := c.K()
	var closed [][]int
	seen := make([]bool, k)
	for x := range k {
		if seen[x] || !r[x][x] {
			continue
		}
		// x is recurrent iff every state it reaches reaches it back
		rec := true
		for y := range k {
			if r[x][y] && !r[y][x] {
				rec = false
				break
			}
		}
		if !rec {
			continue
		}
		var cls []int
		for y := range k {
			if r[x][y] {
				cls = append(cls, y)
				seen[y] = true
			}
		}
		closed = append(closed, cls)
	}
	if len(closed) != 1 {
		return nil, fmt.Errorf("stationary distribution: %w with %d closed classes, so it is not unique; give the initial distribution or \"any\"", ErrNotIrreducible, len(closed))
	}
	cls := closed[0]
	sub := make([][]float64, len(cls))
	for i, x := range cls {
		sub[i] = make([]float64, len(cls))
		for j, y := range cls {
			sub[i][j] = c.P[x][y] // rows of a closed class sum to 1 inside it
		}
	}
	inner := &Chain{P: sub, Init: InitStationary}
	pi, err := inner.Stationary()
	if err != nil {
		return nil, err
	}
	out := make([]float64, k)
	for i, x := range cls {
		out[x] = pi[i]
	}
	return out, nil
}

// Initial returns the initial distribution q of the chain: Q when given, π
// when stationary. It is an error for InitAny.
func (c *Chain) Initial() ([]float64, error) {
	switch c.Init {
	case InitGiven:
		return append([]float64(nil), c.Q...), nil
	case InitStationary:
		return c.Stationary()
	}
	return nil, errors.New("chain stands for every initial distribution; there is no single q")
}

// Reversal returns the time reversal P*(x,y) = π(y)P(y,x)/π(x) of an
// irreducible chain.
func (c *Chain) Reversal() ([][]float64, error) {
	pi, err := c.Stationary()
	if err != nil {
		return nil, err
	}
	k := c.K()
	r := make([][]float64, k)
	for x := range k {
		r[x] = make([]float64, k)
		for y := range k {
			r[x][y] = pi[y] * c.P[y][x] / pi[x]
		}
	}
	return r, nil
}

// ReversibleTol is the tolerance of Reversible on detailed balance.
const ReversibleTol = 1e-12

// Reversible reports whether an irreducible chain satisfies detailed balance
// π(x)P(x,y) = π(y)P(y,x) within ReversibleTol.
func (c *Chain) Reversible() (bool, error) {
	pi, err := c.Stationary()
	if err != nil {
		return false, err
	}
	return c.reversibleWith(pi), nil
}

func (c *Chain) reversibleWith(pi []float64) bool {
	for x := range pi {
		for y := range pi {
			if math.Abs(pi[x]*c.P[x][y]-pi[y]*c.P[y][x]) > ReversibleTol {
				return false
			}
		}
	}
	return true
}

// Ergodic is what the approx bound needs of an irreducible, aperiodic
// chain, each computed once: its stationary distribution and whether it is
// reversible. Its gaps are those of the chain's Eigengap and PPStarGap
// (the same computation, without checking ergodicity and solving for π
// again).
type Ergodic struct {
	c          *Chain
	Pi         []float64 // Stationary()
	Reversible bool      // Reversible()
}

// Ergodic checks that the chain is irreducible and aperiodic (as
// CheckErgodic) and returns its stationary distribution and reversibility.
func (c *Chain) Ergodic() (*Ergodic, error) {
	if err := c.CheckErgodic(); err != nil {
		return nil, err
	}
	pi, err := c.Stationary()
	if err != nil {
		return nil, err
	}
	return &Ergodic{c: c, Pi: pi, Reversible: c.reversibleWith(pi)}, nil
}

// Eigengap returns 1 − λ*, where λ* is the second largest eigenvalue
// modulus of a reversible, irreducible, aperiodic P ([SWC16] Lemma B.4).
// It uses the symmetric matrix D^{1/2} P D^{-1/2}, D = diag(π), which has
// the same spectrum as P when P is reversible.
func (c *Chain) Eigengap() (float64, error) {
	if err := c.CheckErgodic(); err != nil {
		return 0, err
	}
	rev, err := c.Reversible()
	if err != nil {
		return 0, err
	}
	if !rev {
		return 0, errors.New("eigengap of P needs a reversible chain; use PPStarGap")
	}
	pi, _ := c.Stationary()
	return c.eigengapWith(pi)
}

// Eigengap is the chain's Eigengap; an error when it is not reversible.
func (e *Ergodic) Eigengap() (float64, error) {
	if !e.Reversible {
		return 0, errors.New("eigengap of P needs a reversible chain; use PPStarGap")
	}
	return e.c.eigengapWith(e.Pi)
}

// PPStarGap is the chain's PPStarGap.
func (e *Ergodic) PPStarGap() (float64, error) { return e.c.ppStarGapWith(e.Pi) }

func (c *Chain) eigengapWith(pi []float64) (float64, error) {
	k := c.K()
	S := mat.NewSymDense(k, nil)
	for x := range k {
		for y := x; y < k; y++ {
			// Symmetrise the two (equal up to rounding) off-diagonal entries.
			v := 0.5 * (math.Sqrt(pi[x]/pi[y])*c.P[x][y] + math.Sqrt(pi[y]/pi[x])*c.P[y][x])
			S.SetSym(x, y, v)
		}
	}
	vals, err := symEigenvalues(S)
	if err != nil {
		return 0, err
	}
	// vals ascending; the largest is 1 (simple for irreducible chains).
	slem := 0.0
	for _, v := range vals[:k-1] {
		slem = math.Max(slem, math.Abs(v))
	}
	return 1 - slem, nil
}

// PPStarGap returns the eigengap 1 − λ₂(P P*) of the multiplicative
// reversiblisation P P* ([SWC17] Lemma 4.8), valid for non-reversible
// chains. D^{1/2} P P* D^{-1/2} = S Sᵀ with S = D^{1/2} P D^{-1/2}, which is
// symmetric positive semidefinite, so its spectrum is computed with EigenSym.
func (c *Chain) PPStarGap() (float64, error) {
	if err := c.CheckErgodic(); err != nil {
		return 0, err
	}
	pi, err := c.Stationary()
	if err != nil {
		return 0, err
	}
	return c.ppStarGapWith(pi)
}

func (c *Chain) ppStarGapWith(pi []float64) (float64, error) {
	k := c.K()
	S := mat.NewDense(k, k, nil)
	for x := range k {
		for y := range k {
			S.Set(x, y, math.Sqrt(pi[x]/pi[y])*c.P[x][y])
		}
	}
	M := mat.NewSymDense(k, nil)
	M.SymOuterK(1, S)
	vals, err := symEigenvalues(M)
	if err != nil {
		return 0, err
	}
	if k == 1 {
		return 1, nil
	}
	return 1 - vals[k-2], nil
}

func symEigenvalues(S *mat.SymDense) ([]float64, error) {
	var e mat.EigenSym
	if !e.Factorize(S, false) {
		return nil, errors.New("eigen-decomposition did not converge")
	}
	return e.Values(nil), nil
}

// Pow returns P^d (P^0 = I) by repeated squaring.
func (c *Chain) Pow(d int) [][]float64 {
	k := c.K()
	result := identity(k)
	base := c.P
	for d > 0 {
		if d&1 == 1 {
			result = MatMul(result, base)
		}
		d >>= 1
		if d > 0 {
			base = MatMul(base, base)
		}
	}
	return result
}

func identity(k int) [][]float64 {
	m := make([][]float64, k)
	for i := range m {
		m[i] = make([]float64, k)
		m[i][i] = 1
	}
	return m
}

// MatMul returns A·B for square matrices stored as rows. All entries of
// stochastic matrices are non-negative, so a product entry is exactly zero
// if and only if it is structurally zero: no cancellation can fake a zero.
func MatMul(A, B [][]float64) [][]float64 {
	k := len(A)
	out := make([][]float64, k)
	for i := range k {
		row := make([]float64, k)
		for l, a := range A[i] {
			if a == 0 {
				continue
			}
			for j, b := range B[l] {
				row[j] += a * b
			}
		}
		out[i] = row
	}
	return out
}

// Sample draws a sequence of length T from the chain using rng. For
// InitAny it needs an explicit q and returns an error.
func (c *Chain) Sample(rng *rand.Rand, T int) ([]int, error) {
	q, err := c.Initial()
	if err != nil {
		return nil, err
	}
	return SampleFrom(rng, q, c.P, T), nil
}

// SampleFrom draws X_1 ~ q and X_{t+1} ~ P(X_t, ·).
func SampleFrom(rng *rand.Rand, q []float64, P [][]float64, T int) []int {
	seq := make([]int, T)
	if T == 0 {
		return seq
	}
	seq[0] = draw(rng, q)
	for t := 1; t < T; t++ {
		seq[t] = draw(rng, P[seq[t-1]])
	}
	return seq
}

func draw(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	acc := 0.0
	last := 0
	for i, v := range p {
		if v == 0 {
			continue
		}
		acc += v
		last = i
		if u < acc {
			return i
		}
	}
	return last
}
