package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// A profile through the API: 24 cells, the total and the ledger's charge
// both ε, the ledger listing it as a profile; a bad kind, a window with a
// profile, and a relative profile with empty cells are 400s naming the
// field, with nothing spent.
func TestReleaseProfile(t *testing.T) {
	f := newFixture(t, "")
	rel := "/v1/datasets/activity/releases"
	for _, c := range []struct{ body, field, msg string }{
		{`{"epsilon": 0.5, "profile": "month"}`, "profile", "want hour-of-day"},
		{`{"epsilon": 0.5, "profile": "hour-of-day", "window": "1h"}`, "profile", "not both"},
		{`{"epsilon": 0.5, "profile": "hour-of-day", "query": "relative"}`, "", "cell "},
	} {
		code, body, _ := f.do("POST", rel, f.admin, c.body)
		if msg, _ := body["error"].(string); code != 400 || body["field"] != any(c.field) && c.field != "" || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %d %v", c.body, code, body)
		}
	}
	code, body, _ := f.do("POST", rel, f.admin, `{"epsilon": 0.5, "profile": "hour-of-day"}`)
	if code != 201 {
		t.Fatalf("%d %v", code, body)
	}
	cells, _ := body["profile"].([]any)
	total, _ := body["total"].(map[string]any)
	led, _ := body["ledger"].(map[string]any)
	if body["profile_kind"] != "hour-of-day" || len(cells) != 24 || total["epsilon"] != 0.5 || led["spent"] != 0.5 {
		t.Fatalf("%d cells, kind %v, total %v, ledger %v", len(cells), body["profile_kind"], total, led)
	}
	if c0, _ := cells[0].(map[string]any); c0["cell"] != "00" || c0["per_bin_scale"] == nil {
		t.Fatalf("cell %v", cells[0])
	}
	_, l, _ := f.do("GET", "/v1/datasets/activity/ledger", f.admin, "")
	rs, _ := l["releases"].([]any)
	if len(rs) != 1 || rs[0].(map[string]any)["query"] != "counts by hour-of-day" {
		t.Fatalf("ledger %v", l)
	}
}

// The page releases a profile: the profile select sends it, the chart
// draws one line per state over the 24 cells with its legend, and the
// audit names the profile and its total. With PUFF_PROFILE_SCREENSHOT=FILE
// it saves a screenshot.
func TestProfileInBrowser(t *testing.T) {
	needBrowser(t)
	dir := t.TempDir()
	store, err := ledger.Open(context.Background(), filepath.Join(dir, "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, err := New(Config{Store: store, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Demo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(strings.TrimPrefix(buf.String(), "admin token (shown once): "))
	srv := httptestServer(t, s)
	b := openBrowser(t, dir)
	b.step("open the page and sign in", chromedp.Navigate(srv), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), admin), chromedp.Click(chromedp.ID("login")))
	b.waitFor(`document.querySelector('#release-form') && document.querySelector('#dataset').value ? 'ok' : ''`, "the release form")
	b.step("release a profile", chromedp.SetValue(chromedp.ID("profile"), "hour-of-day"), chromedp.SetValue(chromedp.ID("epsilon"), "0.5"), chromedp.Click(chromedp.ID("release-btn")))
	msg := b.waitFor(`(m => m.startsWith('Released') || m.startsWith('Refused') || m.startsWith('Error') ? m : '')(document.querySelector('#message').textContent)`, "the release's answer")
	if !strings.HasPrefix(msg, "Released") {
		t.Fatal(msg)
	}
	b.waitFor(`document.querySelector('#result svg path') && document.querySelector('#audit') ? 'ok' : ''`, "the profile's plot and audit")
	checkChart(t, "profile", b.eval(chartFactsJS+`("histogram")`), false, []string{"sleep", "sit", "walk", "run"})
	var audit struct {
		Profile string
		Cells   int
		Total   struct{ Epsilon float64 }
	}
	if err := json.Unmarshal([]byte(b.eval(`document.querySelector('#audit').textContent`)), &audit); err != nil || audit.Profile != "hour-of-day" || audit.Cells != 24 || audit.Total.Epsilon != 0.5 {
		t.Fatalf("audit %+v: %v", audit, err)
	}
	b.screenshot("PUFF_PROFILE_SCREENSHOT")
	es, _ := store.Entries(context.Background(), "activity")
	if len(es) != 1 || es[0].Record.Profile != "hour-of-day" {
		t.Fatalf("%d releases recorded", len(es))
	}
}
