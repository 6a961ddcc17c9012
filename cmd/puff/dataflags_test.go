package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Read reads the file with the flags' options (the declared states as
// the bins), keeping the times as written only when asked; a bad flag is
// an error naming it before the file is opened.
func TestDataFlagsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(path, []byte("series,time,state\na,0,y\na,60,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := parseReadFlags(t, []string{"--states", "x,y"})
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		data, name, err := d.Read(path, keep)
		if err != nil || name != path {
			t.Fatal(name, err)
		}
		if !slices.Equal(data.States, []string{"x", "y"}) || len(data.Seqs) != 1 || !slices.Equal(data.Seqs[0], []int{1, 0}) {
			t.Errorf("states %v, seqs %v", data.States, data.Seqs)
		}
		if (data.TimeText != nil) != keep {
			t.Errorf("keepTimes %v: times as written %v", keep, data.TimeText)
		}
	}
	d, err = parseReadFlags(t, []string{"--levels", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Read(filepath.Join(t.TempDir(), "nosuch.csv"), false); err == nil || !strings.HasPrefix(err.Error(), "--levels") {
		t.Errorf("bad --levels: %v", err)
	}
}

// parseReadFlags parses args with the reading flags of a dataFlags.
func parseReadFlags(t *testing.T, args []string) (*dataFlags, error) {
	t.Helper()
	var d dataFlags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	d.DataFlags.Register(fs)
	return &d, fs.Parse(args)
}
