package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// Start charges the dataset once and reports the stream with the state
// after the charge; Show reads back the settings and the windows released.
func TestStartAndShow(t *testing.T) {
	ctx := context.Background()
	store, err := ledger.Open(ctx, filepath.Join(t.TempDir(), "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Init(ctx, ledger.Registration{Name: "d", Budget: big.NewRat(1, 1)}); err != nil {
		t.Fatal(err)
	}
	s, err := Declare(reading.Spec{States: "0,1,2"}, "1h", 0.5, mechanism.Exact, "counts", testClass(t, `"stationary"`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Start(ctx, store, "d", s)
	if err != nil {
		t.Fatal(err)
	}
	if st.State.Releases != 1 || st.State.Spent.Epsilon.Cmp(big.NewRat(1, 2)) != 0 {
		t.Errorf("state after the charge: %+v", st.State)
	}
	b, err := json.Marshal(st)
	var v map[string]any
	if err != nil || json.Unmarshal(b, &v) != nil || v["window"] != "1h" || v["epsilon"] != 0.5 || v["ledger"] == nil {
		t.Errorf("JSON %s (%v)", b, err)
	}
	var text bytes.Buffer
	if err := st.WriteText(&text); err != nil || !strings.Contains(text.String(), `stream on dataset "d": windows of 1h`) || !strings.Contains(text.String(), "ledger: "+st.State.Line()) {
		t.Errorf("text %q (%v)", text.String(), err)
	}
	if _, _, err := Feed(ctx, store, "d", []byte("time,state\n0,0\n60,1\n7200,2\n"), "x.csv", nil); err != nil {
		t.Fatal(err)
	}
	sh, err := Show(ctx, store, "d")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := sh.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Dataset string            `json:"dataset"`
		Stream  map[string]any    `json:"stream"`
		Windows []json.RawMessage `json:"windows"`
	}
	if err := json.Unmarshal(out.Bytes(), &shown); err != nil || shown.Dataset != "d" || shown.Stream["window"] != "1h" || len(shown.Windows) != len(sh.Windows) || len(sh.Windows) == 0 {
		t.Errorf("show JSON %s (%v)", out.Bytes(), err)
	}
	out.Reset()
	if err := sh.WriteText(&out); err != nil || !strings.Contains(out.String(), "windows released") {
		t.Errorf("show text %q (%v)", out.String(), err)
	}
}
