package mqm

import (
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/bn"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

const powerFile = "../data/uci_household_power_2007H1_1min.csv.gz"

// powerChain fits a 51-level chain to the UCI household power data
// (Global_active_power discretised into 51 equal-width levels on [0, max],
// series split at missing minutes, smoothing 0.01 so every row is defined),
// as [SWC17] §5.3.2 does. The data file is in the repository; a benchmark
// without it fails.
func powerChain(b *testing.B) *markov.Chain { return powerChainK(b, 51) }

// powerChainK fits a chain of k equal-width levels to the UCI power data
// (smoothing 0.01), stationary start.
func powerChainK(b testing.TB, k int) *markov.Chain {
	states := make([]string, k)
	for i := range states {
		states[i] = strconv.Itoa(i)
	}
	f, err := os.Open(powerFile)
	if err != nil {
		b.Fatalf("the benchmark needs the real data: %v", err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	r := csv.NewReader(gz)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		b.Fatal(err)
	}
	vals := make([]float64, len(rows)-1)
	maxV := 0.0
	for i, row := range rows[1:] {
		v, err := strconv.ParseFloat(row[3], 64)
		if err != nil {
			vals[i] = -1 // missing minute: "?"
			continue
		}
		vals[i] = v
		maxV = max(maxV, v)
	}
	var seqs [][]int
	var cur []int
	for _, v := range vals {
		if v < 0 {
			if len(cur) > 0 {
				seqs = append(seqs, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, min(k-1, int(v/maxV*float64(k))))
	}
	seqs = append(seqs, cur)
	ch, err := markov.Fit(states, seqs, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	return ch
}

func BenchmarkExact51StatesT1e6(b *testing.B) {
	ch := powerChain(b)
	class, _ := markov.NewClass(ch.States, ch)
	b.ResetTimer()
	var r Result
	for b.Loop() {
		r, _ = Scale(class, 1_000_000, 1, Exact)
	}
	b.ReportMetric(r.Sigma, "sigma")
}

func BenchmarkApprox51StatesT1e6(b *testing.B) {
	ch := powerChain(b)
	class, _ := markov.NewClass(ch.States, ch)
	b.ResetTimer()
	var r Result
	for b.Loop() {
		r, _ = Scale(class, 1_000_000, 1, Approx)
	}
	b.ReportMetric(r.Sigma, "sigma")
}

func BenchmarkIntervalClassExactT100(b *testing.B) {
	class, err := markov.BinaryInterval(0.1, 0.9, 0.01, markov.InitAny)
	if err != nil {
		b.Fatal(err)
	}
	var r Result
	for b.Loop() {
		r, _ = Scale(class, 100, 1, Exact)
	}
	b.ReportMetric(r.Sigma, "sigma")
}

// The Markov Quilt Mechanism on a 30-node binary tree (binary domain).
func BenchmarkNetworkTree30(b *testing.B) {
	stay := [][]*big.Rat{{big.NewRat(9, 10), big.NewRat(1, 10)}, {big.NewRat(1, 5), big.NewRat(4, 5)}}
	nodes := []bn.Node{{CPT: [][]*big.Rat{{big.NewRat(1, 2), big.NewRat(1, 2)}}}}
	for i := 1; i < 30; i++ {
		nodes = append(nodes, bn.Node{Parents: []int{(i - 1) / 2}, CPT: stay})
	}
	net, err := bn.New(2, nodes)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := NetworkScale([]*bn.Network{net}, 5, NetworkOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// One sticky series of 6,000 minutes with every 6th reading missing.
func BenchmarkObservedSticky6000(b *testing.B) {
	ch, _ := markov.New(nil, [][]float64{{0.99, 0.01}, {0.01, 0.99}}, markov.InitStationary, nil)
	class, _ := markov.NewClass(ch.States, ch)
	var times []int
	for m := 1; m <= 6000; m++ {
		if m%6 != 0 {
			times = append(times, m)
		}
	}
	ob, _ := At(times)
	for b.Loop() {
		r, err := ScaleAt(class, ob, 1, Exact)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.Sigma, "sigma")
	}
}

// BenchmarkExact51StatesAnyT1e6 is the same chain standing for every
// initial distribution ("any").
func BenchmarkExact51StatesAnyT1e6(b *testing.B) {
	ch := powerChain(b)
	ch, err := markov.New(ch.States, ch.P, markov.InitAny, nil)
	if err != nil {
		b.Fatal(err)
	}
	class, _ := markov.NewClass(ch.States, ch)
	b.ResetTimer()
	var r Result
	for b.Loop() {
		r, _ = Scale(class, 1_000_000, 1, Exact)
	}
	b.ReportMetric(r.Sigma, "sigma")
}

// BenchmarkExactLevels is σ for finer discretisations of the same data:
// 101 and 201 levels, stationary and any, T = 10⁶, ε = 1.
func BenchmarkExactLevels(b *testing.B) {
	for _, k := range []int{101, 201} {
		base := powerChainK(b, k)
		for _, init := range []markov.InitKind{markov.InitStationary, markov.InitAny} {
			ch, err := markov.New(base.States, base.P, init, nil)
			if err != nil {
				b.Fatal(err)
			}
			class, _ := markov.NewClass(ch.States, ch)
			b.Run(fmt.Sprintf("k=%d/%v", k, init), func(b *testing.B) {
				var r Result
				for b.Loop() {
					r, _ = Scale(class, 1_000_000, 1, Exact)
				}
				b.ReportMetric(r.Sigma, "sigma")
			})
		}
	}
}
