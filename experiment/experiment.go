// Package experiment reproduces the papers' evaluations ([SWC17] §5,
// [SWC16] §5 and App. B.11, [CGSSY]'s attacks) on synthetic and real data, and
// writes each as CSV, a Markdown table and PNG + SVG plots.
//
// Experiments must be reproducible, so noise here comes from a seeded
// generator (PCG) fed to the product's own snapped-Laplace sampler through
// noise.Source. That generator is defined in this package only: the release
// and sanitize paths (packages release, bdp, wasserstein, cmd/puff release)
// never import it and keep using crypto/rand.
package experiment

import (
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pufferfish-privacy/pufferfish/noise"
)

// Options configures a run.
type Options struct {
	Out      string    // directory for the outputs (created)
	Reps     int       // repetitions of every noisy release; 0 = the experiment's default
	Seed     uint64    // seed of the generator
	Fast     bool      // small grids and few repetitions (the test suite's mode)
	Data     string    // directory holding the real data files
	Progress io.Writer // progress bar (nil: none)
}

// Output is what one experiment wrote.
type Output struct {
	Name     string
	Files    []string
	Markdown string        // the tables, as written to NAME.md
	Elapsed  time.Duration // wall-clock time of the experiment
}

type runner func(o Options, w *writer) error

var registry = map[string]runner{
	"synthetic": runSynthetic,
	"region":    runRegion,
	"activity":  runActivity,
	"power":     runPower,
	"local":     runLocal,
	"streams":   runStreams,
	"running":   runRunning,
	"synth":     runSynth,
	"estimates": runEstimates,
}

// Names lists the experiments in the order "all" runs them.
var Names = []string{"synthetic", "region", "activity", "power", "local", "streams", "running", "synth", "estimates"}

// Run runs one experiment, or every one for "all".
func Run(name string, o Options) ([]Output, error) {
	names := []string{name}
	if name == "all" {
		names = Names
	} else if registry[name] == nil {
		return nil, fmt.Errorf("unknown experiment %q (want one of %s, or all)", name, strings.Join(Names, ", "))
	}
	if o.Out == "" {
		return nil, fmt.Errorf("experiment: no output directory")
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	var outs []Output
	for _, n := range names {
		start := time.Now()
		w := &writer{dir: o.Out, name: n}
		if err := registry[n](o, w); err != nil {
			return outs, fmt.Errorf("experiment %s: %w", n, err)
		}
		if err := w.flushMarkdown(); err != nil {
			return outs, err
		}
		outs = append(outs, Output{Name: n, Files: w.files, Markdown: w.md.String(), Elapsed: time.Since(start)})
	}
	return outs, nil
}

// seeded is a reproducible noise.Source for experiments only.
type seeded struct{ r *rand.Rand }

func (s seeded) Uint64() uint64 { return s.r.Uint64() }

// rngs returns a generator for data and a noise sampler, both from seed and
// a per-experiment stream so experiments do not depend on each other.
func rngs(seed uint64, stream string) (*rand.Rand, *noise.Laplace) {
	h := uint64(14695981039346656037)
	for _, c := range stream {
		h = (h ^ uint64(c)) * 1099511628211
	}
	data := rand.New(rand.NewPCG(seed, h))
	return data, noise.NewLaplace(seeded{rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, h))})
}

// writer collects one experiment's files.
type writer struct {
	dir, name string
	files     []string
	md        strings.Builder
}

func (w *writer) path(suffix string) string {
	p := filepath.Join(w.dir, w.name+suffix)
	w.files = append(w.files, p)
	return p
}

func (w *writer) csv(suffix string, header []string, rows [][]string) error {
	f, err := os.Create(w.path(suffix))
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	cw.Write(header)
	cw.WriteAll(rows)
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (w *writer) printf(format string, a ...any) { fmt.Fprintf(&w.md, format, a...) }

// table appends a Markdown table.
func (w *writer) table(header []string, rows [][]string) {
	w.printf("| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, r := range rows {
		w.printf("| %s |\n", strings.Join(r, " | "))
	}
	w.printf("\n")
}

func (w *writer) flushMarkdown() error {
	return os.WriteFile(w.path(".md"), []byte(w.md.String()), 0o644)
}

func f4(x float64) string { return fmt.Sprintf("%.4g", x) }

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
