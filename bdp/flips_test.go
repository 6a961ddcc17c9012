package bdp

import (
	"testing"
)

func TestFlipKinds(t *testing.T) {
	for _, k := range FlipKinds {
		t.Run(string(k), func(t *testing.T) {
			rho, err := SymmetricFlip(k, 0.2, 1)
			if err != nil {
				t.Fatal(err)
			}
			var want float64
			switch k {
			case DPFlipKind:
				want = DPFlip(1)
			case PublishedFlipKind:
				want, _ = PublishedFlip(0.2, 1)
			case CertifiedFlipKind:
				c, _ := CertifiedFlipSymmetric(0.2, 1)
				want = c.Flip
			}
			if rho != want || k.Covers() == "" {
				t.Fatalf("flip %v, want %v", rho, want)
			}
			ch, _ := SymmetricChain(0.2)
			p, err := ChainFlip(k, ch, 1)
			if err != nil || p.Rho0 <= 0 || p.Rho1 <= 0 {
				t.Fatalf("chain flip %+v %v", p, err)
			}
		})
	}
	if _, err := ParseFlipKind("magic"); err == nil {
		t.Fatal("unknown flip accepted")
	}
	if _, err := SymmetricFlip(DPFlipKind, 1.5, 1); err == nil {
		t.Fatal("θ = 1.5 accepted")
	}
	if _, err := SymmetricFlip(DPFlipKind, 0.2, 0); err == nil {
		t.Fatal("ε = 0 accepted")
	}
}

func TestEstimateTheta(t *testing.T) {
	th, err := EstimateTheta([][]int{{0, 0, 1, 1}, {1}, {0, 1}})
	if err != nil || th != 0.5 { // switches 1 + 1 over 3 + 1 transitions
		t.Fatalf("θ = %v, %v", th, err)
	}
	if _, err := EstimateTheta([][]int{{0}, {1}}); err == nil {
		t.Fatal("no transitions accepted")
	}
}
