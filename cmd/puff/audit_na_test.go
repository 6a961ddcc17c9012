package main

import (
	"encoding/csv"
	"strings"
	"testing"
)

// puff local sanitize on a value column with missing values (docs/math.md
// §6, "Missing values"): every row is written, with a state — a fair coin
// where the value is missing — so two files that differ only in which
// values are missing give outputs of the same shape, with no NA.
// (Regression: the rows whose value was missing were written as NA, which
// printed exactly which rows they were; before that, they were left out.)
func TestAuditNASanitizeWritesNoNA(t *testing.T) {
	files := []string{
		write(t, "a.csv", "series,time,kw\na,0,0.2\na,60,NA\na,120,0.9\na,180,0.7\nb,0,\nb,60,0.1\n"),
		write(t, "b.csv", "series,time,kw\na,0,NA\na,60,0.4\na,120,?\na,180,0.7\nb,0,0.8\nb,60,NaN\n"),
	}
	var shapes []string
	for _, f := range files {
		out, err := run("local", "sanitize", "--data", f, "--value-col", "kw", "--levels", "0:1:2", "--flip", "0.2")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != 7 {
			t.Fatalf("%s: %d records (%v):\n%s", f, len(recs), err, out)
		}
		var shape []string
		for _, r := range recs[1:] {
			if r[2] != "0" && r[2] != "1" {
				t.Errorf("%s: row %v has state %q, want 0 or 1: the output shows which values were missing", f, r, r[2])
			}
			shape = append(shape, r[0]+","+r[1])
		}
		shapes = append(shapes, strings.Join(shape, " "))
	}
	if shapes[0] != shapes[1] {
		t.Errorf("the rows written depend on which values are missing:\n%s\n%s", shapes[0], shapes[1])
	}
}
