package logfile_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/compose"
	"github.com/pufferfish-privacy/pufferfish/ledger/logfile"
	"github.com/pufferfish-privacy/pufferfish/reading"

	"github.com/pufferfish-privacy/pufferfish/record"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// exampleRelease is the record of the example's release at eps by method
// m calibrated by the Markov Quilt Mechanism alone (its σ,
// calibration.mqm_sigma, where the leakage bound's is smaller): these
// tests are about the log and MQM's composition rules.
func exampleRelease(t *testing.T, eps float64, m mechanism.Name) (*markov.Class, *record.Release) {
	t.Helper()
	class, r := exampleReport(t, eps, m)
	rec := *r.Record
	if c := r.Calibration; c != nil && c.Method == "tpl" {
		rec.Mechanism, rec.Sigma = m, c.MQM
	}
	return class, &rec
}

// exampleReport is the example's release at eps by method m.
func exampleReport(t *testing.T, eps float64, m mechanism.Name) (*markov.Class, *release.Report) {
	t.Helper()
	d, err := reading.ReadData(release.ExampleData(), "example", reading.DefaultCSV)
	if err != nil {
		t.Fatal(err)
	}
	class, err := markov.ParseClass(release.ExampleClass(), "example class")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Align(class.States, "example"); err != nil {
		t.Fatal(err)
	}
	r, err := release.Histogram(d, class, false, release.Options{Epsilon: eps, Method: m, Source: rand.NewChaCha8([32]byte{7})})
	if err != nil {
		t.Fatal(err)
	}
	return class, r
}

// Releases calibrated by the temporal leakage bound (recorded as generic
// Pufferfish releases with their σ) compose in the log by the dp-leakage
// rule, as in a durable ledger: the log keeps σ, and its import composes
// to the same total.
func TestAppendLogLeakage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	class, r := exampleReport(t, 0.5, mechanism.Exact)
	rec := r.Record
	if r.Calibration == nil || r.Calibration.Method != "tpl" || rec.Mechanism != mechanism.Pufferfish || rec.Sigma != r.Sigma {
		t.Fatalf("the example at ε = 0.5 is not calibrated by the leakage bound: %+v, record %+v", r.Calibration, rec)
	}
	if tot, err := logfile.Append(path, "study", class, rec); err != nil || tot.Rule != "single" || tot.Float() != 0.5 {
		t.Fatalf("first: %+v %v", tot, err)
	}
	tot, err := logfile.Append(path, "study", class, rec)
	if err != nil || tot.Rule != compose.LeakageRule || tot.Releases != 2 {
		t.Fatalf("second: %+v %v", tot, err)
	}
	want, err := compose.Records(class, []*record.Release{rec, rec})
	if err != nil || want.Epsilon.Cmp(tot.Epsilon) != 0 {
		t.Fatalf("the log's total %v, the records' %+v (%v)", tot.Float(), want, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lg compose.Log
	if err := json.Unmarshal(raw, &lg); err != nil {
		t.Fatal(err)
	}
	all, err := compose.Unappend(&lg, path)
	if err != nil || len(all) != 1 || len(all[0].Records) != 2 || all[0].Records[1].Sigma != rec.Sigma {
		t.Fatalf("read back: %+v %v", all, err)
	}
	if v, err := compose.Records(all[0].Class, all[0].Records); err != nil || v.Epsilon.Cmp(tot.Epsilon) != 0 {
		t.Fatalf("the import composes to %+v (%v), the log to %v", v, err, tot.Float())
	}
}

// A release record goes into the log without hand editing: each series is
// a chain with the class inline, and the ledger's answer composes.
func TestAppendLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	class, rec := exampleRelease(t, 0.5, mechanism.Exact)
	if len(rec.Segments) != 10 || rec.Class != class.Hash() {
		t.Fatalf("record %+v", rec)
	}
	tot, err := logfile.Append(path, "study", class, rec)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Float() != 0.5 || tot.Rule != "single" || tot.Releases != 1 {
		t.Fatalf("first: %+v", tot)
	}
	if tot, err = logfile.Append(path, "study", class, rec); err != nil || tot.Float() != 1 || tot.Rule != "mqm-sequential" || tot.Releases != 2 {
		t.Fatalf("second: %+v %v", tot, err)
	}
	// the file is an ordinary compose log
	f, _ := os.Open(path)
	defer f.Close()
	l, err := compose.ParseLog(f, path, logfile.Open)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Datasets()) != 10 || !strings.HasPrefix(l.Datasets()[0], "study/") {
		t.Fatalf("datasets %v", l.Datasets())
	}
	// a release calibrated on another class gets no rule
	other, _ := markov.ParseClass(strings.NewReader(`{"states": ["sleep", "sit", "walk", "run"], "chains": [{"transition": [[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7]], "initial": "any"}]}`), "other")
	rec2 := *rec
	rec2.Class = other.Hash()
	if _, err := logfile.Append(path, "study", other, &rec2); err == nil || !strings.Contains(err.Error(), "no composition rule") {
		t.Fatalf("another class: %v", err)
	}
	if _, err := logfile.Append(path, "a/b", class, rec); err == nil {
		t.Fatal("dataset name with '/' accepted")
	}
}

// Concurrent appends never lose a record.
func TestAppendLogConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	class, rec := exampleRelease(t, 0.1, mechanism.Exact)
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for range 12 {
		wg.Go(func() {
			if _, err := logfile.Append(path, "study", class, rec); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	l, err := compose.ParseLog(f, path, logfile.Open)
	if err != nil {
		t.Fatal(err)
	}
	g, err := l.Guarantee("study/p01")
	if err != nil || fmt.Sprintf("%.6g", g.Best.Float()) != "1.2" {
		t.Fatalf("12 releases of 0.1: %+v %v", g.Best, err)
	}
}

// Guarantees answers for every dataset of the log, or for one; a missing
// file or dataset is an error without guarantees.
func TestGuarantees(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.json")
	class, rec := exampleRelease(t, 0.5, mechanism.Exact)
	for _, d := range []string{"a", "b", "b"} {
		if _, err := logfile.Append(path, d, class, rec); err != nil {
			t.Fatal(err)
		}
	}
	gs, err := logfile.Guarantees(path, "")
	// each series is a dataset of the log: a/p01..a/p10, b/p01..b/p10
	if err != nil || len(gs) != 20 || gs[0].Dataset != "a/p01" || gs[0].Best.Float() != 0.5 || gs[10].Dataset != "b/p01" || gs[10].Best.Float() != 1 {
		t.Fatalf("%d guarantees (%v)", len(gs), err)
	}
	if gs, err := logfile.Guarantees(path, "b/p03"); err != nil || len(gs) != 1 || gs[0].Dataset != "b/p03" || gs[0].Best.Float() != 1 {
		t.Errorf("b/p03: %d guarantees (%v)", len(gs), err)
	}
	if gs, err := logfile.Guarantees(path, "nosuch"); err == nil || gs != nil {
		t.Errorf("unknown dataset: %d guarantees (%v)", len(gs), err)
	}
	if gs, err := logfile.Guarantees(filepath.Join(dir, "nosuch.json"), ""); err == nil || gs != nil || !strings.HasPrefix(err.Error(), "log: ") {
		t.Errorf("missing file: %d guarantees (%v)", len(gs), err)
	}
}
