package mechanism

import (
	"encoding/json"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Name
		ok   bool
	}{
		{"exact", Exact, true}, {"EXACT", Exact, true}, {"mqm-exact", Exact, true},
		{"mqm-approx", Approx, true}, {"groupdp", GroupDP, true}, {"pufferfish", Pufferfish, true},
		{"magic", "", false}, {"", "", false},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := Parse(c.in)
			if (err == nil) != c.ok || got != c.want {
				t.Fatalf("Parse(%q) = %q, %v", c.in, got, err)
			}
		})
	}
	if _, err := ParseRelease("pufferfish"); err == nil {
		t.Fatal("pufferfish accepted for a histogram release")
	}
	var n Name
	if err := json.Unmarshal([]byte(`"mqm-approx"`), &n); err != nil || n != Approx {
		t.Fatalf("JSON alias: %q %v", n, err)
	}
	if b, _ := json.Marshal(Exact); string(b) != `"exact"` {
		t.Fatalf("JSON: %s", b)
	}
}
