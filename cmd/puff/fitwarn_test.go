package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A class fitted from the data makes σ, the per-bin scale and the quilt
// functions of the data: the warning says they are printed and not
// protected, never that the fit "is not printed" (issue 26, item 8).
func TestFitWarningIsTrue(t *testing.T) {
	out, err := run("release", "--fit", "--states", "sleep,sit,walk,run", "--data", "../../release/example/activity.csv", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Sigma    float64  `json:"sigma"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range v.Warnings {
		if strings.Contains(w, "not printed") {
			t.Errorf("warning claims the fit is not printed, yet σ = %v is: %q", v.Sigma, w)
		}
		if strings.Contains(w, "fitted") {
			found = true
			for _, s := range []string{"σ", "per-bin scale", "quilt", "depend on the data", "not protected"} {
				if !strings.Contains(w, s) {
					t.Errorf("fit warning lacks %q: %q", s, w)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no fit warning in %q", v.Warnings)
	}
	data := write(t, "d.csv", "series,time,state\na,0,0\na,1,1\na,2,1\na,3,0\na,4,0\na,5,1\n")
	var stdout, stderr bytes.Buffer
	c := root(&stdout)
	c.SetErr(&stderr)
	c.SetArgs([]string{"local", "sanitize", "--data", data, "--epsilon", "1", "--fit"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if e := stderr.String(); !strings.Contains(e, "depend on the data and are not protected") || !strings.Contains(e, "θ") {
		t.Errorf("local sanitize --fit report does not say θ depends on the data: %q", e)
	}
	c = root(&stdout)
	stderr.Reset()
	c.SetErr(&stderr)
	c.SetArgs([]string{"local", "sanitize", "--data", data, "--epsilon", "1", "--theta", "0.3"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "not protected") {
		t.Errorf("a given θ is public: no fit warning wanted, got %q", stderr.String())
	}
}
