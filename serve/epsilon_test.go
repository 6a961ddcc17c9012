package serve

import (
	"context"
	"math"
	"net/url"
	"testing"
)

// The API reads ε as the CLI does (issue 26, item 6): a JSON number, or a
// string holding a decimal, a fraction or ln(r); the report's ε is the
// value written, and the planner's query parameter takes the same text.
func TestEpsilonStrings(t *testing.T) {
	f := newFixture(t, "")
	for _, c := range []struct {
		body string
		want float64
	}{
		{`{"epsilon": "ln(2)"}`, math.Ln2},
		{`{"epsilon": "1/4"}`, 0.25},
		{`{"epsilon": "0.25"}`, 0.25},
		{`{"epsilon": 0.25}`, 0.25},
	} {
		code, body, _ := f.do("POST", "/v1/datasets/activity/releases", f.releaser, c.body)
		if code != 201 {
			t.Fatalf("%s: %d %v", c.body, code, body)
		}
		if got := body["epsilon"].(float64); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: ε = %v, want %v", c.body, got, c.want)
		}
	}
	for _, bad := range []string{`{"epsilon": "ln(1)"}`, `{"epsilon": "two"}`, `{"epsilon": "0"}`, `{"epsilon": "701"}`, `{"epsilon": true}`, `{"epsilon": [1]}`} {
		if code, body, _ := f.do("POST", "/v1/datasets/activity/releases", f.releaser, bad); code != 400 || body["field"] != "epsilon" {
			t.Errorf("%s: %d %v, want 400 naming epsilon", bad, code, body)
		}
	}
	for _, c := range []struct {
		q    string
		want float64
	}{{"ln(2)", math.Ln2}, {"1/2", 0.5}, {"0.5", 0.5}} {
		code, body, _ := f.do("GET", "/v1/scale?dataset=activity&method=groupdp&length=10&epsilon="+url.QueryEscape(c.q), f.reader, "")
		if code != 200 || math.Abs(body["epsilon"].(float64)-c.want) > 1e-15 || math.Abs(body["sigma"].(float64)-10/c.want) > 1e-12 {
			t.Errorf("scale ε=%s: %d %v, want ε %v, σ = T/ε = %v", c.q, code, body, c.want, 10/c.want)
		}
	}
	if code, body, _ := f.do("GET", "/v1/scale?dataset=activity&epsilon=ln(1)", f.reader, ""); code != 400 || body["field"] != "epsilon" {
		t.Errorf("scale ε=ln(1): %d %v", code, body)
	}
}

// Issue 39, item 3: ε is compared by its exact value under one
// Idempotency-Key: "0.1", 0.1, "1/10" and 1e-1 are the same request (a
// replay, nothing drawn), and ln(2) is not 0.6931471805599453.
func TestIdempotencyComparesEpsilonExactly(t *testing.T) {
	f := newFixture(t, "")
	c, first, _ := f.do("POST", "/v1/datasets/activity/releases", f.releaser, `{"method": "exact", "epsilon": "0.1"}`, "Idempotency-Key", "k1")
	if c != 201 {
		t.Fatalf("%d %v", c, first)
	}
	for _, same := range []string{`0.1`, `"0.1"`, `"1/10"`, `1e-1`, `0.10`, `" 0.1 "`} {
		c, b, h := f.do("POST", "/v1/datasets/activity/releases", f.releaser, `{"method": "exact", "epsilon": `+same+`}`, "Idempotency-Key", "k1")
		if c != 201 || h.Get("Idempotent-Replayed") != "true" || b["id"] != first["id"] {
			t.Errorf("ε %s under the key of ε \"0.1\": %d %v, want the replay of release %v", same, c, b["error"], first["id"])
		}
	}
	if c, _, _ := f.do("POST", "/v1/datasets/activity/releases", f.releaser, `{"method": "exact", "epsilon": "ln(2)"}`, "Idempotency-Key", "k2"); c != 201 {
		t.Fatalf("ln(2): %d", c)
	}
	for _, same := range []string{`"ln(4/2)"`, `"ln(2.0)"`} {
		if c, _, h := f.do("POST", "/v1/datasets/activity/releases", f.releaser, `{"method": "exact", "epsilon": `+same+`}`, "Idempotency-Key", "k2"); c != 201 || h.Get("Idempotent-Replayed") != "true" {
			t.Errorf("ε %s under the key of ln(2): %d, want a replay", same, c)
		}
	}
	for _, other := range []string{`0.6931471805599453`, `"0.11"`} {
		if c, _, _ := f.do("POST", "/v1/datasets/activity/releases", f.releaser, `{"method": "exact", "epsilon": `+other+`}`, "Idempotency-Key", "k2"); c != 422 {
			t.Errorf("ε %s under the key of ln(2): %d, want 422", other, c)
		}
	}
	if es, _ := f.store.Entries(context.Background(), "activity"); len(es) != 2 {
		t.Errorf("%d releases recorded, want 2", len(es))
	}
}
