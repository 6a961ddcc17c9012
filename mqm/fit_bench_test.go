package mqm_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mqm"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// fittedClass is the class `puff fit --data data/uci_household_power_2007H1_1min.csv.gz
// --value-col Global_active_power --levels 0:10:N --time-col index
// --time-unit 60 --smoothing 0.01 [--initial any]` prints, built the same
// way (release.Load with Fit).
func fittedClass(b *testing.B, n int, init markov.InitKind) *markov.Class {
	b.Helper()
	f, err := os.Open("../data/uci_household_power_2007H1_1min.csv.gz")
	if err != nil {
		b.Fatalf("the benchmark needs the real data: %v", err)
	}
	defer f.Close()
	lv, err := reading.ParseLevels(fmt.Sprintf("0:10:%d", n))
	if err != nil {
		b.Fatal(err)
	}
	req := release.Request{Fit: true, Smoothing: 0.01}
	req.CSV = reading.DefaultCSV
	req.CSV.ValueCol, req.CSV.Levels = "Global_active_power", lv
	req.CSV.TimeCol, req.CSV.RequireTime, req.CSV.TimeUnit = "index", true, 60
	_, class, err := release.Load(f, "uci", req)
	if err != nil {
		b.Fatal(err)
	}
	ch := class.Chains[0]
	if init != markov.InitStationary {
		if ch, err = markov.New(ch.States, ch.P, init, nil); err != nil {
			b.Fatal(err)
		}
	}
	class, err = markov.NewClass(ch.States, ch)
	if err != nil {
		b.Fatal(err)
	}
	return class
}

// BenchmarkFittedLevels is `puff scale --class C --length 1000000 --method
// exact` (ε = 1) on the classes `puff fit --levels 0:10:N --smoothing 0.01`
// prints for the UCI household power data (BENCHMARKS.md, issue's rows).
func BenchmarkFittedLevels(b *testing.B) {
	for _, n := range []int{51, 101, 201} {
		for _, init := range []markov.InitKind{markov.InitStationary, markov.InitAny} {
			b.Run(fmt.Sprintf("k=%d/%v", n, init), func(b *testing.B) {
				class := fittedClass(b, n, init)
				b.ResetTimer()
				var r mqm.Result
				for b.Loop() {
					var err error
					if r, err = mqm.Scale(class, 1_000_000, 1, mqm.Exact); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(r.Sigma, "sigma")
			})
		}
	}
}
