package serve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Missing values are readings of unknown value (docs/math.md §4.8): two
// datasets that differ only in values — one with many missing, a series
// with every value missing — show the same sizes and give the same release
// answers but for the noise (σ, scales, sizes, warnings; windows too).
func TestAuditNAServiceSizes(t *testing.T) {
	f := newFixture(t, "")
	data := filepath.Join(f.dir, "data")
	na := "series,time,kw\na,0,NA\na,60,1.2\na,120,\na,180,2.9\na,300,?\nb,0,NA\nb,60,NaN\nc,0,0.4\nc,60,NA\n"
	filled := "series,time,kw\na,0,0.1\na,60,1.2\na,120,2.2\na,180,2.9\na,300,0.3\nb,0,1.1\nb,60,0.7\nc,0,0.4\nc,60,2.5\n"
	os.WriteFile(filepath.Join(data, "na.csv"), []byte(na), 0o644)
	os.WriteFile(filepath.Join(data, "filled.csv"), []byte(filled), 0o644)
	class := `{"states": ["0", "1", "2"], "chains": [{"transition": [[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]], "initial": "stationary"}]}`
	var scopes []string
	for _, name := range []string{"na", "filled"} {
		body := `{"name": "` + name + `", "data": "` + name + `.csv", "class": ` + class + `, "budget": 100, "value_col": "kw", "levels": "0:3:3", "series_col": "series", "time_col": "time"}`
		if code, resp, _ := f.do("POST", "/v1/datasets", f.admin, body); code != 201 {
			t.Fatalf("registering %s: %d %v", name, code, resp)
		}
		scopes = append(scopes, "read:"+name, "release:"+name)
	}
	tok, _, err := f.store.CreateToken(context.Background(), scopes, nil)
	if err != nil {
		t.Fatal(err)
	}
	view := func(name string) string {
		code, body, _ := f.do("GET", "/v1/datasets/"+name, tok, "")
		if code != 200 {
			t.Fatalf("%s: %d %v", name, code, body)
		}
		b, _ := json.Marshal(body["sizes"])
		return string(b)
	}
	if a, b := view("na"), view("filled"); a != b || !strings.Contains(a, `"readings":9`) || !strings.Contains(a, `"missing":1`) {
		t.Fatalf("sizes: NA %s, filled %s (want 9 readings, 1 missing step)", a, b)
	}
	for _, req := range []string{
		`{"method": "exact", "epsilon": 1}`,
		`{"method": "exact", "epsilon": 1, "query": "relative"}`,
		`{"method": "exact", "epsilon": 1, "query": "mean"}`,
		`{"method": "exact", "epsilon": 1, "query": "mean", "window": "2m"}`,
	} {
		var got []string
		for _, name := range []string{"na", "filled"} {
			code, body, _ := f.do("POST", "/v1/datasets/"+name+"/releases", tok, req)
			if code != 201 {
				t.Fatalf("%s %s: %d %v", name, req, code, body)
			}
			got = append(got, noiseless(body))
		}
		if got[0] != got[1] {
			t.Errorf("%s: the answer depends on which values are missing:\nNA     %s\nfilled %s", req, got[0], got[1])
		}
	}
}

// noiseless is a release answer without its noisy values and what names
// the dataset or the release.
func noiseless(v any) string {
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				switch k {
				case "histogram", "mean", "mean_estimate", "id", "ledger", "dataset", "name":
					continue
				}
				out[k] = strip(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = strip(e)
			}
			return out
		}
		return v
	}
	b, _ := json.Marshal(strip(v))
	return string(b)
}
