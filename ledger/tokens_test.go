package ledger

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

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

// Issue 39, item 4: a token's JSON (puff token list) shows its budget; a
// token without one has none.
func TestTokenJSONShowsItsBudget(t *testing.T) {
	b, _ := new(big.Rat).SetString("0.25")
	for _, c := range []struct {
		tok  Token
		want string
	}{
		{Token{ID: "a", Scopes: []string{"read:d"}, Budget: b}, `"budget":0.25`},
		{Token{ID: "b", Scopes: []string{"admin"}}, ""},
	} {
		j, err := json.Marshal(c.tok)
		if err != nil {
			t.Fatal(err)
		}
		if c.want != "" && !strings.Contains(string(j), c.want) || c.want == "" && strings.Contains(string(j), "budget") {
			t.Errorf("%s, want %q", j, c.want)
		}
		for _, f := range []string{`"id":`, `"scopes":`, `"created":`} {
			if !strings.Contains(string(j), f) {
				t.Errorf("%s lacks %s", j, f)
			}
		}
	}
}
