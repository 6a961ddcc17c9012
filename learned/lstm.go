// Package learned holds adversaries that learn: a bidirectional LSTM that
// reads a sanitised binary series and guesses each raw reading, trained on
// part of the series and scored on the rest. It tests [CGSSY]'s claim that
// a neural attacker cannot beat the local Bayesian DP guarantee even where
// the Markov model is misspecified, and gives users an attack to run
// against any series they sanitise.
//
// The network is github.com/nlpodyssey/spago (pure Go, autograd, LSTM
// layers): for reading t, the window of sanitised outputs
// y_{t−h..t+h} (±1, 0 outside the series) runs through a forward and a
// backward LSTM of Hidden units; their states at the centre, concatenated,
// go through a linear layer to two logits (raw reading 0 or 1), trained
// with cross-entropy and Adam on minibatches. Everything is seeded:
// initial weights (spago's generator), example order and the sampled
// training set (math/rand/v2 PCG), so a run is reproducible.
package learned

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/initializers"
	"github.com/nlpodyssey/spago/losses"
	"github.com/nlpodyssey/spago/mat"
	srand "github.com/nlpodyssey/spago/mat/rand"
	"github.com/nlpodyssey/spago/nn"
	"github.com/nlpodyssey/spago/nn/birnn"
	"github.com/nlpodyssey/spago/nn/linear"
	"github.com/nlpodyssey/spago/nn/recurrent/lstm"
	"github.com/nlpodyssey/spago/optimizers"
	"github.com/nlpodyssey/spago/optimizers/adam"
)

type real = float32

// Config sizes the attacker and its training.
type Config struct {
	Half     int     // window half-width h: the attacker sees 2h+1 outputs
	Hidden   int     // LSTM units per direction
	Examples int     // training examples drawn per epoch (sampled from the training readings)
	Epochs   int     //
	Batch    int     // examples per Adam step
	Rate     float64 // Adam step size
	Seed     uint64
	// Score, when > 0, caps the held-out readings scored (Compare): every
	// attacker is scored on the same evenly spaced subset.
	Score int
}

// Default is the size used by puff local attack: measured on synthetic
// chains and the PhysioNet records (EXPERIMENTS.md §5), larger windows or
// more units did not raise accuracy.
var Default = Config{Half: 8, Hidden: 8, Examples: 2000, Epochs: 3, Batch: 32, Rate: 0.01, Seed: 1}

// Fast is the size of the tests and of puff experiment --fast.
var Fast = Config{Half: 5, Hidden: 6, Examples: 600, Epochs: 2, Batch: 32, Rate: 0.02, Seed: 1, Score: 2000}

func (c Config) check() error {
	if c.Half < 0 || c.Half > 64 || c.Hidden < 1 || c.Hidden > 256 || c.Examples < 1 || c.Epochs < 1 || c.Batch < 1 || !(c.Rate > 0) {
		return fmt.Errorf("learned: config %+v: want 0 ≤ half ≤ 64, 1 ≤ hidden ≤ 256 and positive examples, epochs, batch and rate", c)
	}
	return nil
}

type model struct {
	nn.Module
	Bi  *birnn.Model
	Out *linear.Model
}

// Attacker is a trained LSTM attacker.
type Attacker struct {
	cfg Config
	m   *model
}

// window is the network's input for reading t of y.
func window(y []int, t, h int) []mat.Tensor {
	xs := make([]mat.Tensor, 2*h+1)
	for j := -h; j <= h; j++ {
		v := real(0)
		if u := t + j; u >= 0 && u < len(y) {
			v = real(2*y[u] - 1)
		}
		xs[j+h] = mat.Scalar(v)
	}
	return xs
}

func (a *Attacker) logits(y []int, t int) mat.Tensor {
	outs := a.m.Bi.Forward(window(y, t, a.cfg.Half)...)
	return a.m.Out.Forward(outs[a.cfg.Half])[0]
}

// Train fits an attacker to the readings train (indices into x and y) of
// raw series x and its sanitised version y (both 0/1).
func Train(x, y []int, train []int, cfg Config) (*Attacker, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if len(x) != len(y) {
		return nil, errors.New("learned: raw and sanitised series differ in length")
	}
	if len(train) == 0 {
		return nil, errors.New("learned: no training readings")
	}
	for _, t := range train {
		if t < 0 || t >= len(x) || x[t] > 1 || y[t] > 1 || x[t] < 0 || y[t] < 0 {
			return nil, fmt.Errorf("learned: reading %d is not a binary reading of the series", t)
		}
	}
	g := srand.NewLockedRand(cfg.Seed)
	m := &model{
		Bi:  birnn.New(lstm.New[real](1, cfg.Hidden).Init(g), lstm.New[real](1, cfg.Hidden).Init(g), birnn.Concat),
		Out: linear.New[real](2*cfg.Hidden, 2),
	}
	initializers.XavierUniform(m.Out.W.Value().(mat.Matrix), 1, g)
	a := &Attacker{cfg: cfg, m: m}
	opt := optimizers.New(nn.Parameters(m), adam.New(adam.NewConfig(cfg.Rate, 0.9, 0.999, 1e-8)))
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	for range cfg.Epochs {
		for done := 0; done < cfg.Examples; done += cfg.Batch {
			var loss mat.Tensor
			for range min(cfg.Batch, cfg.Examples-done) {
				t := train[rng.IntN(len(train))]
				l := losses.CrossEntropy(a.logits(y, t), x[t])
				if loss == nil {
					loss = l
				} else {
					loss = ag.Add(loss, l)
				}
			}
			if err := ag.Backward(loss); err != nil {
				return nil, fmt.Errorf("learned: %w", err)
			}
			if err := opt.Optimize(); err != nil {
				return nil, fmt.Errorf("learned: %w", err)
			}
		}
	}
	return a, nil
}

// Guess returns the attacker's guess of the raw reading at each index of
// at, from the sanitised series y.
func (a *Attacker) Guess(y []int, at []int) []int {
	out := make([]int, len(at))
	for i, t := range at {
		l := a.logits(y, t).Value().Data().F64()
		if l[1] > l[0] {
			out[i] = 1
		}
	}
	return out
}
