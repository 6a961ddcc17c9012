package serve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// Issue 39, item 2: a registration's name follows the ledger's one
// alphabet (ledger.NameRule, stated in the 400) and a name equal to
// another but for case is a 409; nothing is registered either way.
func TestDatasetNamesOverHTTP(t *testing.T) {
	f := newFixture(t, "")
	for _, name := range []string{" activity", "..", "*", "caf\xe9", "a b", "."} {
		body, _ := json.Marshal(map[string]any{"name": name, "data": "trace.csv", "class": "fit", "states": "x,y", "budget": 1})
		code, ans, _ := f.do("POST", "/v1/datasets", f.admin, string(body))
		if msg, _ := ans["error"].(string); code != 400 || ans["field"] != "name" || !strings.Contains(msg, ledger.NameRule) {
			t.Errorf("name %q: %d %v, want 400 on name stating the rule", name, code, ans)
		}
	}
	for _, twin := range []string{"Activity", "ACTIVITY"} {
		code, ans, _ := f.do("POST", "/v1/datasets", f.admin, `{"name": "`+twin+`", "data": "trace.csv", "class": "fit", "states": "x,y", "budget": 1}`)
		if msg, _ := ans["error"].(string); code != 409 || ans["field"] != "name" || !strings.Contains(msg, "differ only in case") {
			t.Errorf("name %q beside activity: %d %v, want 409", twin, code, ans)
		}
	}
	if sts, err := f.store.Datasets(context.Background()); err != nil || len(sts) != 1 {
		t.Errorf("datasets: %v %v, want activity alone", sts, err)
	}
}
