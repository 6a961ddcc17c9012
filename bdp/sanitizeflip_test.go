package bdp

import (
	"errors"
	"math"
	"testing"
)

// SanitizeFlip estimates θ as switches/steps with fit, uses the given θ
// otherwise, and tells its errors apart.
func TestSanitizeFlip(t *testing.T) {
	rho, th, covers, err := SanitizeFlip("dp", math.NaN(), 1, true, [][]int{{0, 0, 1, 1, 1}, {1}})
	if err != nil || th != 0.25 || math.Abs(rho-1/(math.E+1)) > 1e-15 || covers != DPFlipKind.Covers() {
		t.Errorf("fit dp: ρ %v, θ %v, %q, %v", rho, th, covers, err)
	}
	want, err := SymmetricFlip(CertifiedFlipKind, 0.1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rho, th, _, err := SanitizeFlip("certified", 0.1, 1, false, nil); err != nil || th != 0.1 || rho != want || rho <= 0 {
		t.Errorf("certified: ρ %v (want %v), θ %v, %v", rho, want, th, err)
	}
	if _, _, _, err := SanitizeFlip("dp", 0, 1, true, [][]int{{1}, {0}}); !errors.Is(err, ErrNoTransitions) {
		t.Errorf("no transitions: %v", err)
	}
	if _, _, _, err := SanitizeFlip("x", 0.1, 1, false, nil); !errors.Is(err, ErrFlipKind) {
		t.Errorf("unknown kind: %v", err)
	}
	if _, _, _, err := SanitizeFlip("x", 2, 1, false, nil); err == nil || errors.Is(err, ErrFlipKind) {
		t.Errorf("θ = 2 is checked first: %v", err)
	}
}
