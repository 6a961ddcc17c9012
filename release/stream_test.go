package release

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

// Prepare streams a release, with a given class or fitted: the same class,
// report (with the same noise draws) and ledger record as reading the data
// whole.
func TestPrepareStreamEqualsWhole(t *testing.T) {
	class, err := markov.ParseClass(ExampleClass(), "example class")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(ExampleData())
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	// rows in time order across series (interleaved), some dropped: gaps
	rows := slices.Clone(lines[1:])
	slices.SortStableFunc(rows, func(a, b string) int {
		ta, _ := strconv.Atoi(strings.Split(a, ",")[1])
		tb, _ := strconv.Atoi(strings.Split(b, ",")[1])
		return ta - tb
	})
	mixed := []string{lines[0]}
	for i, r := range rows {
		if i%7 != 3 {
			mixed = append(mixed, r)
		}
	}
	for _, in := range []string{string(raw), strings.Join(mixed, "\n") + "\n"} {
		for i, o := range []Options{{Epsilon: 1, Method: "exact"}, {Epsilon: 0.5, Method: "approx", Query: "relative"}, {Epsilon: 1, Method: "exact"}} {
			req := Request{Class: class, CSV: reading.DefaultCSV, Options: o}
			if i == 2 { // fitted over the declared states
				req.Class, req.Fit, req.Smoothing = nil, true, 0.5
				req.CSV.States = class.States
			}
			req.Source = fixed{rand.NewChaCha8([32]byte{9})}
			p, err := Prepare(strings.NewReader(in), "x", req, 0)
			if err != nil {
				t.Fatal(err)
			}
			req.Source = fixed{rand.NewChaCha8([32]byte{9})}
			data, cl, err := load(strings.NewReader(in), "x", &req)
			if err != nil {
				t.Fatal(err)
			}
			q, err := PrepareData(data, cl, req.Fit, req.Options, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Class, q.Class) || !reflect.DeepEqual(p.Record, q.Record) {
				t.Fatalf("records differ:\n%+v\n%+v", p.Record, q.Record)
			}
			a, _ := p.Draw()
			b, _ := q.Draw()
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Fatalf("reports differ:\n%s\n%s", ja, jb)
			}
		}
	}
}
