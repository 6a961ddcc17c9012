package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hourly writes two series of n hourly readings of a k-state chain that
// stays with probability stay.
func hourly(t *testing.T, k, n int, stay float64) string {
	rng := rand.New(rand.NewPCG(28, uint64(k)))
	var b strings.Builder
	b.WriteString("series,time,state\n")
	for _, s := range []string{"a", "b"} {
		x := 0
		for i := range n {
			if rng.Float64() > stay {
				x = (x + 1 + rng.IntN(k-1)) % k
			}
			fmt.Fprintf(&b, "%s,%d,%d\n", s, i*3600, x)
		}
	}
	return write(t, "hourly.csv", b.String())
}

func medianScale(t *testing.T, out string) (float64, map[string]any) {
	t.Helper()
	var v struct {
		Windows []struct {
			PerBinScale float64        `json:"per_bin_scale"`
			Calibration map[string]any `json:"calibration"`
		} `json:"windows"`
		Total map[string]any `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Windows) == 0 {
		t.Fatalf("%v %.300s", err, out)
	}
	var s []float64
	for _, w := range v.Windows {
		s = append(s, w.PerBinScale)
		if w.Calibration["method"] != "tpl" {
			t.Fatalf("calibration %v: want tpl", w.Calibration)
		}
	}
	slices.Sort(s)
	return s[len(s)/2], v.Total
}

// Issue 28's goals: windows of any width of hourly readings of
// [[0.8,0.2],[0.1,0.9]] at ε = 1 get the per-bin scale of the temporal
// leakage bound, 11.83 (MQM: 44.60), in a batch release and in a per-step
// stream; the 4-state chain (0.7 on the diagonal) at most 8.70. The
// reports name the method and the theorem. (That these scales are
// private is checked by enumeration in package release and tpl.)
func TestWindowsAtTheTemporalLeakageScale(t *testing.T) {
	class := write(t, "c1.json", `{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.1, 0.9]], "initial": "stationary"}]}`)
	data := hourly(t, 2, 150, 0.85)
	for _, w := range []string{"1h", "24h"} {
		out, err := run("release", "--data", data, "--class", class, "--window", w, "--epsilon", "1", "--json")
		if err != nil {
			t.Fatal(err)
		}
		m, total := medianScale(t, out)
		if math.Abs(m-11.83)/11.83 > 0.02 || total["rule"] != "tpl-joint" || !strings.Contains(fmt.Sprint(total["theorem"]), "§8.6") {
			t.Fatalf("--window %s: median per-bin scale %.6g (want 11.83), total %v", w, m, total)
		}
	}
	db := filepath.Join(t.TempDir(), "s.db")
	if _, err := run("ledger", "init", "--ledger", db, "--dataset", "d", "--budget", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := run("stream", "init", "--ledger", db, "--dataset", "d", "--class", class, "--window", "1h", "--epsilon", "1"); err != nil {
		t.Fatal(err)
	}
	out, err := run("stream", "append", "--ledger", db, "--dataset", "d", "--data", data, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := medianScale(t, out); math.Abs(m-11.83)/11.83 > 0.02 {
		t.Fatalf("per-step stream: median per-bin scale %.6g, want 11.83", m)
	}
	four := write(t, "c4.json", `{"states": ["0", "1", "2", "3"], "chains": [{"transition": [[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7]], "initial": "stationary"}]}`)
	out, err = run("release", "--data", hourly(t, 4, 150, 0.7), "--class", four, "--window", "24h", "--epsilon", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := medianScale(t, out); m >= 8.705 { // 8.70 to the table's two decimals
		t.Fatalf("4 states: median per-bin scale %.6g, want at most 8.70", m)
	}
}

// Issue 33's goals on the banded 4-level chain (rows as the issue prints
// them, normalised) at ε = 0.5: hourly
// readings in 24h windows and a stream get a per-bin scale within 2% above
// the exact limit 49.20 (an explicit output reaches ε at 49.214, docs/math.md
// §8.10), by the pairwise bound (the scalar recursion needs 170.5, MQM
// 210.3); puff scale --leakage prints the three bounds and the limit.
func TestWindowsAtThePairwiseScale(t *testing.T) {
	class := write(t, "b4.json", `{"states": ["0", "1", "2", "3"], "chains": [{"transition": [[0.6827, 0.2981, 0.0096, 0.0096], [0.1538153815381538, 0.6827682768276827, 0.1538153815381538, 0.0096009600960096], [0.0096009600960096, 0.1538153815381538, 0.6827682768276827, 0.1538153815381538], [0.0096, 0.0096, 0.2981, 0.6827]], "initial": "stationary"}]}`)
	out, err := run("release", "--data", hourly(t, 4, 150, 0.7), "--class", class, "--window", "24h", "--epsilon", "0.5", "--json")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := medianScale(t, out)
	if m < 49.20 || m > 1.02*49.20 {
		t.Fatalf("median per-bin scale %.6g, want within 2%% above 49.20", m)
	}
	var v struct {
		Windows []struct {
			Calibration struct {
				Method   string  `json:"method"`
				Bound    string  `json:"tpl_bound"`
				Scalar   float64 `json:"tpl_scalar_sigma"`
				Pairwise float64 `json:"tpl_pairwise_sigma"`
				MQM      float64 `json:"mqm_sigma"`
				Limit    float64 `json:"tpl_limit_sigma"`
				TPL      float64 `json:"tpl_sigma"`
				Why      string  `json:"why"`
			} `json:"calibration"`
		} `json:"windows"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	c := v.Windows[0].Calibration
	if c.Method != "tpl" || c.Bound != "pairwise" || !(c.Pairwise < c.Scalar && c.Pairwise < c.MQM) {
		t.Fatalf("calibration %+v", c)
	}
	// 150 readings a series: the finite bound, below the unbounded
	// stream's limit, so no limit is given
	if c.Limit != 0 {
		t.Fatalf("a short series' calibration gives the unbounded limit: %+v", c)
	}
	// a long series (6,000 readings) takes the unbounded bound; the report
	// gives the distance to the limit, an explicit output sequence's σ,
	// never above the calibrated one, and within 2% of it here
	out, err = run("release", "--data", hourly(t, 4, 6000, 0.7), "--class", class, "--window", "24h", "--epsilon", "0.5", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	c = v.Windows[0].Calibration
	if !(c.Limit > 0 && c.Limit <= c.TPL && c.TPL <= 1.02*c.Limit) || !strings.Contains(c.Why, "no leakage calibration can go below") {
		t.Fatalf("the limit in the calibration: %+v", c)
	}
	out, err = run("scale", "--class", class, "--length", "0", "--epsilon", "0.5", "--leakage", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		PerBin float64 `json:"per_bin_scale"`
		Lower  float64 `json:"lower_per_bin_scale"`
		Bound  string  `json:"bound"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Bound != "pairwise" || s.Lower < 49.2 || s.PerBin < s.Lower || s.PerBin > 1.02*s.Lower {
		t.Fatalf("scale --leakage: %+v", s)
	}
}
