package serve

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// chartFacts is what the browser test reads off a rendered chart: the
// tick labels, the axis titles, the legend and which labels' boxes
// overlap.
type chartFacts struct {
	YTicks   []string `json:"y_ticks"`
	XTicks   []string `json:"x_ticks"`
	YTitle   string   `json:"y_title"`
	XTitle   string   `json:"x_title"`
	Legend   []string `json:"legend"`   // names
	Keys     []string `json:"keys"`     // each legend name's key colour
	Lines    []string `json:"lines"`    // the plotted lines' colours
	Bars     []string `json:"bars"`     // data-state of each bar
	Points   []string `json:"points"`   // each point marker's tooltip
	Overlaps []string `json:"overlaps"` // pairs of labels whose boxes intersect
	Clipped  []string `json:"clipped"`  // labels not wholly inside the chart
	Missing  bool     `json:"missing"`  // no such chart
}

// chartFactsJS reads a chart (by the id of its svg) in the page.
const chartFactsJS = `((id) => {
  const s = document.getElementById(id);
  if (!s) return JSON.stringify({missing: true});
  const texts = (sel) => [...s.querySelectorAll(sel)];
  const t = (e) => e.textContent;
  const labels = texts("text");
  const overlaps = [], box = s.getBoundingClientRect();
  const clipped = labels.filter((e) => { const r = e.getBoundingClientRect();
    return r.width && (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5); }).map(t);
  for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
    const a = labels[i].getBoundingClientRect(), b = labels[j].getBoundingClientRect();
    if (a.width && b.width && a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
      overlaps.push(t(labels[i]) + " × " + t(labels[j]));
  }
  return JSON.stringify({
    y_ticks: texts(".y-ticks text").map(t), x_ticks: texts(".x-ticks text").map(t),
    y_title: texts(".y-title text").map(t).join(""), x_title: texts(".x-title text").map(t).join(""),
    legend: texts(".legend-item").map((g) => g.dataset.name),
    keys: texts(".legend-item .legend-key").map((k) => k.getAttribute("stroke")),
    lines: texts("path").map((p) => p.getAttribute("stroke")),
    bars: texts("rect.bar").map((r) => r.dataset.state),
    points: texts("circle.point").map(t),
    overlaps, clipped,
  });
})`

// niceTicks checks tick labels: numbers, increasing, each a round number
// — m·10^k with m in {1, 2, 5} (log axes), or equally spaced by such a
// step with every tick a multiple of it (linear axes).
func niceTicks(labels []string, log bool) error {
	if len(labels) < 2 {
		return fmt.Errorf("ticks %q: want at least two", labels)
	}
	var v []float64
	for _, l := range labels {
		f, err := strconv.ParseFloat(l, 64)
		if err != nil {
			return fmt.Errorf("tick %q is not a number", l)
		}
		v = append(v, f)
	}
	round := func(x float64) bool { // 1, 2 or 5 × 10^k
		if x <= 0 {
			return false
		}
		e := math.Floor(math.Log10(x) + 1e-9)
		m := x / math.Pow(10, e)
		for _, w := range []float64{1, 2, 5, 10} {
			if math.Abs(m-w) < 1e-9*w {
				return true
			}
		}
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i] <= v[i-1] {
			return fmt.Errorf("ticks %q do not increase", labels)
		}
	}
	if log {
		for i, x := range v {
			if !round(x) {
				return fmt.Errorf("tick %q is not 1, 2 or 5 × 10^k", labels[i])
			}
		}
		return nil
	}
	step := v[1] - v[0]
	if !round(step) {
		return fmt.Errorf("ticks %q step by %v, not 1, 2 or 5 × 10^k", labels, step)
	}
	for i, x := range v {
		if q := x / step; math.Abs(q-math.Round(q)) > 1e-6 || math.Abs(v[i]-v[0]-float64(i)*step) > 1e-9*math.Max(1, math.Abs(x)) {
			return fmt.Errorf("ticks %q are not multiples of the step %v", labels, step)
		}
	}
	return nil
}

// checkChart checks one rendered chart's labels.
func checkChart(t *testing.T, name, raw string, log bool, legend []string) chartFacts {
	t.Helper()
	var f chartFacts
	if err := json.Unmarshal([]byte(raw), &f); err != nil || f.Missing {
		t.Fatalf("%s: %v %q", name, err, raw)
	}
	if len(f.Overlaps) > 0 {
		t.Errorf("%s: labels overlap: %q", name, f.Overlaps)
	}
	if len(f.Clipped) > 0 {
		t.Errorf("%s: labels cut by the chart's edge: %q", name, f.Clipped)
	}
	if err := niceTicks(f.YTicks, log); err != nil {
		t.Errorf("%s y axis: %v", name, err)
	}
	if f.YTitle == "" || f.XTitle == "" {
		t.Errorf("%s: axis titles %q, %q", name, f.YTitle, f.XTitle)
	}
	if legend != nil {
		if !slices.Equal(f.Legend, legend) {
			t.Errorf("%s: legend %q, want %q", name, f.Legend, legend)
		}
		if len(f.Keys) != len(f.Legend) {
			t.Errorf("%s: %d colour keys for %d legend names", name, len(f.Keys), len(f.Legend))
		}
		for i, k := range f.Keys {
			if i < len(f.Lines) && k != f.Lines[i] || k == "" {
				t.Errorf("%s: legend %q has key colour %q, its line %q", name, f.Legend[i], k, f.Lines[i])
			}
		}
	}
	return f
}

// TestNiceTicksCheck: the tick checker itself refuses the page's old
// ticks (0, 1.5, 3 under bars; 2294.55) and takes round ones.
func TestNiceTicksCheck(t *testing.T) {
	for _, c := range []struct {
		ticks []string
		log   bool
		ok    bool
	}{
		{[]string{"0", "1147.27", "2294.55"}, false, false},
		{[]string{"0", "500", "1000", "1500", "2000", "2500"}, false, true},
		{[]string{"-10", "0", "10", "20"}, false, true},
		{[]string{"0", "0.005", "0.01", "0.015"}, false, true},
		{[]string{"0", "3", "6"}, false, false},
		{[]string{"0.1", "1", "10", "100", "1000", "10000"}, true, true},
		{[]string{"1", "69.28", "4800"}, true, false},
		{[]string{"1e5", "1e6"}, true, true},
	} {
		if err := niceTicks(c.ticks, c.log); (err == nil) != c.ok {
			t.Errorf("%q (log %v): %v, want nice = %v", c.ticks, c.log, err, c.ok)
		}
	}
	if !strings.Contains(chartFactsJS, "getBoundingClientRect") {
		t.Fatal("the chart reader no longer measures the labels")
	}
}
