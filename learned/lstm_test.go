package learned

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/bdp"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

type pcg struct{ r *rand.Rand }

func (p pcg) Uint64() uint64 { return p.r.Uint64() }

// markovSeries draws a symmetric binary chain switching with probability
// theta per step.
func markovSeries(n int, theta float64, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]int, n)
	x[0] = rng.IntN(2)
	for t := 1; t < n; t++ {
		x[t] = x[t-1]
		if rng.Float64() < theta {
			x[t] = 1 - x[t]
		}
	}
	return x
}

// On Markov data the posterior attacker is Bayes-optimal, so the LSTM
// cannot beat it beyond sampling error (a check that training is sane and
// the comparison fair); on the DP flip, which ignores the correlation, it
// must beat reading the output as is.
func TestLSTMOnMarkovData(t *testing.T) {
	x := markovSeries(8000, 0.08, 3)
	ch, err := markov.Fit([]string{"0", "1"}, [][]int{x}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compare([][]int{x}, ch, bdp.DPFlipKind, 1, 0.7, Fast, pcg{rand.New(rand.NewPCG(9, 9))})
	if err != nil {
		t.Fatal(err)
	}
	se := math.Sqrt(r.Posterior * (1 - r.Posterior) / float64(r.TestReadings))
	t.Logf("single %.4f posterior %.4f viterbi %.4f lstm %.4f (train %.1f s, %d test readings)", r.Single, r.Posterior, r.Viterbi, r.LSTM, r.TrainSeconds, r.TestReadings)
	if r.LSTM > r.Posterior+3*se {
		t.Fatalf("the LSTM (%.4f) beats the Bayes-optimal posterior attacker (%.4f) by more than 3 standard errors", r.LSTM, r.Posterior)
	}
	if r.LSTM < r.Single+0.02 {
		t.Fatalf("the LSTM (%.4f) does not beat reading the DP-flipped output as is (%.4f): training failed", r.LSTM, r.Single)
	}
	if r.Posterior < r.Single {
		t.Fatalf("posterior %.4f below single %.4f", r.Posterior, r.Single)
	}
	if math.Abs(r.Implied["lstm"]-math.Log(r.LSTM/(1-r.LSTM))) > 1e-12 || r.AccuracyBound <= r.Prior {
		t.Fatalf("report %+v", r)
	}
}

// Same seed, same attacker.
func TestLSTMReproducible(t *testing.T) {
	x := markovSeries(2000, 0.1, 5)
	y, err := bdp.Sanitize(x, 0.25, 0.25, pcg{rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		t.Fatal(err)
	}
	var train, test []int
	for i := range x {
		if i < 1400 {
			train = append(train, i)
		} else {
			test = append(test, i)
		}
	}
	cfg := Fast
	cfg.Examples, cfg.Epochs = 200, 1
	a1, err := Train(x, y, train, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := Train(x, y, train, cfg)
	if !slices.Equal(a1.Guess(y, test), a2.Guess(y, test)) {
		t.Fatal("two trainings with the same seed guess differently")
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Train([]int{0, 1}, []int{0}, []int{0}, Fast); err == nil {
		t.Error("lengths differ")
	}
	if _, err := Train([]int{0, 2}, []int{0, 1}, []int{1}, Fast); err == nil {
		t.Error("non-binary reading")
	}
	bad := Fast
	bad.Hidden = 0
	if _, err := Train([]int{0, 1}, []int{0, 1}, []int{0}, bad); err == nil {
		t.Error("zero hidden units")
	}
	ch, _ := markov.Fit([]string{"0", "1"}, [][]int{{0, 1, 1, 0, 1}}, 0.5)
	if _, err := Compare([][]int{{0, 1}}, ch, bdp.DPFlipKind, 1, 1.5, Fast, nil); err == nil {
		t.Error("training fraction 1.5")
	}
}
