package ledger

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/pgtest"
)

// List and Export show what was recorded: every dataset's state, one
// dataset's releases, and every release as CSV or JSON lines.
func TestListAndExport(t *testing.T) {
	pgtest.Stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, true)
		cl := testClass(t, 0.9)
		for _, name := range []string{"h1", "h2"} {
			if err := s.Init(ctx, Registration{Name: name, Budget: big.NewRat(1, 1), Class: cl}); err != nil {
				t.Fatal(err)
			}
		}
		for _, eps := range []float64{0.25, 0.5} {
			if _, err := s.Spend(ctx, Spend{Dataset: "h1", Class: cl, Record: rec(cl, eps)}, result(`{"x":1}`)); err != nil {
				t.Fatal(err)
			}
		}
		all, err := List(ctx, s, "")
		if err != nil || len(all.Datasets) != 2 || all.Dataset != nil {
			t.Fatalf("%+v %v", all, err)
		}
		var text bytes.Buffer
		if err := all.WriteText(&text); err != nil || !strings.Contains(text.String(), "h1       1       0.75   0.25       2         mqm-sequential") {
			t.Errorf("datasets table:\n%s(%v)", text.String(), err)
		}
		one, err := List(ctx, s, "h1")
		if err != nil || one.Dataset == nil || len(one.Releases) != 2 || one.Releases[1].Epsilon != 0.5 {
			t.Fatalf("%+v %v", one, err)
		}
		b, err := json.Marshal(one)
		var v struct {
			Dataset  map[string]any   `json:"dataset"`
			Releases []map[string]any `json:"releases"`
		}
		if err != nil || json.Unmarshal(b, &v) != nil || v.Dataset["spent"] != 0.75 || len(v.Releases) != 2 || v.Releases[0]["result"] != nil {
			t.Errorf("JSON %s (%v)", b, err)
		}
		text.Reset()
		if err := one.WriteText(&text); err != nil || !strings.HasPrefix(text.String(), one.Dataset.Line()+"\nclass Θ: "+cl.Hash()+"\nid") {
			t.Errorf("releases table:\n%s(%v)", text.String(), err)
		}
		if _, err := List(ctx, s, "nosuch"); err == nil {
			t.Error("an unknown dataset was listed")
		}
		var out bytes.Buffer
		if err := Export(ctx, s, &out, "", false); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil || len(rows) != 3 || rows[0][0] != "id" || rows[2][1] != "h1" || rows[2][5] != "0.5" || rows[2][9] != "0.75" {
			t.Errorf("CSV %v (%v)", rows, err)
		}
		out.Reset()
		if err := Export(ctx, s, &out, "h1", true); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var e Entry
		if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &e) != nil || e.Dataset != "h1" || string(e.Result) != `{"x":1}` || e.Record.Epsilon != 0.25 {
			t.Errorf("JSON lines %q", lines)
		}
	})
}
