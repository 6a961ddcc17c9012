package serve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// chromium is Debian's browser, which .ci/run installs.
const chromium = "/usr/bin/chromium"

// The web page in a real headless browser: sign in with a token, register
// the bundled example (budget 3), release twice at ε = 1.2 and watch the
// budget bar move, see the third release refused. With PUFF_SCREENSHOT=FILE
// it also saves a screenshot (the README's).
func TestWebPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("PUFF_REQUIRE_BROWSER") != "" {
			t.Fatalf("%s: %v (apt-get install chromium)", chromium, err)
		}
		t.Skipf("no %s: the browser test needs Debian's chromium (CI installs it)", chromium)
	}
	dir := t.TempDir()
	store, err := ledger.Open(context.Background(), filepath.Join(dir, "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	admin, _, err := store.CreateToken(context.Background(), []string{"admin"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: store, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptestServer(t, s)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.UserDataDir(filepath.Join(dir, "chrome")), chromedp.WindowSize(1200, 1000), chromedp.Flag("disable-gpu", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	step := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	waitFor := func(js, what string) string {
		t.Helper()
		for range 300 {
			if v := eval(js); v != "" {
				return v
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s", what)
		return ""
	}
	barWidth := func() float64 {
		t.Helper()
		w := eval(`(document.querySelector('.ds[data-name="example"] .budget-bar .spent') || {style: {width: ""}}).style.width`)
		f, err := strconv.ParseFloat(strings.TrimSuffix(w, "%"), 64)
		if err != nil {
			t.Fatalf("budget bar width %q", w)
		}
		return f
	}

	step("open the page", chromedp.Navigate(srv), chromedp.WaitVisible(chromedp.ID("token")))
	// signed out, the page says where a token comes from
	if txt := eval(`document.querySelector('#datasets').textContent`); !strings.Contains(txt, "puff token create") {
		t.Errorf("the signed-out page does not say where a token comes from: %q", txt)
	}
	// ε as the CLI writes it goes to the server as text, numbers as numbers
	if v := eval(`JSON.stringify([epsilonValue("ln(2)"), epsilonValue(" 0.5 "), epsilonValue("1/2")])`); v != `["ln(2)",0.5,"1/2"]` {
		t.Errorf("ε as sent: %s", v)
	}
	step("sign in", chromedp.SendKeys(chromedp.ID("token"), admin), chromedp.Click(chromedp.ID("login")))
	waitFor(`document.querySelector('#who').textContent.includes('signed in') ? 'ok' : ''`, "sign-in")
	step("register the example", chromedp.WaitVisible(chromedp.ID("reg-name")),
		chromedp.SendKeys(chromedp.ID("reg-name"), "example"), chromedp.SendKeys(chromedp.ID("reg-data"), "builtin:activity"),
		chromedp.SendKeys(chromedp.ID("reg-states"), "sleep,sit,walk,run"), chromedp.SetValue(chromedp.ID("reg-budget"), "3"),
		chromedp.Click(chromedp.ID("reg-btn")))
	waitFor(`document.querySelector('.ds[data-name="example"]') ? 'ok' : ''`, "the registered dataset")
	if w := barWidth(); w != 0 {
		t.Fatalf("budget bar at %v%% before any release", w)
	}
	waitFor(`document.querySelector('#planner svg path') ? 'ok' : ''`, "the planner's plot")
	methods := []string{"exact", "approx", "groupdp", "dp"}
	sigma := checkChart(t, "planner σ", eval(chartFactsJS+`("planner-sigma")`), true, methods)
	checkChart(t, "planner L1", eval(chartFactsJS+`("planner-l1")`), true, methods)
	if err := niceTicks(sigma.XTicks, false); err != nil {
		t.Errorf("planner ε axis: %v", err)
	}

	release := func() string {
		t.Helper()
		step("release", chromedp.SetValue(chromedp.ID("epsilon"), "1.2"), chromedp.Click(chromedp.ID("release-btn")))
		msg := waitFor(`(m => m.startsWith('Released') || m.startsWith('Refused') || m.startsWith('Error') ? m : '')(document.querySelector('#message').textContent)`, "the release's answer")
		// the list is redrawn after the answer
		time.Sleep(300 * time.Millisecond)
		return msg
	}
	for i, want := range []float64{40, 80} {
		msg := release()
		if !strings.HasPrefix(msg, "Released") {
			t.Fatalf("release %d: %s", i+1, msg)
		}
		if w := barWidth(); w < want-0.01 || w > want+0.01 {
			t.Fatalf("after release %d the budget bar is at %v%%, want %v%%", i+1, w, want)
		}
		waitFor(`document.querySelector('#result svg rect.bar') && document.querySelector('#audit') ? 'ok' : ''`, "the histogram plot and the audit report")
		// each bar is labelled with its state, in the class's order, and
		// no numeric tick stands under the categories
		states := []string{"sleep", "sit", "walk", "run"}
		h := checkChart(t, "histogram", eval(chartFactsJS+`("histogram")`), false, nil)
		if !slices.Equal(h.XTicks, states) || !slices.Equal(h.Bars, states) {
			t.Errorf("histogram: x labels %q, bars %q, want the states %q", h.XTicks, h.Bars, states)
		}
	}
	waitFor(`document.querySelector('#ledger-plot svg path') ? 'ok' : ''`, "the ledger's plot")
	lg := checkChart(t, "ledger", eval(chartFactsJS+`(document.querySelector('#ledger-plot svg').id = 'ledger-svg')`), false, []string{"cumulative ε", "budget"})
	if err := niceTicks(lg.XTicks, false); err != nil || slices.ContainsFunc(lg.XTicks, func(x string) bool { return strings.Contains(x, ".") }) {
		t.Errorf("ledger: release axis %q: %v, want whole numbers", lg.XTicks, err)
	}
	msg := release()
	if !strings.HasPrefix(msg, "Refused") || !strings.Contains(msg, "budget") {
		t.Fatalf("third release: %s", msg)
	}
	if w := barWidth(); w < 79.99 || w > 80.01 {
		t.Fatalf("a refused release moved the bar to %v%%", w)
	}
	if n := eval(`String(document.querySelectorAll('#ledger-table tbody tr').length)`); n != "2" {
		t.Fatalf("ledger table has %s rows", n)
	}
	if out := os.Getenv("PUFF_SCREENSHOT"); out != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	es, _ := store.Entries(context.Background(), "example")
	if len(es) != 2 {
		t.Fatalf("%d releases recorded", len(es))
	}
}
