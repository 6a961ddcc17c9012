package hmm

import (
	"fmt"
	"math/big"
	"testing"
)

// Noisy Max as DP, neighbours differing arbitrarily: the streaming solver
// (DPMechanism.Loss) and, for comparison, the search on the materialised
// model.
func BenchmarkNoisyMaxDP(b *testing.B) {
	for _, n := range []int{3, 5, 7, 8, 10, 12} {
		b.Run(fmt.Sprintf("stream/queries=%d", n), func(b *testing.B) {
			for b.Loop() {
				d, err := NoisyMax(n, 2, big.NewRat(1, 2), ReturnIndex, DifferAnyhow)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := d.Loss(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, n := range []int{3, 5, 7, 8} {
		b.Run(fmt.Sprintf("model/queries=%d", n), func(b *testing.B) {
			for b.Loop() {
				m, secs, err := noisyMaxModel(n, 2, big.NewRat(1, 2), ReturnIndex, DifferAnyhow)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Loss(m, secs, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Noisy Max with a prior: the adversary knows the other answers' prior
// (independent uniform) and the secret is the first answer, 0 versus 2.
func BenchmarkNoisyMaxPrior(b *testing.B) {
	for _, n := range []int{3, 5, 7, 8} {
		b.Run(fmt.Sprintf("queries=%d", n), func(b *testing.B) {
			m, _, _ := noisyMaxModel(n, 2, big.NewRat(1, 2), ReturnIndex, DifferByOne)
			vs, _ := noisyMaxInputs(n, 2)
			prior := make([]*big.Rat, len(m.States))
			for s := range prior {
				prior[s] = new(big.Rat)
				if s < len(vs) {
					prior[s].SetFrac64(1, int64(len(vs)))
				}
			}
			var ev0, ev2 []int
			for s, v := range vs {
				switch v[0] {
				case 0:
					ev0 = append(ev0, s)
				case 2:
					ev2 = append(ev2, s)
				}
			}
			pi, _ := condition(prior, ev0)
			tau, _ := condition(prior, ev2)
			for b.Loop() {
				if _, err := Loss(m, []Secret{{Name: "first 0 vs 2", Pi: pi, Tau: tau}}, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGeometric(b *testing.B) {
	for _, m := range []int{3, 10, 50} {
		b.Run(fmt.Sprintf("range=%d", m), func(b *testing.B) {
			for b.Loop() {
				model, secs, _ := geometricModel(big.NewRat(1, 2), m)
				if _, err := Loss(model, secs, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A multi-step HMM: the flu-like two-state chain with noisy symptoms,
// sequences up to length 10 (2^10 leaves before pruning).
func BenchmarkSequenceLength(b *testing.B) {
	p := big.NewRat(1, 10)
	q := new(big.Rat).Sub(big.NewRat(1, 1), p)
	m := &Model{States: []string{"h", "s"}, Obs: []string{"ok", "cough", "fever"},
		Trans: [][]Entry{{{0, q}, {1, p}}, {{0, p}, {1, q}}},
		Emit:  [][]*big.Rat{{big.NewRat(6, 10), big.NewRat(3, 10), big.NewRat(1, 10)}, {big.NewRat(2, 10), big.NewRat(3, 10), big.NewRat(5, 10)}}}
	sec := Secret{Name: "sick", Pi: []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)}, Tau: []*big.Rat{big.NewRat(1, 1), big.NewRat(0, 1)}}
	for _, n := range []int{4, 7, 10} {
		b.Run(fmt.Sprintf("length=%d", n), func(b *testing.B) {
			var r Result
			for b.Loop() {
				r, _ = Loss(m, []Secret{sec}, n)
			}
			b.ReportMetric(float64(r.Explored), "sequences")
		})
	}
}

// The float path on the same instances as the exact one.
func BenchmarkFloat(b *testing.B) {
	for _, n := range []int{7, 8} {
		b.Run(fmt.Sprintf("noisy-max-dp-queries=%d", n), func(b *testing.B) {
			for b.Loop() {
				m, secs, err := noisyMaxModel(n, 2, big.NewRat(1, 2), ReturnIndex, DifferAnyhow)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := LossFloat(m, secs, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	p := big.NewRat(1, 10)
	q := new(big.Rat).Sub(big.NewRat(1, 1), p)
	m := &Model{States: []string{"h", "s"}, Obs: []string{"ok", "cough", "fever"},
		Trans: [][]Entry{{{0, q}, {1, p}}, {{0, p}, {1, q}}},
		Emit:  [][]*big.Rat{{big.NewRat(6, 10), big.NewRat(3, 10), big.NewRat(1, 10)}, {big.NewRat(2, 10), big.NewRat(3, 10), big.NewRat(5, 10)}}}
	sec := Secret{Name: "sick", Pi: []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1)}, Tau: []*big.Rat{big.NewRat(1, 1), big.NewRat(0, 1)}}
	for _, n := range []int{10, 14} {
		b.Run(fmt.Sprintf("length=%d", n), func(b *testing.B) {
			var r FloatResult
			for b.Loop() {
				r, _ = LossFloat(m, []Secret{sec}, n)
			}
			b.ReportMetric(float64(r.Explored), "sequences")
		})
	}
}
