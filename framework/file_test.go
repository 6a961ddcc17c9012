package framework

import (
	"os"
	"strings"
	"testing"
)

// ReadFile reads what Parse and ParseNetworks read, and a missing file is
// named as the framework's.
func TestReadFile(t *testing.T) {
	const path = "testdata/flu.json"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, wantData, err := Parse(f, path)
	if err != nil {
		t.Fatal(err)
	}
	got, data, err := ReadFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Thetas) != len(want.Thetas) || len(data) != len(wantData) {
		t.Fatalf("ReadFile: %d thetas, data %v; Parse: %d thetas, data %v", len(got.Thetas), data, len(want.Thetas), wantData)
	}
	if _, _, err := ReadFile("testdata/tree30.json", true); err != nil {
		t.Fatalf("networks: %v", err)
	}
	for _, networks := range []bool{false, true} {
		_, _, err := ReadFile("testdata/nosuch.json", networks)
		if err == nil || !strings.HasPrefix(err.Error(), "framework: ") {
			t.Fatalf("networks=%v: missing file: %v", networks, err)
		}
	}
}
