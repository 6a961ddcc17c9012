package strictjson

import (
	"strings"
	"testing"
)

type doc struct {
	A int `json:"a"`
	B struct {
		C []int `json:"c"`
	} `json:"b"`
}

func TestDecode(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"ok", `{"a": 1, "b": {"c": [1, 2]}}`, ""},
		{"duplicate key", "{\"a\": 1,\n \"a\": 2}", `f.json: line 2, column 2: duplicate key "a"`},
		{"nested duplicate", `{"b": {"c": [1], "c": [2]}}`, `duplicate key "c"`},
		{"same key in sibling objects", `{"a": 1, "b": {"a": 2}}`, `unknown field "a"`},
		{"trailing garbage", "{\"a\": 1}\n xyz", "line 2, column 2: unexpected data after the JSON document"},
		{"second document", `{"a": 1} {"a": 2}`, "unexpected data"},
		{"unknown field", "{\"a\": 1,\n\"zz\": 3}", `line 2`},
		{"syntax error", "{\"a\": 1,\n\"b\": }", "line 2, column 6"},
		{"type error", `{"a": "x"}`, "line 1"},
		{"empty", ``, "empty input"},
		{"truncated", `{"a": 1`, "ends early"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d doc
			err := Decode([]byte(c.in), "f.json", &d)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a": 1, "b": {"c": [1, 2]}}`, `{"a":1,"a":2}`, `[1, {"x": [{"y": 1, "y": 2}]}]`, `{} x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		_ = Decode([]byte(s), "fuzz", &v) // must not panic
	})
}

func TestAddField(t *testing.T) {
	for _, c := range []struct {
		in   string
		val  any
		want string
	}{
		{`{"a":1}`, 2, `{"a":1,"b":2}`},
		{`{}`, "x", `{"b":"x"}`},
		{` { } `, true, `{ "b":true}`},
		{`[1]`, 2, `[1]`},
		{`{"a":1}`, nil, `{"a":1}`},
	} {
		if got := string(AddField([]byte(c.in), "b", c.val)); got != c.want {
			t.Errorf("AddField(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
