package learned

import (
	"bytes"
	"strings"
	"testing"
)

func TestReportText(t *testing.T) {
	r := Report{Flip: "certified", Epsilon: 1, Rho0: 0.25, Rho1: 0.25, Covers: "every adversary", TrainReadings: 70, TestReadings: 30,
		Single: 0.5, Posterior: 0.6, Viterbi: 0.55, LSTM: 0.7, Prior: 0.5, AccuracyBound: 0.75,
		Implied: map[string]float64{"lstm": 0.8473}, ImpliedPrior: map[string]float64{"lstm": 0.8473},
		Config: Config{Half: 8, Hidden: 4, Epochs: 2, Examples: 50, Seed: 3}, TrainSeconds: 1.25}
	var buf bytes.Buffer
	if err := r.WriteText(&buf, "d.csv"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, want := range map[int]string{
		0: "d.csv: certified flip at ε = 1 (ρ0 = 0.25, ρ1 = 0.25), 70 readings train the LSTM, 30 are scored",
		6: "LSTM (learned)     0.7000    0.8473     0.8473",
		7: "LSTM: half-window 8, 4 units, 2 epochs × 50 examples, trained in 1.2 s (seed 3)",
	} {
		if lines[i] != want {
			t.Errorf("line %d: %q, want %q", i, lines[i], want)
		}
	}
}
