package ledger

import "testing"

// The scope lattice: admin holds all; release:N and feed:N each hold
// read:N and neither holds the other (feeding a stream is the custodian's
// act, issue 34); "*" matches every dataset.
func TestTokenScopes(t *testing.T) {
	for _, c := range []struct {
		scopes []string
		need   string
		want   bool
	}{
		{[]string{"admin"}, "feed:d", true},
		{[]string{"release:d"}, "release:d", true},
		{[]string{"release:d"}, "read:d", true},
		{[]string{"release:d"}, "feed:d", false},
		{[]string{"release:*"}, "feed:d", false},
		{[]string{"feed:d"}, "feed:d", true},
		{[]string{"feed:d"}, "read:d", true},
		{[]string{"feed:d"}, "release:d", false},
		{[]string{"feed:d"}, "feed:e", false},
		{[]string{"feed:*"}, "feed:e", true},
		{[]string{"feed:*"}, "read:e", true},
		{[]string{"feed:*"}, "release:e", false},
		{[]string{"read:d"}, "feed:d", false},
		{[]string{"read:*"}, "release:d", false},
		{[]string{"read:d"}, "read:e", false},
	} {
		if got := (Token{Scopes: c.scopes}).Can(c.need); got != c.want {
			t.Errorf("%v can %s: %v, want %v", c.scopes, c.need, got, c.want)
		}
	}
	for _, s := range []string{"feed:d", "feed:*", "release:d", "read:*", "admin"} {
		if err := ValidScope(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"feed", "write:d", "feed:"} {
		if ValidScope(s) == nil {
			t.Errorf("%s accepted", s)
		}
	}
}
