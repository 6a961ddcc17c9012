package pairwise

import (
	"context"
	"math"
	"slices"
)

// Every pair at its own price (docs/math.md §8.12): the stream's loss is
// the largest over ordered pairs of log R + log t_F + log t_B, each pair
// certified by the functional recursion at its own ratios. Only the pairs
// nearest the limit need their exact suprema (Newton's method over the
// mixing time, with a derivative); every other pair is certified at
// ratios that share its room under the largest loss, where ψ turns
// non-negative in a few steps. On the UCI house's 51 levels, 12 of 2,550
// pairs are within 1% of the largest loss and the median is at a fifth
// of it.

const (
	// fnSeedHorizon is the horizon of the estimates that rank the pairs:
	// short, since they only choose which pairs are searched exactly
	fnSeedHorizon = 16
	// fnSeedMargin and fnSeedMax choose those pairs: within this fraction
	// of the largest ranked loss, at most this many
	fnSeedMargin = 0.01
	// fnSeedRuns caps the ranking's Newton steps: from below, so each
	// estimate is at most its pair's supremum at that horizon
	fnSeedRuns = 3
	// fnRestSteps is the least horizon of the other pairs' certificates
	fnRestSteps = 512
)

// fnSeedMax is the most pairs the ranking sends to the exact search (a
// variable: tests set 1, so that every other pair is covered).
var fnSeedMax = 16

// fnSeedWorst, when set (tests), sends the pairs ranked lowest to the
// exact search: the pairs nearest the limit must then fail to be covered
// and join it.
var fnSeedWorst bool

// fnTier is a tiered certificate of every pair of fs.
type fnTier struct {
	fs     *fnSolver // every pair; counts the work
	top    *fnSolver // the pairs searched exactly
	idx    []int     // the top's pairs' indices in fs.pairs
	inTop  []bool
	done   []bool    // certified at tF, tB (at the current scale or a smaller one)
	tF, tB []float64 // certified ratios (t̃ backward, as fnSolver's)
}

// newTier ranks every pair of fs by its short-horizon estimate at budget
// e and takes the top ones for the exact search. It returns the largest
// ranked loss (+Inf or NaN on an overflow: e far too large).
func newTier(ctx context.Context, fs *fnSolver, e float64) (*fnTier, float64, error) {
	fs.N, fs.runs = fnSeedHorizon, fnSeedRuns
	F, Bt, err := fs.estimates(ctx, math.Exp(e))
	if err != nil {
		return nil, 0, err
	}
	n := len(fs.pairs)
	L := make([]float64, n)
	for j, pr := range fs.pairs {
		var b float64
		if fs.gap == 0 {
			b = Bt[j]
		}
		if L[j] = fs.withStep(e, fs.pairLogs(pr, F[j], b, 1)); math.IsNaN(L[j]) {
			L[j] = math.Inf(1)
		}
	}
	idx := make([]int, n)
	for j := range idx {
		idx[j] = j
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case L[a] > L[b]:
			return -1
		case L[a] < L[b]:
			return 1
		}
		return 0
	})
	if fnSeedWorst {
		slices.Reverse(idx)
	}
	top := L[idx[0]]
	m := 1
	for m < n && m < fnSeedMax && L[idx[m]] >= top*(1-fnSeedMargin) {
		m++
	}
	t := &fnTier{
		fs: fs, idx: slices.Clone(idx[:m]),
		inTop: make([]bool, n), done: make([]bool, n),
		tF: make([]float64, n), tB: make([]float64, n),
	}
	var sub [][2]int
	for _, j := range t.idx {
		t.inTop[j] = true
		sub = append(sub, fs.pairs[j])
	}
	t.top = &fnSolver{fc: fs.fc, pairs: sub, N: 8, gap: fs.gap, parent: fs}
	return t, top, nil
}

