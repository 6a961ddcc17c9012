package bdp

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkPosterior1e6(b *testing.B) {
	ch, _ := SymmetricChain(0.02)
	mech, _ := RandomizedResponse(DPFlip(0.5), DPFlip(0.5))
	md, _ := newModel(ch, mech)
	n := 1_000_000
	x, y := make([]int, n), make([]int, n)
	md.draw(rand.New(rand.NewPCG(1, 1)), x, y)
	for b.Loop() {
		if _, err := Posterior(ch, mech, y); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWorstBinary1e5(b *testing.B) {
	ch, _ := SymmetricChain(0.1)
	rho, _ := PublishedFlip(0.1, 1)
	mech, _ := RandomizedResponse(rho, rho)
	var l Loss
	for b.Loop() {
		var err error
		if l, err = Worst(ch, mech, 100_000, AnyKnown); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(l.Loss, "loss")
}

func BenchmarkCertifiedFlipLimit(b *testing.B) {
	for _, theta := range []float64{0.02, 0.2} {
		b.Run(map[float64]string{0.02: "theta=0.02", 0.2: "theta=0.2"}[theta], func(b *testing.B) {
			ch, _ := SymmetricChain(theta)
			var c Certified
			for b.Loop() {
				var err error
				if c, err = CertifiedFlip(ch, 1, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(c.Flip, "flip")
		})
	}
}

// Throughput of the Monte-Carlo attack: trials of 1,000 readings each.
func BenchmarkSimulateAttack(b *testing.B) {
	ch, _ := SymmetricChain(0.1)
	mech, _ := RandomizedResponse(DPFlip(1), DPFlip(1))
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		if _, err := SimulateAttack(ch, mech, 1000, 500, 1000, rng); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExactAttack30(b *testing.B) {
	ch, _ := SymmetricChain(0.02)
	mech, _ := RandomizedResponse(DPFlip(0.5), DPFlip(0.5))
	for b.Loop() {
		if _, err := Attack(ch, mech, 30, 15); err != nil {
			b.Fatal(err)
		}
	}
}
