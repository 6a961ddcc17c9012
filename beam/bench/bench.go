// Package bench measures puffbeam against the yardsticks on the same rows
// and the same runner: Privacy on Beam's per-partition count (user-level
// differential privacy, the series as the privacy unit, one public
// partition per state: the same output as puffbeam's histogram) and a
// plain Beam count per state (no privacy: the floor any pipeline that
// reads the rows pays). All three read the files with the core's reader
// (reading.ReadRows), so they differ only in what they do with the rows.
package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/google/differential-privacy/privacy-on-beam/v3/pbeam"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// States are the generated readings' states (release/example's class).
var States = []string{"sleep", "sit", "walk", "run"}

// transition is the first chain of release/example/activity_class.json:
// the generated series follow it, so runs are as long as the class says.
var transition = [][]float64{
	{0.90, 0.08, 0.01, 0.01},
	{0.03, 0.85, 0.10, 0.02},
	{0.01, 0.20, 0.70, 0.09},
	{0.01, 0.05, 0.24, 0.70},
}

// Generate writes series × readings rows (series,time,state; a reading
// every 60 s) over files CSV files part-NN.csv in dir, sharded by time as
// daily partitions are: file f holds readings [f·R/F, (f+1)·R/F) of every
// series, so each series is spread over every file. It returns the glob.
func Generate(dir string, series, readings, files int) (string, error) {
	if series < 1 || readings < 1 || files < 1 || files > readings {
		return "", fmt.Errorf("want series ≥ 1, readings ≥ files ≥ 1")
	}
	rng := rand.New(rand.NewPCG(27, 5))
	state := make([]int, series)
	for s := range state {
		state[s] = rng.IntN(len(States))
	}
	for f := range files {
		from, to := f*readings/files, (f+1)*readings/files
		out, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%02d.csv", f)))
		if err != nil {
			return "", err
		}
		w := bufio.NewWriterSize(out, 1<<20)
		w.WriteString("series,time,state\n")
		for s := range series {
			name := fmt.Sprintf("p%06d", s)
			for j := from; j < to; j++ {
				w.WriteString(name)
				w.WriteByte(',')
				w.WriteString(strconv.Itoa(60 * (j + 1)))
				w.WriteByte(',')
				w.WriteString(States[state[s]])
				w.WriteByte('\n')
				state[s] = next(rng, transition[state[s]])
			}
		}
		if err := w.Flush(); err != nil {
			out.Close()
			return "", err
		}
		if err := out.Close(); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "part-*.csv"), nil
}

func next(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	for i, q := range p {
		if u < q {
			return i
		}
		u -= q
	}
	return len(p) - 1
}

// ClassJSON is the class of the generated data (release/example's).
func ClassJSON() string {
	return `{"states": ["sleep", "sit", "walk", "run"], "chains": [
 {"transition": [[0.90, 0.08, 0.01, 0.01], [0.03, 0.85, 0.10, 0.02], [0.01, 0.20, 0.70, 0.09], [0.01, 0.05, 0.24, 0.70]], "initial": "any"},
 {"transition": [[0.85, 0.12, 0.02, 0.01], [0.05, 0.80, 0.12, 0.03], [0.02, 0.25, 0.63, 0.10], [0.01, 0.08, 0.31, 0.60]], "initial": "any"}]}`
}

func init() {
	register.DoFn3x1[context.Context, fileio.ReadableFile, func(string, string), error](&readFn{})
	register.Emitter2[string, string]()
	register.DoFn2x1[[]byte, func(*string, *int64) bool, error](&writeFn{})
	register.Function2x2(toInt64)
	register.Function3x0(keepState)
	register.Emitter1[string]()
	beam.RegisterType(reflect.TypeOf((*readFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*writeFn)(nil)).Elem())
}

// readFn reads one file's rows with the core's reader and emits each
// reading as (series, state); a bad row fails the pipeline.
type readFn struct {
	States []string
}

func (f *readFn) ProcessElement(ctx context.Context, file fileio.ReadableFile, emit func(string, string)) error {
	opts, err := reading.Spec{}.CSV()
	if err != nil {
		return err
	}
	opts.States = f.States
	rc, err := file.Open(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = reading.ReadRows(rc, file.Metadata.Path, opts, func(r reading.Row) error {
		if r.State >= 0 {
			emit(r.Series, f.States[r.State])
		}
		return nil
	})
	return err
}

func keepState(_, state string, emit func(string)) { emit(state) }

// rows is every row of the files matched by glob, as (series, state).
func rows(s beam.Scope, glob string) beam.PCollection {
	files := fileio.ReadMatches(s, fileio.MatchFiles(s, glob, fileio.MatchEmptyDisallow()))
	return beam.ParDo(s, &readFn{States: States}, files)
}

// writeFn writes the per-state counts as one JSON object {state: count}.
type writeFn struct{ Output string }

func (f *writeFn) ProcessElement(_ []byte, counts func(*string, *int64) bool) error {
	out := map[string]int64{}
	var k string
	var v int64
	for counts(&k, &v) {
		out[k] = v
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(f.Output, append(b, '\n'), 0o644)
}

func toInt64(k string, v int) (string, int64) { return k, int64(v) }

// BuildPrivacyOnBeam adds Privacy on Beam's per-partition count: the
// series is the privacy unit, the partitions are the declared states
// (public, as puffbeam's bins: no partition selection), each series
// contributes to at most every state and at most readings times to one,
// Laplace noise, ε. It writes {state: noisy count} to output.
func BuildPrivacyOnBeam(s beam.Scope, glob string, eps float64, readings int, output string) error {
	spec, err := pbeam.NewPrivacySpec(pbeam.PrivacySpecParams{AggregationEpsilon: eps})
	if err != nil {
		return err
	}
	pcol := pbeam.MakePrivate(s, rows(s, glob), spec)
	counts := pbeam.Count(s, pcol, pbeam.CountParams{
		NoiseKind:                pbeam.LaplaceNoise{},
		MaxPartitionsContributed: int64(len(States)),
		MaxValue:                 int64(readings),
		PublicPartitions:         slices.Clone(States),
	})
	beam.ParDo0(s, &writeFn{Output: output}, beam.Impulse(s), beam.SideInput{Input: counts})
	return nil
}

// BuildCount adds a plain count of readings per state (no privacy) and
// writes {state: count} to output.
func BuildCount(s beam.Scope, glob, output string) error {
	counts := stats.Count(s, beam.ParDo(s, keepState, rows(s, glob)))
	beam.ParDo0(s, &writeFn{Output: output}, beam.Impulse(s), beam.SideInput{Input: beam.ParDo(s, toInt64, counts)})
	return nil
}

// ReadCounts reads a count file written by BuildCount or
// BuildPrivacyOnBeam.
func ReadCounts(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]int64
	return m, json.Unmarshal(b, &m)
}