// cover certifies every pair not in the top at budget e with loss at most
// Lstar (the top's certified loss), after the top's certificate at e:
// first at ratios splitting the room evenly between the future and the
// past, then, for the pairs that fail, at ratios splitting what their own
// estimates (at the top's horizon) leave. Pairs that still fail join the
// top: grew says the top must be searched again.
func (t *fnTier) cover(ctx context.Context, e, Lstar float64) (grew bool, err error) {
	fs, top := t.fs, t.top
	for i, j := range t.idx {
		t.tF[j], t.done[j] = top.certF[i], true
		if fs.gap == 0 {
			t.tB[j] = top.certBt[i]
		}
	}
	var rest []int
	for j := range fs.pairs {
		if !t.done[j] && !t.inTop[j] {
			rest = append(rest, j)
		}
	}
	fails, err := t.certify(ctx, e, Lstar, rest, nil, nil, max(fnRestSteps, top.N))
	if err != nil || len(fails) == 0 {
		return false, err
	}
	F, Bt, err := t.estimates(ctx, fails, top.lastR, top.lastN)
	if err != nil {
		return false, err
	}
	still, err := t.certify(ctx, e, Lstar, fails, F, Bt, 4*top.N)
	if err != nil || len(still) == 0 {
		return false, err
	}
	// the top's estimates stay those at (lastR, lastN) for its warm starts
	at := make(map[int]int, len(fails))
	for i, j := range fails {
		at[j] = i
	}
	for _, j := range still {
		t.idx = append(t.idx, j)
		t.inTop[j] = true
		top.pairs = append(top.pairs, fs.pairs[j])
		top.lastF = append(top.lastF, F[at[j]])
		if fs.gap == 0 {
			top.lastBt = append(top.lastBt, Bt[at[j]])
		}
	}
	return true, nil
}

// estimates are the exact suprema over horizons ≤ N of the pairs idx at
// R (estimates, not bounds: the search's).
func (t *fnTier) estimates(ctx context.Context, idx []int, R float64, N int) ([]float64, []float64, error) {
	fs := t.fs
	sub := make([][2]int, len(idx))
	for i, j := range idx {
		sub[i] = fs.pairs[j]
	}
	charge := func(pairs int) error { return fs.charge(2*N, pairs) }
	F, _, err := fs.fc.fwd.exactCounted(ctx, sub, constR(R), N, fs.fc.fwd.w, fs.fc.lower(sub, false), nil, charge, 0)
	if err != nil || fs.gap > 0 {
		return F, nil, err
	}
	Bt, _, err := fs.fc.bwd.exactCounted(ctx, sub, constR(R), N, fs.fc.bwd.w, fs.fc.lower(sub, true), nil, charge, 0)
	return F, Bt, err
}

// certify runs the rounding-safe recursion (docs/math.md §8.12) for the
// pairs idx at budget e and ratios whose loss is at most Lstar: the room
// log t_F + log t_B may take is split evenly (F nil) or, from the pairs'
// estimates F, B̃, as each side's estimate plus half of what remains. Each
// side runs at most N steps. It records the certified pairs and returns
// the others.
func (t *fnTier) certify(ctx context.Context, e, Lstar float64, idx []int, F, Bt []float64, N int) ([]int, error) {
	fs := t.fs
	up := 1 + 2*unitRound
	// withStep(e, v) ≤ Lstar for v ≤ room; pairLogs adds the logarithms
	// of the rounding factors, taken off here, and the 10⁻¹² pays for the
	// logarithms' own rounding
	var room float64
	if fs.gap > 0 {
		room = Lstar/(1+4*unitRound) - e/fs.gap*(1+2*unitRound) - math.Log(up)
	} else {
		room = Lstar/(1+4*unitRound) - e - 2*math.Log(up) - math.Log(1+fs.fc.piErr)
	}
	room -= 1e-12 * math.Abs(Lstar)
	var fails, at []int
	var sub [][2]int
	var tf, tb []float64
	for i, j := range idx {
		pr := fs.pairs[j]
		ratio := fs.fc.pi[pr[0]] / fs.fc.pi[pr[1]] // t̃ = t_B·π_a/π_{a'}
		lf, lb := room/2, room/2
		if fs.gap > 0 {
			lf = room
		}
		if F != nil {
			lF, lB := math.Log(F[i]), 0.0
			if fs.gap == 0 {
				lB = math.Log(Bt[i] / ratio)
			}
			sl := room - lF - lB
			if !(sl > 0) {
				fails = append(fails, j) // no room: the pair is at the top
				continue
			}
			lf, lb = lF+sl/2, lB+sl/2
			if fs.gap > 0 {
				lf = lF + sl
			}
		}
		if !(lf > 0) || fs.gap == 0 && !(lb > 0) {
			fails = append(fails, j) // no ratio below 1 bounds a pair
			continue
		}
		at = append(at, j)
		sub = append(sub, pr)
		tf = append(tf, math.Exp(lf))
		tb = append(tb, math.Exp(lb)*ratio)
	}
	if len(sub) == 0 {
		return fails, nil
	}
	R := math.Exp(e) * (1 + 2*unitRound)
	okF, steps, err := fs.fc.fwd.certify(ctx, sub, tf, R, N)
	if err == nil {
		err = fs.charge(2*steps, 1)
	}
	if err != nil {
		return nil, err
	}
	okB := okF
	if fs.gap == 0 {
		if okB, steps, err = fs.fc.bwd.certify(ctx, sub, tb, R, N); err == nil {
			err = fs.charge(2*steps, 1)
		}
		if err != nil {
			return nil, err
		}
	}
	for i, j := range at {
		if okF[i] && okB[i] {
			t.tF[j], t.tB[j], t.done[j] = tf[i], tb[i], true
		} else {
			fails = append(fails, j)
		}
	}
	return fails, nil
}

