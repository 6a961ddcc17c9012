package learned

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pufferfish-privacy/pufferfish/bdp"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/noise"
)

// Report compares four attackers on the held-out readings of a sanitised
// series: reading the output as is (single), the posterior-marginal MAP
// and the Viterbi path under the chain (model-based, exact), and the
// trained LSTM. Accuracies are fractions of held-out readings guessed
// right; implied ε = ln(p/(1−p)) is what an accuracy p says about the
// loss for a uniform prior, and the prior-adjusted ε subtracts the prior
// log-odds of the majority reading (the posterior-odds bound: an ε-private
// reading keeps posterior odds within e^ε of prior odds).
type Report struct {
	Flip    string  `json:"flip"`
	Epsilon float64 `json:"epsilon"`
	Rho0    float64 `json:"rho0"`
	Rho1    float64 `json:"rho1"`
	Covers  string  `json:"guarantee"`

	TrainReadings int `json:"train_readings"`
	TestReadings  int `json:"test_readings"`

	Single    float64 `json:"single_accuracy"`
	Posterior float64 `json:"posterior_accuracy"`
	Viterbi   float64 `json:"viterbi_accuracy"`
	LSTM      float64 `json:"lstm_accuracy"`
	Prior     float64 `json:"prior_accuracy"` // always guessing the majority reading

	// AccuracyBound is the highest accuracy an adversary with the
	// majority prior can reach against an ε-private reading:
	// e^ε q / (e^ε q + 1 − q).
	AccuracyBound float64 `json:"accuracy_bound"`

	Implied      map[string]float64 `json:"implied_epsilon"`
	ImpliedPrior map[string]float64 `json:"implied_epsilon_prior"`

	Config       Config  `json:"lstm_config"`
	TrainSeconds float64 `json:"train_seconds"`
}

// Compare sanitises each raw binary series with the flip of kind at ε
// for chain ch (bdp.ChainFlip), trains the LSTM on a fraction trainFrac of
// every series and scores the four attackers on the rest. The split is by
// blocks of (up to) Block readings spread evenly over each series (a fraction
// 1 − trainFrac of them held out), so both parts see the whole time range:
// a record whose level drifts would otherwise train on one regime and be
// scored on another. src draws the
// sanitisation (seed it for a reproducible run). Series are joined end to
// end for the LSTM's windows (a window may straddle two series: it reads
// outputs only, which are public).
func Compare(series [][]int, ch *markov.Chain, kind bdp.FlipKind, eps, trainFrac float64, cfg Config, src noise.Source) (Report, error) {
	if !(trainFrac > 0 && trainFrac < 1) {
		return Report{}, fmt.Errorf("learned: training fraction %v, want in (0, 1)", trainFrac)
	}
	pair, err := bdp.ChainFlip(kind, ch, eps)
	if err != nil {
		return Report{}, err
	}
	mech, err := bdp.RandomizedResponse(pair.Rho0, pair.Rho1)
	if err != nil {
		return Report{}, err
	}
	r := Report{Flip: string(kind), Epsilon: eps, Rho0: pair.Rho0, Rho1: pair.Rho1, Covers: kind.Covers(), Config: cfg}
	var x, y, post, vit, train, test []int
	for s, xs := range series {
		if len(xs) < 2 {
			continue
		}
		ys, err := bdp.Sanitize(xs, pair.Rho0, pair.Rho1, src)
		if err != nil {
			return Report{}, fmt.Errorf("series %d: %w", s, err)
		}
		p, err := bdp.Posterior(ch, mech, ys)
		if err != nil {
			return Report{}, fmt.Errorf("series %d: %w", s, err)
		}
		v, err := bdp.Viterbi(ch, mech, ys)
		if err != nil {
			return Report{}, fmt.Errorf("series %d: %w", s, err)
		}
		block := min(Block, max(1, len(xs)/20))
		for t := range xs {
			if heldOut(t/block, trainFrac) {
				test = append(test, len(x)+t)
			} else {
				train = append(train, len(x)+t)
			}
			g := 0
			if p[t][1] > p[t][0] {
				g = 1
			}
			post = append(post, g)
		}
		x, y, vit = append(x, xs...), append(y, ys...), append(vit, v...)
	}
	if len(train) == 0 || len(test) == 0 {
		return Report{}, errors.New("learned: too few readings to split into training and held-out parts")
	}
	if cfg.Score > 0 && len(test) > cfg.Score {
		stride := (len(test) + cfg.Score - 1) / cfg.Score
		kept := test[:0]
		for i := 0; i < len(test); i += stride {
			kept = append(kept, test[i])
		}
		test = kept
	}
	start := time.Now()
	a, err := Train(x, y, train, cfg)
	if err != nil {
		return Report{}, err
	}
	r.TrainSeconds = time.Since(start).Seconds()
	guess := a.Guess(y, test)
	ones := 0
	for i, t := range test {
		ones += x[t]
		r.Single += b(y[t] == x[t])
		r.Posterior += b(post[t] == x[t])
		r.Viterbi += b(vit[t] == x[t])
		r.LSTM += b(guess[i] == x[t])
	}
	n := float64(len(test))
	r.TrainReadings, r.TestReadings = len(train), len(test)
	r.Single, r.Posterior, r.Viterbi, r.LSTM = r.Single/n, r.Posterior/n, r.Viterbi/n, r.LSTM/n
	q := max(float64(ones), n-float64(ones)) / n
	r.Prior = q
	r.AccuracyBound = math.Exp(eps) * q / (math.Exp(eps)*q + 1 - q)
	r.Implied, r.ImpliedPrior = map[string]float64{}, map[string]float64{}
	for name, p := range map[string]float64{"single": r.Single, "posterior": r.Posterior, "viterbi": r.Viterbi, "lstm": r.LSTM} {
		r.Implied[name] = logit(p)
		r.ImpliedPrior[name] = max(0, logit(p)-logit(q))
	}
	return r, nil
}

// Block is the length of the blocks the split assigns whole (a series of
// fewer than 20 blocks uses blocks of a twentieth of its length).
const Block = 500

// heldOut reports whether block j is held out: when
// ⌊(j+1)(1−f)⌋ > ⌊j(1−f)⌋, which spreads a fraction 1 − f of the blocks
// evenly.
func heldOut(block int, f float64) bool {
	j := float64(block)
	return math.Floor((j+1)*(1-f)) > math.Floor(j*(1-f))
}

func b(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

// logit is ln(p/(1−p)), capped at ±40 for p = 0 or 1 (a finite number
// that JSON can carry; 40 nats is beyond any sample size here).
func logit(p float64) float64 {
	switch {
	case p <= 0:
		return -40
	case p >= 1:
		return 40
	}
	return math.Log(p / (1 - p))
}

// Attack is Compare on binary series over the two states: the chain the
// model-based attackers know is fitted to the raw series (markov.Fit), and
// the sanitisation is seeded with cfg.Seed.
func Attack(states []string, series [][]int, kind bdp.FlipKind, eps, trainFrac float64, cfg Config) (Report, error) {
	ch, err := markov.Fit(states, series, 0)
	if err != nil {
		return Report{}, fmt.Errorf("fitting the chain the model-based attackers know: %w", err)
	}
	return Compare(series, ch, kind, eps, trainFrac, cfg, noise.Seeded(cfg.Seed))
}
