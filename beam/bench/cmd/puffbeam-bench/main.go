// Command puffbeam-bench runs puffbeam, Privacy on Beam's per-partition
// count and a plain Beam count side by side on the same generated rows
// and the same runner (see beam/README.md):
//
//	puffbeam-bench compare --series 1000 --readings 1000 --files 4 --runs 3 --runner prism
//
// generates the rows, runs the three pipelines in turn (a b c a b c …),
// each in its own process, and prints each one's median wall time, rows
// per second, CPU time and peak memory (the process's maximum resident
// set, the operating system's own accounting). "gen" only writes the
// rows; "run" runs one pipeline (what compare starts, or what to time
// with /usr/bin/time).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/pufferfish-privacy/pufferfish/beam/bench"
	"github.com/pufferfish-privacy/pufferfish/beam/puffbeam"
)

// pipelines, in the order compare runs and prints them.
var pipelines = []string{"puffbeam", "privacy-on-beam", "count"}

func main() {
	if len(os.Args) < 2 || !slices.Contains([]string{"gen", "run", "compare"}, os.Args[1]) {
		fmt.Fprintln(os.Stderr, "usage: puffbeam-bench gen|run|compare [flags] (-h for the flags)")
		os.Exit(2)
	}
	mode := os.Args[1]
	series := flag.Int("series", 1000, "series (people) to generate")
	readings := flag.Int("readings", 1000, "readings per series (one a minute)")
	files := flag.Int("files", 4, "files the rows are spread over (by time)")
	dir := flag.String("dir", "", "directory of the generated files (default: a temporary one, removed after compare)")
	runs := flag.Int("runs", 3, "compare: runs of each pipeline")
	only := flag.String("pipelines", strings.Join(pipelines, ","), "compare: which pipelines")
	pipeline := flag.String("pipeline", "", "run: puffbeam | privacy-on-beam | count")
	input := flag.String("input", "", "run: glob of the generated files")
	output := flag.String("output", "", "run: the result file (puffbeam's report, or the counts per state)")
	eps := flag.Float64("epsilon", 1, "ε of the private pipelines")
	cpuProfile := flag.String("cpuprofile", "", "run: write a CPU profile of the whole process (runner included) here")
	memProfile := flag.String("memprofile", "", "run: write a heap profile taken when the heap in use was largest here")
	flag.CommandLine.Parse(os.Args[2:])
	beam.Init() // first thing after flags: workers re-run this binary
	var err error
	switch mode {
	case "gen":
		if *dir == "" {
			err = fmt.Errorf("gen: give --dir")
			break
		}
		var glob string
		if glob, err = bench.Generate(*dir, *series, *readings, *files); err == nil {
			fmt.Println(glob)
		}
	case "run":
		var stop func() error
		if stop, err = profile(*cpuProfile, *memProfile); err == nil {
			err = errors.Join(run(*pipeline, *input, *output, *eps, *readings), stop())
		}
	case "compare":
		err = compare(*dir, *series, *readings, *files, *runs, strings.Split(*only, ","), *eps)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "puffbeam-bench:", err)
		os.Exit(1)
	}
}

// run builds and runs one pipeline on the runner of Beam's flags.
func run(pipeline, input, output string, eps float64, readings int) error {
	if input == "" || output == "" {
		return fmt.Errorf("run: give --input and --output")
	}
	p, s := beam.NewPipelineWithRoot()
	var err error
	switch pipeline {
	case "puffbeam":
		err = puffbeam.Build(s, puffbeam.Config{Input: input, Class: bench.ClassJSON(), Epsilon: eps, Method: "exact", Output: output})
	case "privacy-on-beam":
		err = bench.BuildPrivacyOnBeam(s, input, eps, readings, output)
	case "count":
		err = bench.BuildCount(s, input, output)
	default:
		err = fmt.Errorf("run: --pipeline %q: want one of %s", pipeline, strings.Join(pipelines, ", "))
	}
	if err != nil {
		return err
	}
	if err := beamx.Run(context.Background(), p); err != nil {
		return err
	}
	_, err = os.Stat(output)
	return err
}

