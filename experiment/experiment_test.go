package experiment

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pufferfish-privacy/pufferfish/baseline"
	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/tpl/pairwise"
)

// fixtures writes small synthetic stand-ins for the four real data files
// (same formats, a few hundred rows) so the test suite runs without them.
func fixtures(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	write := func(name, content string) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		gz := gzip.NewWriter(f)
		gz.Write([]byte(content))
		gz.Close()
		f.Close()
	}
	var b strings.Builder
	b.WriteString("split,row,subject,activity_id,activity\n")
	for s := 1; s <= 4; s++ {
		split := "train"
		if s == 4 {
			split = "test"
		}
		a := 1 + rng.IntN(6)
		for r := 1; r <= 60; r++ {
			if rng.IntN(4) == 0 {
				a = 1 + rng.IntN(6)
			}
			fmt.Fprintf(&b, "%s,%d,%d,%d,%s\n", split, r, s, a, strings.ToUpper(activityNames[a-1]))
		}
	}
	write(fileHAR, b.String())
	b.Reset()
	b.WriteString("index,Date,Time,Global_active_power,Global_reactive_power,Voltage,Global_intensity,Sub_metering_1,Sub_metering_2,Sub_metering_3\n")
	v := 1.0
	for i := range 300 {
		v = math.Max(0.1, v+rng.NormFloat64()*0.3)
		if i == 120 {
			fmt.Fprintf(&b, "%d,1/1/07,0:00:00,?,?,?,?,?,?,\n", i)
			continue
		}
		fmt.Fprintf(&b, "%d,1/1/07,0:00:00,%.3f,0.1,240,10,0,0,0.0\n", i, v)
	}
	write(filePower, b.String())
	b.Reset()
	b.WriteString("unix_ts,counter,avg_rate,inst_rate\n")
	for i := range 400 {
		rate := 0.0
		if rng.IntN(5) == 0 {
			rate = 10 * rng.Float64()
		}
		fmt.Fprintf(&b, "%d,%.3f,%.3f,0.0\n", 1333263600+60*i, float64(i), rate)
	}
	write(fileWater, b.String())
	b.Reset()
	b.WriteString("group,record,time_s,hr_bpm\n")
	hr := 70.0
	for i := range 600 {
		hr = 70 + 0.6*(hr-70) + rng.NormFloat64()*4 // mean-reverting: a fast-mixing binary chain
		fmt.Fprintf(&b, "normal,N10,%d,%.2f\n", i, hr)
		if i%100 == 0 {
			fmt.Fprintf(&b, "normal,N11,%d,%.2f\n", i, hr)
		}
	}
	write(fileHR, b.String())
	return dir
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:]
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// Every experiment runs in fast mode, writes CSV, Markdown, PNG and SVG,
// and its numbers respect the orderings theory guarantees.
func TestAllFast(t *testing.T) {
	out := t.TempDir()
	outs, err := Run("all", Options{Out: out, Seed: 3, Fast: true, Data: fixtures(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != len(Names) {
		t.Fatalf("%d outputs", len(outs))
	}
	for _, o := range outs {
		kinds := map[string]bool{}
		for _, f := range o.Files {
			st, err := os.Stat(f)
			if err != nil || st.Size() == 0 {
				t.Fatalf("%s: %v", f, err)
			}
			kinds[filepath.Ext(f)] = true
		}
		for _, ext := range []string{".csv", ".md", ".png", ".svg"} {
			if !kinds[ext] {
				t.Errorf("%s wrote no %s file", o.Name, ext)
			}
		}
	}
	// σ ordering per (ℓ, ε): MQMExact ≤ MQMApprox ≤ GroupDP.
	sig := map[string]map[string]float64{}
	for _, r := range readCSV(t, filepath.Join(out, "synthetic.csv")) {
		key := r[0] + "/" + r[1]
		if sig[key] == nil {
			sig[key] = map[string]float64{}
		}
		sig[key][r[2]] = num(t, r[4])
	}
	for key, s := range sig {
		if !(s["MQMExact"] <= s["MQMApprox"]*(1+1e-12) && s["MQMApprox"] <= s["GroupDP"]*(1+1e-12)) {
			t.Errorf("synthetic %s: σ %v out of order", key, s)
		}
	}
	for _, name := range []string{"activity.csv", "power.csv"} {
		sig = map[string]map[string]float64{}
		for _, r := range readCSV(t, filepath.Join(out, name)) {
			key := r[0] + "/" + r[1]
			if name == "activity.csv" {
				key = r[0]
			}
			if sig[key] == nil {
				sig[key] = map[string]float64{}
			}
			sig[key][r[3-btoi(name == "power.csv")]] = num(t, r[5-btoi(name == "power.csv")])
		}
		for key, s := range sig {
			if !(s["MQMExact"] <= s["MQMApprox"]*(1+1e-12) && s["MQMApprox"] <= s["GroupDP"]*(1+1e-12)) {
				t.Errorf("%s %s: σ %v out of order", name, key, s)
			}
		}
	}
	// GK16 is inapplicable exactly where ‖Γ‖₂ ≥ 1, with the norm recomputed
	// here from the influence matrix by a dense SVD.
	for _, r := range readCSV(t, filepath.Join(out, "region.csv")) {
		p0, p1 := num(t, r[0]), num(t, r[1])
		ch, _ := markov.New(nil, [][]float64{{p0, 1 - p0}, {1 - p1, p1}}, markov.InitAny, nil)
		norm := denseNorm(t, ch, 100)
		inapplicable := math.IsInf(num(t, r[4]), 1)
		if math.Abs(norm-1) > 1e-9 && inapplicable != (norm >= 1) {
			t.Errorf("(%g, %g): GK16 inapplicable %v but ‖Γ‖₂ = %.12g", p0, p1, inapplicable, norm)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// denseNorm is the spectral norm of GK16's T×T influence matrix.
func denseNorm(t *testing.T, ch *markov.Chain, T int) float64 {
	t.Helper()
	lo, up, err := baseline.Influence(ch, T)
	if err != nil {
		t.Fatal(err)
	}
	G := mat.NewDense(T, T, nil)
	for i := range T - 1 {
		G.Set(i+1, i, lo[i])
		G.Set(i, i+1, up[i])
	}
	var svd mat.SVD
	if !svd.Factorize(G, mat.SVDNone) {
		t.Fatal("svd failed")
	}
	return svd.Values(nil)[0]
}

// The same seed reproduces the same numbers.
func TestReproducible(t *testing.T) {
	data := fixtures(t)
	var texts []string
	for range 2 {
		outs, err := Run("local", Options{Out: t.TempDir(), Seed: 9, Fast: true, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, outs[0].Markdown)
	}
	if texts[0] != texts[1] {
		t.Fatal("two runs with one seed differ")
	}
}

// Absent, truncated and malformed data files give errors naming the file
// and line.
func TestDataErrors(t *testing.T) {
	dir := fixtures(t)
	if _, err := loadHAR(t.TempDir()); err == nil || !strings.Contains(err.Error(), fileHAR+": not found") {
		t.Errorf("absent: %v", err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, filePower))
	os.WriteFile(filepath.Join(dir, filePower), raw[:len(raw)/2], 0o644)
	if _, err := loadPower(dir); err == nil || !strings.Contains(err.Error(), "truncated or corrupt") || !strings.Contains(err.Error(), "line") {
		t.Errorf("truncated: %v", err)
	}
	f, _ := os.Create(filepath.Join(dir, fileHAR))
	gz := gzip.NewWriter(f)
	gz.Write([]byte("split,row,subject,activity_id,activity\ntrain,1,1,5,STANDING\ntrain,2,1,9,NOPE\n"))
	gz.Close()
	f.Close()
	if _, err := loadHAR(dir); err == nil || !strings.Contains(err.Error(), "line 3: activity_id \"9\"") {
		t.Errorf("malformed: %v", err)
	}
	if _, err := Run("nope", Options{Out: t.TempDir()}); err == nil {
		t.Error("unknown experiment accepted")
	}
}

// The data files in the repository are the ones data/README.md describes.
func TestDataChecksums(t *testing.T) {
	dir := FindData()
	for name, want := range DataFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%v (the repository ships its data in data/)", err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
			t.Errorf("%s: sha256 %s, want %s (data/README.md)", name, got, want)
		}
	}
}

// streams: the orderings the theorems guarantee, issue 28's numbers and
// issue 33's limits (the pairwise bound within 2% of the exact limit of
// the sticky and banded chains, above it).
func TestStreamsFast(t *testing.T) {
	outs, err := Run("streams", Options{Out: t.TempDir(), Seed: 1, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := mdRows(t, outs[0].Markdown, "| chain |")
	if len(rows) != 12 {
		t.Fatalf("%d rows", len(rows))
	}
	want := map[string]float64{"[[0.8,0.2],[0.1,0.9]] ∞": 11.83, "[[0.8,0.2],[0.1,0.9]] 10": 9.67, "[[0.95,0.05],[0.05,0.95]] ∞": 36.47, "4 states, 0.7 diagonal ∞": 8.70}
	// exact limits of the unbounded stream at α = 1 (tpl/pairwise's
	// LowerBound: an explicit output reaches α there)
	limits := map[string]float64{}
	for _, r := range rows {
		cyxx, ours, pw, dp := num(t, r[3]), num(t, r[4]), num(t, r[5]), num(t, r[8])
		if ours > cyxx+0.005 || ours <= dp {
			t.Errorf("%v: tpl %v outside [DP %v, TPL constant %v]", r, ours, dp, cyxx)
		}
		if pw > ours+0.005 || pw <= dp {
			t.Errorf("%v: pairwise %v outside [DP %v, tpl %v]", r, pw, dp, ours)
		}
		if r[2] != "∞" {
			if mqm := num(t, r[6]); pw > mqm {
				t.Errorf("%v: pairwise %v above MQM %v", r, pw, mqm)
			}
		}
		if r[10] != "—" && num(t, r[10]) > pw+0.005 {
			t.Errorf("%v: exact b* %v above the calibrated %v", r, r[10], pw)
		}
		if v, ok := want[r[0]+" "+r[2]]; ok && math.Abs(ours-v) > 0.005 {
			t.Errorf("%v: tpl %v, issue 28 has %v", r, ours, v)
		}
		if r[2] == "∞" {
			limits[r[0]] = pw
		}
	}
	for name, P := range map[string][][]float64{"[[.8,.15,.05],[.1,.8,.1],[.05,.15,.8]]": streamChains[3].P, "banded 4 levels": streamChains[4].P} {
		lo, err := pairwise.LowerBound(context.Background(), P, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if pw := limits[name]; pw < lo || pw > 1.02*lo {
			t.Errorf("%s: pairwise %v not within 2%% above the explicit output's %v", name, pw, lo)
		}
	}
}

// mdRows returns the cells of the Markdown table whose header starts with
// prefix.
func mdRows(t *testing.T, md, prefix string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, prefix):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			rows = append(rows, cells)
		default:
			in = false
		}
	}
	return rows
}

// estimates (on the fixtures): every case has a table row, the estimate is
// never farther from the truth in L2 than the raw noisy counts (the
// projection's non-expansiveness, docs/math.md §4.14: the truth lies in
// the set projected onto), and it has the smaller mean L1 error where the
// noise dwarfs the counts (per person).
func TestEstimatesFast(t *testing.T) {
	outs, err := Run("estimates", Options{Out: t.TempDir(), Seed: 1, Fast: true, Data: fixtures(t)})
	if err != nil {
		t.Fatal(err)
	}
	rows := mdRows(t, outs[0].Markdown, "| case |")
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r[8] != "0" {
			t.Errorf("%v: the estimate is farther than the raw counts in L2 in %s draws", r, r[8])
		}
	}
	if raw, est := num(t, rows[1][4]), num(t, rows[1][5]); est >= raw {
		t.Errorf("per person: estimate L1 %v, raw %v", est, raw)
	}
}
