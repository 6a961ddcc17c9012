package pairwise

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
)

// benchStream calibrates the unbounded stationary stream at ε = 0.5 (the
// release's setting) and reports the scale.
func benchStream(b *testing.B, P [][]float64, closedForm bool) {
	ch, err := markov.New(nil, P, markov.InitStationary, nil)
	if err != nil {
		b.Fatal(err)
	}
	c, _ := markov.NewClass(ch.States, ch)
	var scale float64
	for b.Loop() {
		s, _, err := Calibrate(context.Background(), c, 0, 0.5, &Options{ClosedForm: closedForm})
		if err != nil {
			b.Fatal(err)
		}
		scale = s
	}
	b.ReportMetric(scale, "b")
}

// meterChain is a banded chain of k numeric levels: each level stays with
// probability ≈ 0.7 and moves to a level within 3 with weights 0.5^d.
func meterChain(k int) [][]float64 {
	P := banded(k, 3, 0.5)
	for i := range P {
		for j := range P[i] {
			P[i][j] *= 0.5
		}
		P[i][i] += 0.5
	}
	return P
}

func denseChain(k int) [][]float64 {
	return randChain(rand.New(rand.NewPCG(uint64(k), 33)), k)
}

func BenchmarkCalibrateBanded51(b *testing.B)  { benchStream(b, meterChain(51), true) }
func BenchmarkCalibrateBanded101(b *testing.B) { benchStream(b, meterChain(101), true) }
func BenchmarkCalibrateBanded201(b *testing.B) { benchStream(b, meterChain(201), true) }

func BenchmarkCalibrateBandedLP51(b *testing.B)  { benchStream(b, meterChain(51), false) }
func BenchmarkCalibrateBandedLP101(b *testing.B) { benchStream(b, meterChain(101), false) }

func BenchmarkCalibrateRandom51(b *testing.B)  { benchStream(b, denseChain(51), true) }
func BenchmarkCalibrateRandom101(b *testing.B) { benchStream(b, denseChain(101), true) }

func BenchmarkCalibrateBandedLP201(b *testing.B) { benchStream(b, meterChain(201), false) }
func BenchmarkCalibrateRandomLP51(b *testing.B)  { benchStream(b, denseChain(51), false) }
func BenchmarkCalibrateRandomLP101(b *testing.B) { benchStream(b, denseChain(101), false) }