// loss is the certified loss of every pair at budget e (all done).
func (t *fnTier) loss(e float64) Result {
	l, a, b := t.fs.lossOf(e, t.tF, t.tB, 1+2*unitRound)
	return Result{Loss: l, A: a, B: b}
}

// calibrateTiered is calibrate on every pair of fs, tiered: the top pairs
// by the functional recursion's search and certificate, the others
// covered under their loss at the scale found; a pair that cannot be
// covered joins the top and the search resumes from that scale.
func (fs *fnSolver) calibrateTiered(ctx context.Context, eps, s, guess float64) (float64, Result, error) {
	target := eps * (1 - Slack)
	aim := eps * (1 - aimMargin)
	// rank at a scale near the limit: the loss is nearly ∝ 1/b (the short
	// horizon's is lower, which the search then corrects)
	b := max(guess, 2*s/eps)
	var t *fnTier
	for try := 0; ; try++ {
		var top float64
		var err error
		if t, top, err = newTier(ctx, fs, s/b); err != nil {
			return 0, Result{}, err
		}
		if math.IsInf(top, 1) {
			b *= 2
			if try < 40 {
				continue
			}
			return math.Inf(1), Result{}, nil
		}
		nb := max(b*top/aim, 2*s/eps)
		// ranked again only far from the scale found (the ranking barely
		// moves with R; the search corrects the scale)
		if try >= 3 || nb < 4*b && b < 4*nb {
			b = nb
			break
		}
		b = nb
	}
	done := 0.0 // the scale of the certificates in t.done
	for round := 0; round < 8; round++ {
		nb, r, err := t.top.calibrate(ctx, eps, s, max(b, done))
		if err != nil || math.IsInf(nb, 1) {
			return nb, Result{}, err
		}
		if nb < done {
			// a certificate holds at larger scales only
			clear(t.done)
		}
		b, done = nb, nb
		if fnTrace != nil {
			fnTrace("tiered round %d: %d top pairs, b %.12g, loss %.12g", round, len(t.idx), b, r.Loss)
		}
		grew, err := t.cover(ctx, s/b, r.Loss)
		if err != nil {
			return 0, Result{}, err
		}
		if grew {
			continue
		}
		if res := t.loss(s / b); res.Loss <= target {
			return b, res, nil
		}
		return math.Inf(1), Result{}, nil // cannot happen: every pair is under the top's loss
	}
	return math.Inf(1), Result{}, nil
}

// lossTiered is the certified loss of every pair of fs at budget e,
// tiered as calibrateTiered; +Inf when some pair is not certified (within
// four doublings of the horizon).
func (fs *fnSolver) lossTiered(ctx context.Context, e float64) (Result, error) {
	t, top, err := newTier(ctx, fs, e)
	if err != nil || math.IsInf(top, 1) {
		return Result{Loss: math.Inf(1), A: -1, B: -1}, err
	}
	for round := 0; round < 8; round++ {
		var r Result
		for try := 0; ; try++ {
			l, err := t.top.estimateLoss(ctx, e)
			if err != nil {
				return Result{}, err
			}
			// the calibration's inflation, ε·10⁻⁶/8 (calibrate), relative
			// to the loss here: so Loss at a calibrated scale is ≤ ε
			// however small ε (10⁻⁷ would add 2·10⁻⁷ to a loss of 0.01)
			if r, err = t.top.certifyAt(ctx, e, min(1e-7, l*aimMargin/8)); err != nil {
				return Result{}, err
			}
			if !math.IsInf(r.Loss, 1) {
				break
			}
			if try == 3 || t.top.N >= fnMaxHorizon {
				return r, nil
			}
			t.top.N *= 2
		}
		grew, err := t.cover(ctx, e, r.Loss)
		if err != nil {
			return Result{}, err
		}
		if !grew {
			return t.loss(e), nil
		}
	}
	return Result{Loss: math.Inf(1), A: -1, B: -1}, nil
}
