package release

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/reading"
)

func TestSourceHelpers(t *testing.T) {
	for in, want := range map[string]string{"data/house.csv.gz": "house", "house.csv": "house", "/x/y.parquet": "y", "plain": "plain", "a.b.csv": "a.b"} {
		if got := DatasetName(in); got != want {
			t.Errorf("DatasetName(%q) = %q, want %q", in, got, want)
		}
	}
	if w, err := ParseWindow("24h"); err != nil || w != 24*time.Hour {
		t.Fatalf("24h: %v, %v", w, err)
	}
	for _, s := range []string{"", "0s", "-1h", "day"} {
		if _, err := ParseWindow(s); err == nil || !strings.HasPrefix(err.Error(), "window ") {
			t.Errorf("window %q: %v", s, err)
		}
	}
	if pw, err := ParseCalibration("per-window"); err != nil || !pw {
		t.Fatalf("per-window: %v, %v", pw, err)
	}
	if pw, err := ParseCalibration("joint"); err != nil || pw {
		t.Fatalf("joint: %v, %v", pw, err)
	}
	if _, err := ParseCalibration("both"); err == nil {
		t.Fatal("both was read")
	}
	r, name, err := OpenData("")
	if err != nil || name != exampleName {
		t.Fatal(name, err)
	}
	got, _ := io.ReadAll(r)
	want, _ := io.ReadAll(ExampleData())
	if !bytes.Equal(got, want) {
		t.Fatal("OpenData(\"\") is not the example")
	}
	if _, _, err := OpenData("nosuch.csv"); err == nil {
		t.Fatal("a missing file opened")
	}
	if c, err := ExampleClassParsed(); err != nil || len(c.Chains) != 2 {
		t.Fatalf("example class: %v", err)
	}
}

// PlaceAt: an origin is read as the data's times are; none leaves the
// start unknown exactly when the release is recorded with others.
func TestPlaceAt(t *testing.T) {
	for _, recorded := range []bool{false, true} {
		req := Request{CSV: reading.DefaultCSV}
		if err := req.PlaceAt("", recorded); err != nil || req.UnknownStart != recorded || req.Origin != nil {
			t.Fatalf("no origin, recorded %v: %+v, %v", recorded, req, err)
		}
	}
	req := Request{CSV: reading.DefaultCSV}
	if err := req.PlaceAt("2024-03-01T00:00:00Z", true); err != nil || req.Origin == nil || *req.Origin != 1709251200 || req.UnknownStart {
		t.Fatalf("origin: %+v, %v", req, err)
	}
	if err := req.PlaceAt("noon", false); err == nil || !strings.HasPrefix(err.Error(), `origin "noon": `) {
		t.Fatalf("a bad origin: %v", err)
	}
}

// WriteJSON adds the fields at the end of the report's own JSON and leaves
// out a nil one.
func TestWriteJSONFields(t *testing.T) {
	class, err := ExampleClassParsed()
	if err != nil {
		t.Fatal(err)
	}
	rep, _, err := Run(ExampleData(), exampleName, Request{Class: class, CSV: reading.DefaultCSV, Options: Options{Epsilon: 1, Method: "exact"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep, Field{Name: "ledger", Value: map[string]int{"releases": 2}}, Field{Name: "none"}); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	if !bytes.HasSuffix(out, []byte("  \"ledger\": {\n    \"releases\": 2\n  }\n}\n")) || bytes.Contains(out, []byte(`"none"`)) {
		t.Fatalf("fields: %s", out[max(0, len(out)-200):])
	}
	var got, want map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	json.Unmarshal(b, &want)
	delete(got, "ledger")
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the report's JSON changed")
	}
}

// FitClass estimates transitions by counting (no smoothing): b a b a a
// has a→a once, a→b once and b→a twice; sorted, the states are a, b.
func TestFitClass(t *testing.T) {
	data, err := reading.ReadData(strings.NewReader("b\na\nb\na\na\n"), "x", reading.DefaultCSV)
	if err != nil {
		t.Fatal(err)
	}
	c, err := FitClass(data, "x", 0, markov.InitAny, true)
	if err != nil {
		t.Fatal(err)
	}
	ch := c.Chains[0]
	if !reflect.DeepEqual(c.States, []string{"a", "b"}) || !reflect.DeepEqual(ch.P, [][]float64{{0.5, 0.5}, {1, 0}}) {
		t.Fatalf("states %v, P %v", c.States, ch.P)
	}
	if _, err := FitClass(data, "x", 0, markov.InitStationary, false); err != nil {
		t.Fatal(err)
	}
}
