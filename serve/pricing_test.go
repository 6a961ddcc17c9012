package serve

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/release"
)

// registerBig registers the example as dataset name with its class and
// budget 1000, and returns a releaser for it.
func registerBig(t *testing.T, f *fixture, name string) {
	t.Helper()
	cl, _ := io.ReadAll(release.ExampleClass())
	b, _ := json.Marshal(map[string]any{"name": name, "builtin": "activity", "class": json.RawMessage(cl), "budget": 1000})
	if code, m, _ := f.do("POST", "/v1/datasets", f.admin, string(b)); code != 201 {
		t.Fatalf("%d %v", code, m)
	}
}

// Issue 39, item 5: when a tighter rule re-prices the releases (groupdp
// at ε = 40, then a windowed release at 0.1: the dp-leakage rule prices
// both at ≈ 4.26), the ledger's answer and the release's say which rule
// prices the total and that it is lower than the sum of the individual
// spends (40.1) because of that rule: not a refund.
func TestTotalSaysWhichRulePricesIt(t *testing.T) {
	f := newFixture(t, "")
	registerBig(t, f, "big")
	code, m, _ := f.do("POST", "/v1/datasets/big/releases", f.admin, `{"method": "groupdp", "epsilon": 40}`)
	if code != 201 {
		t.Fatalf("%d %v", code, m)
	}
	if p, _ := m["ledger"].(map[string]any)["pricing"].(string); !strings.Contains(p, "single") || strings.Contains(p, "lower") {
		t.Errorf("one release: pricing %q", p)
	}
	code, m, _ = f.do("POST", "/v1/datasets/big/releases", f.admin, `{"method": "exact", "epsilon": 0.1, "window": "24h"}`)
	if code != 201 {
		t.Fatalf("%d %v", code, m)
	}
	led := m["ledger"].(map[string]any)
	if led["rule"] != "dp-leakage" || led["spent"].(float64) > 10 {
		t.Fatalf("the scenario changed: %v", led)
	}
	code, lg, _ := f.do("GET", "/v1/datasets/big/ledger", f.admin, "")
	if code != 200 {
		t.Fatalf("%d %v", code, lg)
	}
	for what, obj := range map[string]map[string]any{"the release's ledger": led, "the ledger": lg} {
		p, _ := obj["pricing"].(string)
		for _, want := range []string{"dp-leakage", "lower than the sum of the individual releases' ε, 40.1", "not a refund", "§8.6"} {
			if !strings.Contains(p, want) {
				t.Errorf("%s: pricing %q does not say %q", what, p, want)
			}
		}
		if obj["sum_of_releases"] != 40.1 {
			t.Errorf("%s: sum_of_releases %v, want 40.1", what, obj["sum_of_releases"])
		}
	}
}