// profile starts the CPU profile and the watch for the largest heap; stop
// writes them.
func profile(cpu, mem string) (stop func() error, err error) {
	var stops []func() error
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		stops = append(stops, func() error { pprof.StopCPUProfile(); return f.Close() })
	}
	if mem != "" {
		// every 100 ms: a new largest heap in use takes a new profile
		done, finished := make(chan struct{}), make(chan error)
		go func() {
			var best uint64
			var last bytes.Buffer
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > best {
					best = ms.HeapInuse
					last.Reset()
					pprof.Lookup("heap").WriteTo(&last, 0)
				}
				select {
				case <-done:
					finished <- os.WriteFile(mem, last.Bytes(), 0o644)
					return
				case <-tick.C:
				}
			}
		}()
		stops = append(stops, func() error { close(done); return <-finished })
	}
	return func() error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s())
		}
		return errors.Join(errs...)
	}, nil
}

// measure is one finished run of a pipeline.
type measure struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes
}

// compare generates the rows and runs the pipelines in turn, each in its
// own process (this binary's run mode, with the same Beam flags).
func compare(dir string, series, readings, files, runs int, which []string, eps float64) error {
	for _, p := range which {
		if !slices.Contains(pipelines, p) {
			return fmt.Errorf("--pipelines: %q: want some of %s", p, strings.Join(pipelines, ","))
		}
	}
	if runs < 1 {
		return fmt.Errorf("--runs %d: want ≥ 1", runs)
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "puffbeam-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	glob, err := bench.Generate(dir, series, readings, files)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Beam's flags (--runner, …) go to every run
	var beamArgs []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "series", "readings", "files", "dir", "runs", "pipelines", "pipeline", "input", "output", "epsilon":
			return
		}
		beamArgs = append(beamArgs, "--"+f.Name+"="+f.Value.String())
	})
	rows := series * readings
	got := map[string][]measure{}
	for range runs {
		for _, p := range which {
			out := filepath.Join(dir, p+".json")
			os.Remove(out)
			args := append([]string{"run", "--pipeline", p, "--input", glob, "--output", out, "--readings", fmt.Sprint(readings), "--epsilon", fmt.Sprint(eps)}, beamArgs...)
			cmd := exec.Command(self, args...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			wall := time.Since(start)
			if err != nil {
				return fmt.Errorf("%s: %v\n%s", p, err, tail(stderr.String(), 20))
			}
			if err := check(p, out, rows); err != nil {
				return err
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			got[p] = append(got[p], measure{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), maxRSS: ru.Maxrss * 1024})
		}
	}
	fmt.Printf("%d rows (%d series × %d readings, %d files), %d run(s) each, medians (min–max):\n", rows, series, readings, files, runs)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "pipeline\twall s\trows/s\tcpu s\tpeak RSS MB")
	for _, p := range which {
		ms := got[p]
		wall := median(ms, func(m measure) float64 { return m.wall.Seconds() })
		fmt.Fprintf(w, "%s\t%.2f (%.2f–%.2f)\t%.0f\t%.2f\t%.0f (%.0f–%.0f)\n", p, wall[1], wall[0], wall[2], float64(rows)/wall[1],
			median(ms, func(m measure) float64 { return m.cpu.Seconds() })[1],
			median(ms, func(m measure) float64 { return float64(m.maxRSS) / 1e6 })[1],
			median(ms, func(m measure) float64 { return float64(m.maxRSS) / 1e6 })[0],
			median(ms, func(m measure) float64 { return float64(m.maxRSS) / 1e6 })[2])
	}
	return w.Flush()
}

// check reads a run's result: the plain count must be the generated
// data's exactly, puffbeam's report must cover every row.
func check(p, out string, rows int) error {
	b, err := os.ReadFile(out)
	if err != nil {
		return fmt.Errorf("%s wrote no result: %w", p, err)
	}
	switch p {
	case "count":
		counts, err := bench.ReadCounts(out)
		if err != nil {
			return err
		}
		var n int64
		for _, c := range counts {
			n += c
		}
		if n != int64(rows) {
			return fmt.Errorf("count: %d readings, want %d", n, rows)
		}
	case "puffbeam":
		var r struct{ Observations int }
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("puffbeam's report: %w", err)
		}
		if r.Observations != rows {
			return fmt.Errorf("puffbeam's report counts %d readings, want %d", r.Observations, rows)
		}
	}
	return nil
}

// median returns the min, median and max of f over ms.
func median(ms []measure, f func(measure) float64) [3]float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	slices.Sort(v)
	return [3]float64{v[0], v[len(v)/2], v[len(v)-1]}
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
