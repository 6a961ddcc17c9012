package bench

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// truth counts the generated files' states by scanning their lines.
func truth(t *testing.T, glob string) (map[string]int64, map[string]int) {
	t.Helper()
	files, _ := filepath.Glob(glob)
	counts, perSeries := map[string]int64{}, map[string]int{}
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(r)
		sc.Scan() // header
		for sc.Scan() {
			fs := strings.Split(sc.Text(), ",")
			counts[fs[2]]++
			perSeries[fs[0]]++
		}
		r.Close()
	}
	return counts, perSeries
}

// The generator writes every reading once over the files; the plain
// count equals a scan of the files; Privacy on Beam's count covers the
// declared states.
func TestPipelinesOnGeneratedRows(t *testing.T) {
	dir := t.TempDir()
	glob, err := Generate(dir, 30, 50, 3)
	if err != nil {
		t.Fatal(err)
	}
	want, perSeries := truth(t, glob)
	if len(perSeries) != 30 {
		t.Fatalf("%d series", len(perSeries))
	}
	for s, n := range perSeries {
		if n != 50 {
			t.Fatalf("series %s has %d readings", s, n)
		}
	}
	out := filepath.Join(dir, "count.json")
	p, s := beam.NewPipelineWithRoot()
	if err := BuildCount(s, glob, out); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCounts(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("counts %v, want %v", got, want)
		}
	}
	out = filepath.Join(dir, "pob.json")
	p, s = beam.NewPipelineWithRoot()
	if err := BuildPrivacyOnBeam(s, glob, 1, 50, out); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadCounts(out); err != nil || len(got) != len(States) {
		t.Fatalf("private counts %v (%v), want one per state", got, err)
	}
}
