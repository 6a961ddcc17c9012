package markov

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
)

// checkFast: whenever decodeClassFast accepts an input, strictjson accepts
// it too and decodes the same classFile (deep equality: values, nil or
// empty slices, raw "initial" bytes).
func checkFast(t *testing.T, in string) bool {
	t.Helper()
	fast, ok := decodeClassFast([]byte(in))
	var strict classFile
	err := strictjson.Decode([]byte(in), "class x", &strict)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("fast path accepted what strictjson refuses (%v): %q", err, in)
	}
	if !reflect.DeepEqual(fast, strict) {
		t.Fatalf("fast path decoded %+v, strictjson %+v: %q", fast, strict, in)
	}
	return true
}

// The fast class decoder agrees with strictjson on the class files the
// toolkit writes and ships, on random classes in random layouts, and on
// thousands of random edits of them (each either refused by the fast path
// or decoded identically).
func TestDecodeClassFastAgreesWithStrict(t *testing.T) {
	var seeds []string
	for _, p := range []string{"../examples/class.json", "../release/example/activity_class.json"} {
		if b, err := os.ReadFile(p); err == nil {
			seeds = append(seeds, string(b))
		}
	}
	rng := rand.New(rand.NewPCG(71, 73))
	ws := []string{"", " ", "\n", "\t", "\r\n  "}
	w := func() string { return ws[rng.IntN(len(ws))] }
	nums := []string{"0", "1", "0.5", "1e-3", "2.5E+2", "-0", "0.0019960079840319364", "3.0e-320", "1E400", "01", "1.", ".5", "-", "1e", "0x1"}
	for range 300 {
		k := 1 + rng.IntN(4)
		var b strings.Builder
		b.WriteString(w() + "{" + w())
		if rng.IntN(4) != 0 {
			b.WriteString(`"states"` + w() + ":" + w() + "[")
			for x := range k {
				if x > 0 {
					b.WriteString("," + w())
				}
				fmt.Fprintf(&b, `"s%d"`, x)
			}
			b.WriteString("]," + w())
		}
		b.WriteString(`"chains":` + w() + "[")
		for c := range 1 + rng.IntN(2) {
			if c > 0 {
				b.WriteString(",")
			}
			b.WriteString("{" + w() + `"transition"` + w() + ":" + w() + "[")
			for x := range k {
				if x > 0 {
					b.WriteString("," + w())
				}
				b.WriteString("[")
				for y := range k {
					if y > 0 {
						b.WriteString("," + w())
					}
					if rng.IntN(8) == 0 {
						b.WriteString(nums[rng.IntN(len(nums))])
					} else {
						fmt.Fprint(&b, 1/float64(k))
					}
				}
				b.WriteString("]")
			}
			b.WriteString("]")
			switch rng.IntN(4) {
			case 0:
				b.WriteString(`,"initial":"any"`)
			case 1:
				b.WriteString(`, "initial" : "stationary"` + w())
			case 2:
				b.WriteString(`,"initial":[` + strings.Repeat("0,", k-1) + "1]")
			}
			b.WriteString(w() + "}")
		}
		b.WriteString("]" + w() + "}" + w())
		seeds = append(seeds, b.String())
	}
	accepted, edited := 0, 0
	edits := []string{"", " ", "\"", "\\", ",", ":", "[", "]", "{", "}", "0", "e", "-", ".", "null", "\"States\"", "\"initial\"", "\"chains\"", "\"transition\"", "\xff", "\x01", "é"}
	for _, s := range seeds {
		if checkFast(t, s) {
			accepted++
		}
		for range 20 {
			i, j := rng.IntN(len(s)+1), rng.IntN(len(s)+1)
			if i > j {
				i, j = j, i
			}
			j = min(j, i+rng.IntN(4))
			e := s[:i] + edits[rng.IntN(len(edits))] + s[j:]
			if checkFast(t, e) {
				edited++
			}
		}
	}
	if accepted < 100 || edited < 100 {
		t.Fatalf("the fast path accepted only %d of %d inputs and %d edits", accepted, len(seeds), edited)
	}
	// a repeated key is left to strictjson, which refuses it
	for _, in := range []string{
		`{"chains": [{"transition": [[1]]}], "chains": [{"transition": [[1]]}]}`,
		`{"chains": [{"transition": [[1]], "transition": [[1]]}]}`,
		`{"states": ["a"], "states": ["a"], "chains": [{"transition": [[1]]}]}`,
		`{"chains": [{"transition": [[1]], "initial": "any", "initial": "any"}]}`,
	} {
		if _, ok := decodeClassFast([]byte(in)); ok {
			t.Fatalf("fast path accepted a repeated key: %s", in)
		}
		if _, err := ParseClass(strings.NewReader(in), "dup.json"); err == nil || !strings.Contains(err.Error(), "duplicate key") {
			t.Fatalf("repeated key: %v", err)
		}
	}
}
