package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pufferfish-privacy/pufferfish/ledger"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
	"github.com/pufferfish-privacy/pufferfish/stream"
)

// chromium is Debian's browser, which .ci/run installs.
const chromium = "/usr/bin/chromium"

// needBrowser skips a browser test in -short mode or without chromium
// (fails instead under PUFF_REQUIRE_BROWSER).
func needBrowser(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("PUFF_REQUIRE_BROWSER") != "" {
			t.Fatalf("%s: %v (apt-get install chromium)", chromium, err)
		}
		t.Skipf("no %s: the browser test needs Debian's chromium (CI installs it)", chromium)
	}
}

// browser is a headless chromium tab with the tests' helpers.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// openBrowser starts chromium (profile under dir), closed at the test's end.
func openBrowser(t *testing.T, dir string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.UserDataDir(filepath.Join(dir, "chrome")), chromedp.WindowSize(1200, 1000), chromedp.Flag("disable-gpu", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	return &browser{t, ctx}
}

func (b *browser) step(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval runs js in the page and returns its string value.
func (b *browser) eval(js string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitFor polls js until it returns a non-empty string.
func (b *browser) waitFor(js, what string) string {
	b.t.Helper()
	for range 300 {
		if v := b.eval(js); v != "" {
			return v
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("timed out waiting for %s", what)
	return ""
}

// screenshot saves the whole page as a PNG to the file named by the
// environment variable env, if set.
func (b *browser) screenshot(env string) {
	b.t.Helper()
	out := os.Getenv(env)
	if out == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// The web page in a real headless browser: sign in with a token, register
// the bundled example (budget 3), release twice at ε = 1.2 and watch the
// budget bar move, see the third release refused. With PUFF_SCREENSHOT=FILE
// it also saves a screenshot (the README's).
func TestWebPageInBrowser(t *testing.T) {
	needBrowser(t)
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

	b := openBrowser(t, dir)
	step, eval, waitFor := b.step, b.eval, b.waitFor
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
	// the planner's table: method exact's used scale at each ε and the
	// bound that gave it, as /v1/scale answers (issue 40)
	checkPlannerTable(t, b, srv, admin, "example")

	release := func() string {
		t.Helper()
		step("release", chromedp.SetValue(chromedp.ID("epsilon"), "1.2"), chromedp.Click(chromedp.ID("release-btn")))
		msg := waitFor(`(m => m.startsWith('Released') || m.startsWith('Refused') || m.startsWith('Error') ? m : '')(document.querySelector('#message').textContent)`, "the release's answer")
		// the list is redrawn after the answer
		time.Sleep(300 * time.Millisecond)
		return msg
	}
	// the second composes with the first by the dp-leakage rule (both
	// calibrated by the temporal leakage bound): 2.513 of 3, not 2.4
	for i, want := range []float64{40, 83.78} {
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
		// the bars are the estimate, each released value is marked on its
		// bar, and the page says why a released value can be negative and
		// what the estimate is (docs/math.md §4.14)
		if !slices.Equal(h.Legend, []string{"estimate", "released noisy value"}) {
			t.Errorf("histogram: legend %q", h.Legend)
		}
		if n := eval(`String(document.querySelectorAll('#histogram line.mark').length)`); n != "4" {
			t.Errorf("histogram: %s marks of released values, want one per state", n)
		}
		note := eval(`(e => e ? e.textContent : '')(document.querySelector('#estimate-note'))`)
		for _, want := range []string{"released noisy values", "can come out negative", "estimate", "no negative bin", "summing to the 4770 readings", "costs no privacy"} {
			if !strings.Contains(note, want) {
				t.Errorf("the note under the histogram %q does not say %q", note, want)
			}
		}
	}
	waitFor(`document.querySelector('#ledger-plot svg path') ? 'ok' : ''`, "the ledger's plot")
	lg := checkChart(t, "ledger", eval(chartFactsJS+`(document.querySelector('#ledger-plot svg').id = 'ledger-svg')`), false, []string{"cumulative ε", "sum of the releases' ε", "budget"})
	if err := niceTicks(lg.XTicks, false); err != nil || slices.ContainsFunc(lg.XTicks, func(x string) bool { return strings.Contains(x, ".") }) {
		t.Errorf("ledger: release axis %q: %v, want whole numbers", lg.XTicks, err)
	}
	msg := release()
	if !strings.HasPrefix(msg, "Refused") || !strings.Contains(msg, "budget") {
		t.Fatalf("third release: %s", msg)
	}
	if w := barWidth(); w < 83.77 || w > 83.79 {
		t.Fatalf("a refused release moved the bar to %v%%", w)
	}
	if n := eval(`String(document.querySelectorAll('#ledger-table tbody tr').length)`); n != "2" {
		t.Fatalf("ledger table has %s rows", n)
	}
	b.screenshot("PUFF_SCREENSHOT")
	es, _ := store.Entries(context.Background(), "example")
	if len(es) != 2 {
		t.Fatalf("%d releases recorded", len(es))
	}
}

// The stream's chart in a real headless browser: a stream on "activity"
// (1h windows in Europe/Paris time, ε = 2) fed through the API, its
// released windows drawn as one line per state over the windows' starts,
// with round ticks on the zone's clock, the legend, and the stream's
// settings as text; a dataset without a stream quietly says so. With
// PUFF_STREAM_SCREENSHOT=FILE it saves a screenshot.
func TestStreamChartInBrowser(t *testing.T) {
	needBrowser(t)
	ctx := context.Background()
	dir := t.TempDir()
	store, err := ledger.Open(ctx, filepath.Join(dir, "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	admin, _, err := store.CreateToken(ctx, []string{"admin"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: store, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Demo(ctx, io.Discard); err != nil { // "activity", budget 3
		t.Fatal(err)
	}
	class, err := markov.ParseClass(release.ExampleClass(), "class")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Init(ctx, ledger.Registration{Name: "quiet", Budget: big.NewRat(1, 1), Class: class}); err != nil {
		t.Fatal(err)
	}
	states := []string{"sleep", "sit", "walk", "run"}
	st, err := stream.Declare(reading.Spec{States: strings.Join(states, ","), TZ: "Europe/Paris", Step: 600}, "1h", 2, mechanism.Exact, "counts", class)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Init(ctx, store, "activity", st); err != nil {
		t.Fatal(err)
	}
	srv := httptestServer(t, s)
	post := func(path, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("POST", srv+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d %v %v", path, resp.StatusCode, m, err)
		}
		return m
	}
	// three households every 10 minutes from 07:00 to 18:50 UTC (08:00 to
	// 19:50 in Paris, CET in November), then windows up to 19:00 UTC closed:
	// 12 windows of 1h starting 08:00 to 19:00 Paris time
	var csv strings.Builder
	csv.WriteString("series,time,state\n")
	t0 := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	for i := range 72 {
		for h := range 3 {
			fmt.Fprintf(&csv, "h%d,%s,%s\n", h, t0.Add(time.Duration(i)*10*time.Minute).Format(time.RFC3339), states[(i/6+h)%4])
		}
	}
	post("/v1/streams/activity/readings", csv.String())
	post("/v1/streams/activity/readings?close=2026-11-25T19:00:00Z", "")

	// what the server released, to compare the page with
	req, _ := http.NewRequest("GET", srv+"/v1/streams/activity/windows", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var served struct {
		Stream struct {
			Calibration struct{ Method string } `json:"calibration"`
		} `json:"stream"`
		Windows []struct {
			Start     string `json:"start"`
			Histogram []struct {
				State    string  `json:"state"`
				Value    float64 `json:"value"`
				Estimate float64 `json:"estimate"`
			} `json:"histogram"`
		} `json:"windows"`
	}
	err = json.NewDecoder(resp.Body).Decode(&served)
	resp.Body.Close()
	if err != nil || len(served.Windows) != 12 || served.Windows[0].Start != "2026-11-25T08:00:00+01:00" || served.Stream.Calibration.Method == "" {
		t.Fatalf("the served windows: %v %+v", err, served)
	}
	want := map[string]float64{} // "state, start" → the window's estimate
	for _, w := range served.Windows {
		for _, b := range w.Histogram {
			want[b.State+", "+w.Start] = b.Estimate
		}
	}

	b := openBrowser(t, dir)
	b.step("open the page", chromedp.Navigate(srv), chromedp.WaitVisible(chromedp.ID("token")))
	b.step("sign in", chromedp.SendKeys(chromedp.ID("token"), admin), chromedp.Click(chromedp.ID("login")))
	b.waitFor(`document.querySelector('#stream-chart') ? 'ok' : ''`, "the stream's chart")
	f := checkChart(t, "stream", b.eval(chartFactsJS+`("stream-chart")`), false, states)
	// round hours on Paris's clock over 08:00 … 19:00 (on UTC's, 07:00 …
	// 18:00, the ticks would end at 18:00)
	if want := []string{"06:00", "09:00", "12:00", "15:00", "18:00", "21:00"}; !slices.Equal(f.XTicks, want) {
		t.Errorf("stream: time ticks %q, want %q", f.XTicks, want)
	}
	if !strings.Contains(f.XTitle, "Europe/Paris") || !strings.Contains(f.XTitle, "2026-11-25") || !strings.Contains(f.YTitle, "estimate") {
		t.Errorf("stream: axis titles %q, %q", f.XTitle, f.YTitle)
	}
	if note := b.eval(`(e => e ? e.textContent : '')(document.querySelector('#stream-note'))`); !strings.Contains(note, "estimate") || !strings.Contains(note, "can be negative") {
		t.Errorf("stream: the note %q does not say what the points are", note)
	}
	// one point per state and window, each the window's estimate
	if len(f.Points) != 12*len(states) {
		t.Errorf("stream: %d points, want %d", len(f.Points), 12*len(states))
	}
	for _, p := range f.Points {
		k, v, _ := strings.Cut(p, ": ")
		x, err := strconv.ParseFloat(v, 64)
		if w, ok := want[k]; !ok || err != nil || math.Abs(x-w) > 1e-5*math.Max(1, math.Abs(w)) {
			t.Errorf("stream: point %q, released %v (%v)", p, w, ok)
		}
	}
	info := b.eval(`JSON.stringify(Object.fromEntries([...document.querySelectorAll('#stream-info li')].map((li) => [li.dataset.field, li.querySelector('.value').textContent])))`)
	var got map[string]string
	json.Unmarshal([]byte(info), &got)
	if got["epsilon"] != "2" || got["window"] != "1h" || got["calibration"] != served.Stream.Calibration.Method || got["windows"] != "12" || got["sigma"] == "" {
		t.Errorf("stream settings as shown: %v", got)
	}
	b.waitFor(`document.querySelector('#planner svg path') ? 'ok' : ''`, "the planner's plot")
	b.screenshot("PUFF_STREAM_SCREENSHOT")

	// many states: the legend wraps onto rows inside the chart, clear of
	// the plot's labels, with a key per state
	var many []string
	for i := range 10 {
		many = append(many, fmt.Sprintf("state number %d", i))
	}
	b.eval(`(() => { const names = ` + string(mustJSON(many)) + `;
	  const c = plot(names.map((n, i) => ({ name: n, points: [[Date.UTC(2026, 0, 1, i), i * 7 - 20], [Date.UTC(2026, 0, 2, 12), 5]], color: STATE_COLORS[i % 8] })), { xtime: true, markers: true, xlabel: "window start", ylabel: "noisy counts" });
	  c.id = "many-states"; document.body.append(c); return ""; })()`)
	mf := checkChart(t, "many states", b.eval(chartFactsJS+`("many-states")`), false, many)
	if want := []string{"01-01", "12:00", "01-02", "12:00"}; !slices.Equal(mf.XTicks, want) {
		t.Errorf("many states: time ticks %q, want %q", mf.XTicks, want)
	}
	if rows := b.eval(`String(new Set([...document.querySelectorAll('#many-states .legend-key')].map((k) => k.getAttribute('y1'))).size)`); rows == "1" {
		t.Errorf("many states: the legend did not wrap")
	}

	// a dataset without a stream: a quiet note, no chart
	b.step("select quiet", chromedp.SetValue(chromedp.ID("dataset"), "quiet"))
	b.eval(`document.querySelector('#dataset').dispatchEvent(new Event('change')), ''`)
	b.waitFor(`(e => e ? e.textContent : '')(document.querySelector('#no-stream'))`, "the no-stream note")
	if b.eval(`document.querySelector('#stream-chart') ? 'chart' : ''`) != "" {
		t.Error("a chart for a dataset without a stream")
	}
}

// A running stream's chart (docs/math.md §4.12): one point per state and
// closed window at the window's end, each the released total since the
// first window (not the node drawn at that window), and the settings say
// so.
func TestRunningStreamChartInBrowser(t *testing.T) {
	needBrowser(t)
	ctx := context.Background()
	dir := t.TempDir()
	store, err := ledger.Open(ctx, filepath.Join(dir, "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	admin, _, err := store.CreateToken(ctx, []string{"admin"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: store, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Demo(ctx, io.Discard); err != nil { // "activity", budget 3
		t.Fatal(err)
	}
	class, err := markov.ParseClass(release.ExampleClass(), "class")
	if err != nil {
		t.Fatal(err)
	}
	states := []string{"sleep", "sit", "walk", "run"}
	st, err := stream.Declare(reading.Spec{States: strings.Join(states, ","), Step: 600}, "1h", 2, mechanism.Exact, "counts", class)
	if err == nil {
		err = st.SetRunning()
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Init(ctx, store, "activity", st); err != nil {
		t.Fatal(err)
	}
	srv := httptestServer(t, s)
	var csv strings.Builder
	csv.WriteString("series,time,state\n")
	t0 := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	for i := range 36 {
		for h := range 2 {
			fmt.Fprintf(&csv, "h%d,%s,%s\n", h, t0.Add(time.Duration(i)*10*time.Minute).Format(time.RFC3339), states[(i/6+h)%4])
		}
	}
	req, _ := http.NewRequest("POST", srv+"/v1/streams/activity/readings?close=2026-11-25T13:00:00Z", strings.NewReader(csv.String()))
	req.Header.Set("Authorization", "Bearer "+admin)
	var served struct {
		Windows []struct {
			End     string `json:"end"`
			Running struct {
				Total []struct {
					State    string  `json:"state"`
					Value    float64 `json:"value"`
					Estimate float64 `json:"estimate"`
				} `json:"total"`
			} `json:"running"`
		} `json:"windows"`
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&served)
	resp.Body.Close()
	if err != nil || len(served.Windows) != 6 || len(served.Windows[5].Running.Total) != 4 {
		t.Fatalf("the released totals: %v %+v", err, served)
	}
	want := map[string]float64{} // the totals' estimates (docs/math.md §4.14)
	for _, w := range served.Windows {
		for _, b := range w.Running.Total {
			want[b.State+", "+w.End] = b.Estimate
		}
	}
	b := openBrowser(t, dir)
	b.step("open the page", chromedp.Navigate(srv), chromedp.WaitVisible(chromedp.ID("token")))
	b.step("sign in", chromedp.SendKeys(chromedp.ID("token"), admin), chromedp.Click(chromedp.ID("login")))
	b.waitFor(`document.querySelector('#stream-chart') ? 'ok' : ''`, "the stream's chart")
	f := checkChart(t, "running stream", b.eval(chartFactsJS+`("stream-chart")`), false, states)
	if !strings.Contains(f.XTitle, "window end") || !strings.Contains(f.YTitle, "cumulative") {
		t.Errorf("running stream: axis titles %q, %q", f.XTitle, f.YTitle)
	}
	if len(f.Points) != 6*len(states) {
		t.Errorf("running stream: %d points, want %d", len(f.Points), 6*len(states))
	}
	for _, p := range f.Points {
		k, v, _ := strings.Cut(p, ": ")
		x, err := strconv.ParseFloat(v, 64)
		if w, ok := want[k]; !ok || err != nil || math.Abs(x-w) > 1e-5*math.Max(1, math.Abs(w)) {
			t.Errorf("running stream: point %q, released total %v (%v)", p, w, ok)
		}
	}
	if m := b.eval(`document.querySelector('#stream-info li[data-field=method] .value').textContent`); !strings.Contains(m, "running totals") {
		t.Errorf("running stream: method shown as %q", m)
	}
}

// Issue 34, the page: the Release panel shows only the selected dataset's
// release (another dataset's histogram and "Released #n" are cleared when
// the selector changes), and a dataset made by puff stream init — no data
// source, its class the stream's — has its class on its card and σ in
// its planner (the card said "no class yet" and the planner was empty).
func TestReleasePanelAndStreamDatasetInBrowser(t *testing.T) {
	needBrowser(t)
	ctx := context.Background()
	dir := t.TempDir()
	store, err := ledger.Open(ctx, filepath.Join(dir, "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	admin, _, err := store.CreateToken(ctx, []string{"admin"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: store, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Demo(ctx, io.Discard); err != nil { // "activity", budget 3
		t.Fatal(err)
	}
	// as puff ledger init then puff stream init make it: no class, no source
	if err := store.Init(ctx, ledger.Registration{Name: "meters", Budget: big.NewRat(1, 1)}); err != nil {
		t.Fatal(err)
	}
	class, err := markov.ParseClass(strings.NewReader(`{"states": ["off", "on"], "chains": [{"transition": [[0.8, 0.2], [0.1, 0.9]], "initial": "stationary"}]}`), "class")
	if err != nil {
		t.Fatal(err)
	}
	st, err := stream.Declare(reading.Spec{SeriesCol: "meter", Step: 3600}, "24h", 0.5, mechanism.Exact, "counts", class)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Init(ctx, store, "meters", st); err != nil {
		t.Fatal(err)
	}
	srv := httptestServer(t, s)
	b := openBrowser(t, dir)
	b.step("open the page", chromedp.Navigate(srv), chromedp.WaitVisible(chromedp.ID("token")))
	b.step("sign in", chromedp.SendKeys(chromedp.ID("token"), admin), chromedp.Click(chromedp.ID("login")))
	b.waitFor(`document.querySelector('.ds[data-name="meters"]') && document.querySelector('#dataset').value === 'activity' ? 'ok' : ''`, "the datasets, activity selected")

	// the stream dataset's card names its class
	card := b.eval(`document.querySelector('.ds[data-name="meters"] .muted').textContent`)
	if strings.Contains(card, "no class") || !strings.Contains(card, "2 states, 1 chain(s)") {
		t.Errorf("the stream dataset's card: %q, want its class (2 states, 1 chain)", card)
	}

	// a release on activity, then meters selected: the panel is cleared
	b.step("release on activity", chromedp.SetValue(chromedp.ID("epsilon"), "1"), chromedp.Click(chromedp.ID("release-btn")))
	msg := b.waitFor(`(m => m.startsWith('Released') || m.startsWith('Refused') || m.startsWith('Error') ? m : '')(document.querySelector('#message').textContent)`, "the release's answer")
	if !strings.HasPrefix(msg, "Released #") {
		t.Fatalf("release: %s", msg)
	}
	b.waitFor(`document.querySelector('#result svg rect.bar') ? 'ok' : ''`, "activity's histogram")
	b.step("select meters", chromedp.SetValue(chromedp.ID("dataset"), "meters"))
	b.eval(`document.querySelector('#dataset').dispatchEvent(new Event('change')), ''`)
	b.waitFor(`document.querySelector('.ds.selected[data-name="meters"]') ? 'ok' : ''`, "meters selected")
	if got := b.eval(`document.querySelector('#message').textContent + '|' + document.querySelector('#result').innerHTML`); got != "|" {
		t.Errorf("after selecting meters the Release panel still shows %q", got)
	}
	// its planner: σ of the stream's class for every method that applies
	b.waitFor(`document.querySelector('#planner svg path') ? 'ok' : ''`, "meters' planner plot")
	checkChart(t, "meters planner σ", b.eval(chartFactsJS+`("planner-sigma")`), true, []string{"exact", "approx", "groupdp", "dp"})
	// back on activity: its own earlier release is not shown either
	b.step("select activity", chromedp.SetValue(chromedp.ID("dataset"), "activity"))
	b.eval(`document.querySelector('#dataset').dispatchEvent(new Event('change')), ''`)
	b.waitFor(`document.querySelector('.ds.selected[data-name="activity"]') ? 'ok' : ''`, "activity selected")
	if got := b.eval(`document.querySelector('#message').textContent + '|' + document.querySelector('#result').innerHTML`); got != "|" {
		t.Errorf("after selecting activity again the Release panel shows %q", got)
	}
}

// checkPlannerTable checks the page's planner table against /v1/scale:
// a row per ε of method exact with the σ a release draws its noise with
// and the bound that set it (the leakage bound named when it did).
func checkPlannerTable(t *testing.T, b *browser, srv, token, name string) {
	t.Helper()
	b.waitFor(`document.querySelector('#planner-table tbody tr') ? 'ok' : ''`, "the planner's table of used scales")
	var rows [][]string
	if err := json.Unmarshal([]byte(b.eval(`JSON.stringify([...document.querySelectorAll('#planner-table tbody tr')].map(r => [r.dataset.used, ...[...r.cells].map(c => c.textContent)]))`)), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 {
		t.Fatalf("the planner's table has %d rows, want one per ε (7): %v", len(rows), rows)
	}
	for _, row := range rows {
		req, _ := http.NewRequest("GET", srv+"/v1/scale?dataset="+name+"&method=exact&epsilon="+row[1], nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var a map[string]any
		json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		sig := strconv.FormatFloat(a["sigma"].(float64), 'g', 4, 64)
		if v, _ := strconv.ParseFloat(sig, 64); true {
			sig = strconv.FormatFloat(v, 'f', -1, 64)
		}
		want := map[string]string{"tpl": "temporal leakage bound", "mqm": "Markov Quilt Mechanism"}[fmt.Sprint(a["used"])]
		if row[0] != a["used"] || row[2] != sig || want == "" || !strings.Contains(row[4], want) {
			t.Errorf("ε = %s: the page's row %v, /v1/scale's σ %v (%s) used %v", row[1], row, a["sigma"], sig, a["used"])
		}
		if a["used"] == "tpl" && !strings.Contains(row[4], a["leakage_bound"].(string)) {
			t.Errorf("ε = %s: the row does not name the leakage bound %v: %v", row[1], a["leakage_bound"], row)
		}
	}
}
