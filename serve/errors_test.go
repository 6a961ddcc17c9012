package serve

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Every answer the service gives a release or read token depends on the
// public parts of a dataset only (its observation pattern, sizes and
// class), never on the values read: two datasets with the same series,
// times and missing pattern but different values get the same status and
// the same error for every request below, and successful answers the same
// fields. The request list walks the error paths of every endpoint such a
// token reaches (bad fields, limits, refusals, replays). Issue 34: "an
// error shown to a caller must not depend on stored private data that the
// caller's scope does not already read".
func TestErrorsDoNotDependOnValues(t *testing.T) {
	class := `{"states": ["x", "y"], "chains": [{"transition": [[0.8, 0.2], [0.3, 0.7]], "initial": "stationary"}]}`
	write := func(f *fixture, name string, value func(s, i int) string) {
		var b strings.Builder
		b.WriteString("series,time,state,kw\n")
		for s := range 3 {
			for i := range 40 {
				if i == 7 && s == 1 {
					continue // a step with no row, in both
				}
				fmt.Fprintf(&b, "s%d,%d,%s\n", s, 3600*i+86400*s, value(s, i))
			}
		}
		if err := os.WriteFile(filepath.Join(f.dir, "data", name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// the same pattern; the values differ (states, numbers, which one is NA)
	values := []func(s, i int) string{
		func(s, i int) string { return []string{"x", "y"}[(s+i/3)%2] + "," + fmt.Sprint(i%5) },
		func(s, i int) string {
			if s == 2 && i == 3 {
				return "y,NA"
			}
			return []string{"y", "x"}[(s*i)%2] + "," + fmt.Sprint(4-(i*i)%5)
		},
	}
	requests := []struct{ method, path, body string }{
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 0.5}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 0.5, "window": "24h"}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 0.5, "window": "1s"}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 0.5, "query": "mean"}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 0.5, "query": "relative", "window": "48h"}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 0.5, "method": "gk16"}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 0.5, "method": "dp"}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 1e-300}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 50}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": "ln(3)", "method": "approx"}`},
		{"POST", "/v1/datasets/%s/releases", `{"epsilon": 0.5, "query": "nope"}`},
		{"GET", "/v1/scale?dataset=%s&epsilon=0.5", ""},
		{"GET", "/v1/scale?dataset=%s&epsilon=0.5&length=100000000", ""},
		{"GET", "/v1/scale?dataset=%s&epsilon=0.5&method=gk16", ""},
		{"GET", "/v1/streams/%s/windows", ""},
		{"POST", "/v1/streams/%s/readings", "series,time,state,kw\ns0,1,x,1\n"},
		{"GET", "/v1/datasets/%s/ledger", ""},
		{"GET", "/v1/datasets/%s", ""},
	}
	answers := make([][]string, 2)
	for v := range values {
		f := newFixture(t, "")
		for _, reg := range []struct{ name, spec string }{
			{"cat", `"states": "x,y"`},
			{"num", `"value_col": "kw", "levels": "0:4:2", "state_col": ""`},
		} {
			write(f, reg.name+".csv", values[v])
			body := fmt.Sprintf(`{"name": %q, "data": %q, "class": %s, "budget": 40, %s}`, reg.name, reg.name+".csv", class, reg.spec)
			if reg.name == "num" {
				body = strings.Replace(body, class, strings.Replace(class, `["x", "y"]`, `["0", "1"]`, 1), 1)
			}
			if code, m, _ := f.do("POST", "/v1/datasets", f.admin, body); code != 201 {
				t.Fatalf("registering %s: %d %v", reg.name, code, m)
			}
			tok := f.mk("release:" + reg.name)
			for _, rq := range requests {
				path := fmt.Sprintf(rq.path, reg.name)
				code, m, _ := f.do(rq.method, path, tok, rq.body)
				answers[v] = append(answers[v], fmt.Sprintf("%s %s %s → %d %s", rq.method, path, rq.body, code, shape(m, code)))
			}
		}
		// the data file becomes unreadable after registration (a bad line
		// quoting a value): a server reading it afresh tells the caller
		// that, not the line
		bad := []string{"s0,1,zz,3\n", "s0,1,qq,1\n"}[v]
		if err := os.WriteFile(filepath.Join(f.dir, "data", "cat.csv"), []byte("series,time,state,kw\n"+bad), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Store: f.store, DataDir: filepath.Join(f.dir, "data")})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(s.Handler())
		f.srv = ts
		code, m, _ := f.do("POST", "/v1/datasets/cat/releases", f.mk("release:cat"), `{"epsilon": 0.5}`)
		if msg, _ := m["error"].(string); code != 500 || !strings.Contains(msg, "can no longer be read") || strings.Contains(msg, bad[4:6]) {
			t.Errorf("unreadable data: %d %v", code, m)
		}
		answers[v] = append(answers[v], fmt.Sprintf("unreadable data → %d %s", code, shape(m, code)))
		ts.Close()
		s.Close()
	}
	for i := range answers[0] {
		if answers[0][i] != answers[1][i] {
			t.Errorf("the answer depends on the values:\n  %s\n  %s", answers[0][i], answers[1][i])
		}
	}
}

// shape is an error's whole body, and a success's field names (its
// numbers are noisy or depend on the values by design).
func shape(m map[string]any, code int) string {
	if code >= 400 {
		delete(m, "ledger") // the budget state, compared by the ledger request
		return fmt.Sprint(m)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}
