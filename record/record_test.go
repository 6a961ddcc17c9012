package record

import (
	"encoding/json"
	"strings"
	"testing"
)

// A record names its profile when it has one, and records without one —
// every record before profiles — read and write as before: no "profile"
// field, the query listed alone.
func TestProfileField(t *testing.T) {
	old := `{"mechanism":"exact","epsilon":0.5,"class":"sha256:x","query":"mean","segments":null}`
	var r Release
	if err := json.Unmarshal([]byte(old), &r); err != nil {
		t.Fatal(err)
	}
	if r.Profile != "" || r.QueryName() != "mean" {
		t.Fatalf("an old record: profile %q, listed as %q", r.Profile, r.QueryName())
	}
	if b, _ := json.Marshal(r); string(b) != old {
		t.Fatalf("an old record rewritten as %s", b)
	}
	r.Profile = "hour-of-day"
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"profile":"hour-of-day"`) || r.QueryName() != "mean by hour-of-day" {
		t.Fatalf("%s, listed as %q", b, r.QueryName())
	}
}
