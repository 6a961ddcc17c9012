package serve

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/pufferfish-privacy/pufferfish/ledger"
)

// Issue 39, item 4: the stream chart's time axis at 679 windows (and
// other counts, widths and starts, across a year's end too) has tick
// labels that never overlap and stay inside the chart, as the browser
// lays them out; and the label-choosing function (xTicks) keeps a gap
// between every two neighbours by its own estimate for any span.
func TestAxisLabelsNeverOverlapInBrowser(t *testing.T) {
	needBrowser(t)
	dir := t.TempDir()
	store, err := ledger.Open(t.Context(), filepath.Join(dir, "l.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, err := New(Config{Store: store, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptestServer(t, s)
	b := openBrowser(t, dir)
	b.step("open the page", chromedp.Navigate(srv), chromedp.WaitVisible(chromedp.ID("token")))
	n := 0
	for _, windows := range []int{12, 150, 679, 2000} {
		for _, width := range []string{"600e3", "3600e3", "6 * 3600e3", "86400e3", "7 * 86400e3"} {
			for _, start := range []string{"Date.UTC(2026, 0, 5)", "Date.UTC(2025, 11, 20, 7)"} {
				id := fmt.Sprintf("axis-%d", n)
				n++
				b.eval(`(() => { const pts = [...Array(` + fmt.Sprint(windows) + `).keys()].map((i) => [` + start + ` + i * ` + width + `, (i * 37) % 11 - 3, "w" + i]);
				  const c = plot([{ name: "sit", points: pts, color: "#0072b2" }, { name: "run", points: pts.map((p) => [p[0], p[1] * 2, p[2]]), color: "#e69f00" }], { xtime: true, markers: pts.length <= 150, xlabel: "window start", ylabel: "counts, estimate" });
				  c.id = "` + id + `"; document.body.append(c); return ""; })()`)
				var f chartFacts
				raw := b.eval(chartFactsJS + `("` + id + `")`)
				if err := json.Unmarshal([]byte(raw), &f); err != nil {
					t.Fatal(err)
				}
				if len(f.Overlaps) > 0 || len(f.Clipped) > 0 || len(f.XTicks) < 2 {
					t.Errorf("%d windows of %s ms from %s: x ticks %q, overlapping %q, clipped %q", windows, width, start, f.XTicks, f.Overlaps, f.Clipped)
				}
			}
		}
	}
	// the function itself, over spans from a minute to decades, on
	// plot widths from narrow to wide
	bad := b.eval(`(() => { const out = [];
	  for (const span of [60e3, 3600e3, 86400e3, 679 * 3600e3, 679 * 86400e3, 30 * 365 * 86400e3]) for (const w of [120, 250, 400, 800]) for (const a of [Date.UTC(2025, 11, 31, 23), Date.UTC(2026, 5, 1)]) {
	    const tx = xTicks(a, a + span, w, { xtime: true });
	    const X = (v) => (v - tx.lo) / (tx.hi - tx.lo) * w;
	    const shown = tx.ticks.map((v, i) => [X(v), tx.labels[i]]).filter((p) => p[1] !== "");
	    if (shown.length < 2) out.push(span + "/" + w + ": " + shown.length + " labels");
	    for (let i = 1; i < shown.length; i++) if (shown[i][0] - shown[i - 1][0] < (shown[i][1].length + shown[i - 1][1].length) * CHAR / 2 + 8)
	      out.push(span + "/" + w + ": " + shown[i - 1][1] + " × " + shown[i][1]);
	  }
	  return out.join("; "); })()`)
	if bad != "" {
		t.Errorf("xTicks: %s", bad)
	}
}
