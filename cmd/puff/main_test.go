package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(args ...string) (string, error) {
	var out bytes.Buffer
	c := root(&out)
	c.SetArgs(args)
	c.SetErr(&bytes.Buffer{})
	err := c.Execute()
	return out.String(), err
}

const twoState = `{"states": ["0", "1"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"}]}`

// The scale contract: one JSON object with method, epsilon, length,
// applicable, sigma (number or null) and quilt ({a, b} or null).
func TestScaleJSONContract(t *testing.T) {
	class := write(t, "c.json", twoState)
	for _, m := range []string{"exact", "approx", "gk16", "groupdp", "dp"} {
		out, err := run("scale", "--class", class, "--epsilon", "1", "--length", "100", "--method", m, "--json")
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%s: not one JSON object: %v\n%s", m, err, out)
		}
		for _, k := range []string{"method", "epsilon", "length", "applicable", "sigma", "quilt"} {
			if _, ok := v[k]; !ok {
				t.Fatalf("%s: field %q missing", m, k)
			}
		}
		app := v["applicable"].(bool)
		if app == (v["sigma"] == nil) {
			t.Fatalf("%s: applicable=%v but sigma=%v", m, app, v["sigma"])
		}
		if (m == "exact" || m == "approx") == (v["quilt"] == nil) {
			t.Fatalf("%s: quilt=%v", m, v["quilt"])
		}
		if m == "groupdp" && v["sigma"].(float64) != 100 {
			t.Fatalf("groupdp σ = %v, want T/ε = 100", v["sigma"])
		}
	}
}

// Every bad input fails with a message naming the problem and prints
// nothing on stdout.
func TestErrorsPrintNothing(t *testing.T) {
	good := write(t, "c.json", twoState)
	bad := write(t, "bad.json", `{"chains": [{"transition": [[0.8, 0.1], [0.3, 0.7]]}]}`)
	nan := write(t, "nan.json", `{"chains": [{"transition": [[NaN, 0.1], [0.3, 0.7]]}]}`)
	periodic := write(t, "per.json", `{"chains": [{"transition": [[0, 1], [1, 0]], "initial": "stationary"}]}`)
	data := write(t, "d.csv", "series,time,state\na,1,0\na,2,7\n")
	missing := write(t, "m.csv", "series,time,state\na,1,0\na,2\n")
	empty := write(t, "e.csv", "")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"scale", "--class", bad, "--length", "10"}, "row 0"},
		{[]string{"scale", "--class", nan, "--length", "10"}, "line 1"},
		{[]string{"scale", "--class", good, "--length", "10", "--epsilon", "0"}, "--epsilon"},
		{[]string{"scale", "--class", good, "--length", "10", "--epsilon", "-1"}, "--epsilon"},
		{[]string{"scale", "--class", good, "--length", "10", "--method", "magic"}, "--method"},
		{[]string{"release", "--data", data, "--class", good}, `d.csv:3: state "7" is not declared`},
		{[]string{"release", "--data", missing, "--class", good}, "m.csv:3: missing field"},
		{[]string{"release", "--data", empty, "--class", good}, "empty data file"},
		{[]string{"release", "--data", data}, "--class FILE"},
	}
	// approx on a periodic class is not applicable (as gk16), not an error
	if v := runJSON(t, "scale", "--class", periodic, "--length", "10", "--method", "approx", "--json"); v["applicable"] != false || v["sigma"] != nil {
		t.Errorf("approx on a periodic class: %v", v)
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			out, err := run(c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.want)
			}
			if out != "" {
				t.Errorf("%v: printed %q on stdout despite the error", c.args, out)
			}
		})
	}
}

func TestReleaseExampleJSON(t *testing.T) {
	out, err := run("release", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Histogram []struct{ State string } `json:"histogram"`
		Sigma     float64                  `json:"sigma"`
		Method    string                   `json:"method"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Histogram) != 4 || r.Sigma <= 0 || r.Method != "exact" {
		t.Fatalf("%v %+v", err, r)
	}
	if strings.Contains(out, "p01") {
		t.Fatal("report leaks series identifiers")
	}
}

// The binary exits with status 2 on bad input.
func TestExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := binary(t)
	cmd := exec.Command(bin, "scale", "--length", "10")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || stdout.Len() != 0 {
		t.Fatalf("exit %v, stdout %q", err, stdout.String())
	}
	// a violated verdict prints the answer and exits 3
	cmd = exec.Command(bin, "verify", "check", "--builtin", "rr", "--keep", "3/4", "--epsilon", "1")
	stdout.Reset()
	cmd.Stdout = &stdout
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(stdout.String(), "violated") {
		t.Fatalf("violated: exit %v, stdout %q", err, stdout.String())
	}
}

// A series name that is not UTF-8 fails up front naming the file and
// line, with or without --log (it failed after the release with
// `compose: unknown dataset "latin1/p\xe91"`, issue 34).
func TestReleaseSeriesNameNotUTF8(t *testing.T) {
	data := write(t, "latin1.csv", "series,time,state\np\xe91,1,0\np\xe91,2,1\n")
	class := write(t, "c.json", twoState)
	for _, extra := range [][]string{nil, {"--log", filepath.Join(t.TempDir(), "l.json")}} {
		_, err := run(append([]string{"release", "--data", data, "--class", class}, extra...)...)
		if err == nil || !strings.Contains(err.Error(), `latin1.csv:2: series name "p\xe91" is not UTF-8 text`) || strings.Contains(err.Error(), "compose") {
			t.Errorf("%v: %v", extra, err)
		}
	}
}
