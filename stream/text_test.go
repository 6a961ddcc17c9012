package stream

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// Windows survive the round trip through their stored JSON, and print as
// puff stream append prints them.
func TestWindowsText(t *testing.T) {
	rep, _, err := release.Run(strings.NewReader("0\n1\n2\n1\n"), "r.csv", release.Request{Class: testClass(t, `"stationary"`), Options: release.Options{Epsilon: 1, Method: mechanism.Exact}})
	if err != nil {
		t.Fatal(err)
	}
	rel := []Released{{Index: 3, Window: Window{Window: release.Window{Start: "2024-03-01T00:00:00Z", End: "2024-03-02T00:00:00Z", Report: rep}}}}
	wins := WindowsOf(rel)
	var raw []json.RawMessage
	for _, w := range wins {
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b)
	}
	back, err := DecodeWindows(raw)
	if err != nil || len(back) != 1 || back[0].Start != wins[0].Start || back[0].End != wins[0].End || back[0].Epsilon != 1 {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if _, err := DecodeWindows([]json.RawMessage{[]byte(`{"start": 1}`)}); err == nil || !strings.Contains(err.Error(), "stored window 0") {
		t.Fatalf("a bad stored window: %v", err)
	}
	var buf bytes.Buffer
	if err := WriteWindows(&buf, nil, true); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "this file was appended before: nothing changed\nno window closed\n" {
		t.Fatalf("duplicate, no window: %q", got)
	}
	buf.Reset()
	if err := WriteWindows(&buf, back, false); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.HasPrefix(got, "== window 2024-03-01T00:00:00Z – 2024-03-02T00:00:00Z\n") || !strings.HasSuffix(got, "\n\n") {
		t.Fatalf("one window: %q", got)
	}
}

func TestReadAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "day.csv")
	if err := os.WriteFile(p, []byte("series,time,state\na,0,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadAppend(p); err != nil || string(b) != "series,time,state\na,0,1\n" {
		t.Fatalf("%q, %v", b, err)
	}
	if _, err := ReadAppend(p + ".missing"); err == nil {
		t.Fatal("a missing file was read")
	}
}
