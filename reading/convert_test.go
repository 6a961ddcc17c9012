package reading

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ConvertFile writes a gzip or plain CSV file as Parquet that reads back as
// the same data, and a failed conversion leaves nothing behind.
func TestConvertFile(t *testing.T) {
	const csvText = "series,time,state\na,1,x\na,2,y\nb,1,y\nb,3,x\n"
	dir := t.TempDir()
	plain := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(plain, []byte(csvText), 0o644); err != nil {
		t.Fatal(err)
	}
	zipped := filepath.Join(dir, "in.csv.gz")
	f, err := os.Create(zipped)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(csvText))
	zw.Close()
	f.Close()
	want, err := ReadData(strings.NewReader(csvText), "x", DefaultCSV)
	if err != nil {
		t.Fatal(err)
	}
	ty, err := ParseParquetTypes("time=int64")
	if err != nil || !reflect.DeepEqual(ty, map[string]string{"time": "int64"}) {
		t.Fatalf("types: %v, %v", ty, err)
	}
	for _, in := range []string{plain, zipped} {
		out := filepath.Join(dir, filepath.Base(in)+".parquet")
		if err := ConvertFile(in, out, ty, 0); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadData(f, "x", DefaultCSV)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the Parquet file reads as\n%+v, the CSV as\n%+v", in, got, want)
		}
	}
	bad := filepath.Join(dir, "bad.parquet")
	if err := ConvertFile(plain, bad, map[string]string{"time": "nosuch"}, 0); err == nil {
		t.Fatal("an unknown type was written")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "bad") || strings.HasPrefix(e.Name(), ".puff-convert") {
			t.Fatalf("a failed conversion left %s", e.Name())
		}
	}
	for _, s := range []string{"time", "=int64", "time=int64,x"} {
		if _, err := ParseParquetTypes(s); err == nil || !strings.HasPrefix(err.Error(), "types ") {
			t.Errorf("types %q: %v", s, err)
		}
	}
}
