package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An --out that is an input — the same path, a symbolic link or a hard
// link to it — is refused before anything is written, by puff synth and
// puff convert alike (issue 39), and the input is left as it was.
func TestOutIsNotAnInput(t *testing.T) {
	body := "series,time,state\n"
	for i := range 40 {
		body += fmt.Sprintf("a,%d,%s\n", i, []string{"x", "y"}[i%3%2])
	}
	data := write(t, "d.csv", body)
	dir := filepath.Dir(data)
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.csv")
	if err := os.Link(data, hard); err != nil {
		t.Fatal(err)
	}
	class := write(t, "c.json", twoStateXY)
	for _, out := range []string{data, link, hard, filepath.Join(dir, ".", "d.csv")} {
		for _, args := range [][]string{
			{"synth", "--data", data, "--states", "x,y", "--fit", "--epsilon", "1", "--out", out},
			{"synth", "--data", data, "--class", class, "--epsilon", "1", "--out", class},
			{"convert", "--data", data, "--out", out},
		} {
			if args[len(args)-1] == class && out != data {
				continue
			}
			_, err := run(args...)
			if err == nil || !strings.Contains(err.Error(), "--out") || !strings.Contains(err.Error(), "is the input") {
				t.Errorf("%v: %v, want a refusal naming --out", args, err)
			}
		}
	}
	if b, err := os.ReadFile(data); err != nil || string(b) != body {
		t.Fatalf("the input changed: %v", err)
	}
	if b, err := os.ReadFile(class); err != nil || string(b) != twoStateXY {
		t.Fatalf("the class changed: %v", err)
	}
	// a new file beside the input is written
	if _, err := run("convert", "--data", data, "--out", filepath.Join(dir, "d.parquet")); err != nil {
		t.Fatal(err)
	}
}

const twoStateXY = `{"states": ["x", "y"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"}]}`
