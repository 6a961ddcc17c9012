package commit

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// pending prepares the built-in example at ε, placed for t.
func pending(t *testing.T, eps float64, to Target, origin string) (*release.Pending, error) {
	t.Helper()
	class, err := release.ExampleClassParsed()
	if err != nil {
		t.Fatal(err)
	}
	req := release.Request{CSV: reading.DefaultCSV, Class: class, Options: release.Options{Epsilon: eps, Method: "exact"}}
	if err := Place(context.Background(), &req, to, origin); err != nil {
		return nil, err
	}
	src, name, err := release.OpenData("")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	return release.Prepare(src, name, req, 0)
}

func openLedger(t *testing.T, budget string, origin string) ledger.Store {
	t.Helper()
	ctx := context.Background()
	s, err := ledger.Open(ctx, filepath.Join(t.TempDir(), "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b, _ := new(big.Rat).SetString(budget)
	if err := s.Init(ctx, ledger.Registration{Name: "d", Budget: b, Origin: origin}); err != nil {
		t.Fatal(err)
	}
	return s
}

// A ledger release spends, draws once and records the result it returns;
// one over the budget draws nothing and records nothing.
func TestReleaseLedger(t *testing.T) {
	ctx := context.Background()
	s := openLedger(t, "1", "")
	to := Target{Store: s, Spend: ledger.Spend{Dataset: "d"}}
	p, err := pending(t, 0.75, to, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Release(ctx, p, to)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output == nil || res.Receipt == nil || res.Total != nil {
		t.Fatalf("result %+v", res)
	}
	got, _ := json.Marshal(res.Output)
	if string(got) != string(res.Receipt.Result) {
		t.Errorf("returned %s, recorded %s", got, res.Receipt.Result)
	}
	if _, err := p.Draw(); err == nil {
		t.Error("the release was not drawn")
	}
	extra, field := res.Ledger()
	if len(extra) != 1 || extra[0][1] != res.Receipt.State.Line() || field.Value == nil {
		t.Errorf("ledger lines %v, field %v", extra, field)
	}

	p2, err := pending(t, 0.5, to, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Release(ctx, p2, to); !errors.Is(err, ledger.ErrRefused) {
		t.Fatalf("over budget: %v", err)
	}
	if _, err := p2.Draw(); err != nil {
		t.Errorf("a refused release was drawn: %v", err)
	}
	if es, err := s.Entries(ctx, "d"); err != nil || len(es) != 1 {
		t.Errorf("%d entries recorded (%v), want 1", len(es), err)
	}
}

// A log release is appended to the file under the data's name.
func TestReleaseLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.json")
	to := Target{Log: path, DataName: "dir/trace.csv.gz"}
	for i := 1; i <= 2; i++ {
		p, err := pending(t, 0.5, to, "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := Release(context.Background(), p, to)
		if err != nil {
			t.Fatal(err)
		}
		if res.Total == nil || res.Total.Dataset != "trace" || res.Total.Releases != i {
			t.Fatalf("total %+v after %d releases", res.Total, i)
		}
		extra, _ := res.Ledger()
		if len(extra) != 1 || !strings.HasPrefix(extra[0][1], path+`: dataset "trace"`) {
			t.Errorf("ledger line %v", extra)
		}
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), `"trace/p01"`) {
		t.Errorf("log %s (%v)", b, err)
	}
}

// Unrecorded, nothing is added to the output.
func TestReleaseNowhere(t *testing.T) {
	p, err := pending(t, 1, Target{}, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Release(context.Background(), p, Target{})
	if err != nil || res.Output == nil {
		t.Fatal(res, err)
	}
	if extra, field := res.Ledger(); extra != nil || field.Value != nil {
		t.Errorf("ledger lines %v, field %v", extra, field)
	}
}

// The registered origin is used when none is given, and a different one
// is refused.
func TestPlace(t *testing.T) {
	s := openLedger(t, "1", "0")
	to := Target{Store: s, Spend: ledger.Spend{Dataset: "d"}}
	var oc *OriginConflict
	if _, err := pending(t, 1, to, "5"); !errors.As(err, &oc) || oc.Registered != "0" || oc.Given != "5" {
		t.Errorf("origin 5 against 0: %v", err)
	}
	class, _ := release.ExampleClassParsed()
	req := release.Request{CSV: reading.DefaultCSV, Class: class}
	if err := Place(context.Background(), &req, to, ""); err != nil || req.Origin == nil || req.UnknownStart {
		t.Errorf("registered origin: %v, origin %v, unknown start %v", err, req.Origin, req.UnknownStart)
	}
	req = release.Request{Class: class}
	if err := Place(context.Background(), &req, Target{Log: "x"}, ""); err != nil || req.Origin != nil || !req.UnknownStart {
		t.Errorf("log without origin: %v, origin %v, unknown start %v", err, req.Origin, req.UnknownStart)
	}
}
