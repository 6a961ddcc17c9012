package ledger

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
)

// Issue 39, item 2: one alphabet of dataset names, checked wherever a
// name enters (a registration, a token's scope), every refusal saying the
// rule; names equal but for case are one name.
func TestDatasetNameAlphabet(t *testing.T) {
	for _, ok := range []string{"activity", "uci-house", "meters_2026", "a.b", "A1", strings.Repeat("x", 128)} {
		if err := ValidName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", " activity", "activity ", "..", ".", "*", "a*", "a/b", "tab\there", "caf\xe9", "café", "-x", "a b", strings.Repeat("x", 129)} {
		err := ValidName(bad)
		if err == nil || !strings.Contains(err.Error(), NameRule) {
			t.Errorf("%q: %v, want a refusal stating the rule", bad, err)
		}
	}
	// a scope's dataset is a name too: a typo binds to nothing, "*" stays
	// the wildcard
	for _, bad := range []string{"release: activity", "read:..", "feed:a b", "release:caf\xe9"} {
		if err := ValidScope(bad); err == nil || !strings.Contains(err.Error(), NameRule) {
			t.Errorf("scope %q: %v, want a refusal stating the rule", bad, err)
		}
	}
	for _, ok := range []string{"admin", "release:*", "read:activity", "feed:meters_2026"} {
		if err := ValidScope(ok); err != nil {
			t.Errorf("scope %q: %v", ok, err)
		}
	}
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		for _, bad := range []string{" activity", "..", "*", "caf\xe9"} {
			err := s.Init(ctx, Registration{Name: bad, Budget: big.NewRat(1, 1)})
			var ne *NameError
			if !errors.As(err, &ne) || !strings.Contains(err.Error(), NameRule) {
				t.Errorf("Init %q: %v, want the name rule", bad, err)
			}
		}
		if _, _, err := s.CreateToken(ctx, []string{"release: activity"}, nil); err == nil || !strings.Contains(err.Error(), NameRule) {
			t.Errorf("token with scope \"release: activity\": %v", err)
		}
		if err := s.Init(ctx, Registration{Name: "Activity", Budget: big.NewRat(1, 1)}); err != nil {
			t.Fatal(err)
		}
		for _, twin := range []string{"activity", "ACTIVITY", "Activity"} {
			if err := s.Init(ctx, Registration{Name: twin, Budget: big.NewRat(2, 1)}); !errors.Is(err, ErrExists) {
				t.Errorf("Init %q beside \"Activity\": %v, want ErrExists", twin, err)
			} else if twin != "Activity" && !strings.Contains(err.Error(), "differ only in case") {
				t.Errorf("Init %q beside \"Activity\": %v, want the case rule", twin, err)
			}
		}
		if sts, err := s.Datasets(ctx); err != nil || len(sts) != 1 {
			t.Errorf("datasets after refusals: %v %v", sts, err)
		}
	})
}
