package serve

import (
	"context"
	"fmt"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// The planner reports the scale a release with its parameters draws its
// noise with (issue 40): on the built-in example class, /v1/scale's
// per-bin scale and σ are the release's, the Markov Quilt Mechanism's σ
// and the leakage bound's are shown apart, and used names the one that
// set the noise (before, the planner showed MQM's σ only).
func TestPlannerScaleIsTheRelease(t *testing.T) {
	f := newFixture(t, "")
	for _, eps := range []string{"1", "0.5"} {
		code, rel, _ := f.do("POST", "/v1/datasets/activity/releases", f.admin, fmt.Sprintf(`{"method": "exact", "epsilon": %s}`, eps))
		if code != 201 {
			t.Fatalf("release at ε = %s: %d %v", eps, code, rel)
		}
		code, plan, _ := f.do("GET", "/v1/scale?dataset=activity&method=exact&epsilon="+eps, f.reader, "")
		if code != 200 {
			t.Fatalf("scale at ε = %s: %d %v", eps, code, plan)
		}
		cal, _ := rel["calibration"].(map[string]any)
		if cal == nil {
			t.Fatalf("the release has no calibration: %v", rel)
		}
		for _, k := range []string{"sigma", "per_bin_scale", "length", "expected_l1_error", "guarantee", "applicable"} {
			if _, ok := plan[k]; !ok {
				t.Errorf("ε = %s: /v1/scale lost its field %q: %v", eps, k, plan)
			}
		}
		if plan["per_bin_scale"] != rel["per_bin_scale"] || plan["sigma"] != rel["sigma"] {
			t.Errorf("ε = %s: the planner's per-bin scale %v (σ %v), the release's %v (σ %v, %v)", eps, plan["per_bin_scale"], plan["sigma"], rel["per_bin_scale"], rel["sigma"], cal["method"])
		}
		if plan["mqm_sigma"] != cal["mqm_sigma"] || plan["used"] != cal["method"] || plan["leakage_sigma"] != cal["tpl_sigma"] {
			t.Errorf("ε = %s: the planner's bounds (mqm %v, leakage %v, used %v), the release's (%v, %v, %v)", eps, plan["mqm_sigma"], plan["leakage_sigma"], plan["used"], cal["mqm_sigma"], cal["tpl_sigma"], cal["method"])
		}
		if plan["guarantee"] != rel["guarantee"] {
			t.Errorf("ε = %s: the planner's guarantee %q, the release's %q", eps, plan["guarantee"], rel["guarantee"])
		}
	}
}

// Where the temporal leakage bound is below the Markov Quilt Mechanism's
// σ, the planner's σ is the leakage bound's and used says so, with the
// release library's calibration for the same class, length and ε.
func TestPlannerShowsTheLeakageBoundWhenSmaller(t *testing.T) {
	f := newFixture(t, "")
	class, err := markov.ParseClass(release.ExampleClass(), "example")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range []struct {
		eps    string
		length int
	}{{"0.1", 480}, {"0.1", 50}, {"1", 50}, {"2", 50}, {"0.1", 10}, {"3", 10}} {
		code, plan, _ := f.do("GET", fmt.Sprintf("/v1/scale?dataset=activity&method=exact&epsilon=%s&length=%d", c.eps, c.length), f.reader, "")
		if code != 200 {
			t.Fatalf("%v: %d %v", c, code, plan)
		}
		var eps float64
		fmt.Sscan(c.eps, &eps)
		// the release's two bounds, each from its own library function
		mqmSigma, err := release.ComputeScale(class, c.length, eps, "exact")
		if err != nil {
			t.Fatal(err)
		}
		leak, err := release.LeakageFor(context.Background(), class, c.length, eps, release.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		want, used := *mqmSigma.Sigma, "mqm"
		if leak.Sigma > 0 && leak.Sigma < want {
			want, used = leak.Sigma, "tpl"
		}
		if plan["sigma"] != want || plan["used"] != used || plan["per_bin_scale"] != 2*want || plan["mqm_sigma"] != *mqmSigma.Sigma {
			t.Errorf("%v: the planner's σ %v (%v, per-bin %v, MQM %v), want %v (%v; MQM %v, leakage %v)", c, plan["sigma"], plan["used"], plan["per_bin_scale"], plan["mqm_sigma"], want, used, *mqmSigma.Sigma, leak.Sigma)
		}
		t.Logf("%v: σ %v used %v mqm %v leakage %v", c, plan["sigma"], plan["used"], plan["mqm_sigma"], plan["leakage_sigma"])
		if plan["used"] == "tpl" {
			found = true
			if !(plan["leakage_sigma"].(float64) < plan["mqm_sigma"].(float64)) || plan["sigma"] != plan["leakage_sigma"] {
				t.Errorf("%v: the leakage bound is used but σ %v, MQM %v, leakage %v", c, plan["sigma"], plan["mqm_sigma"], plan["leakage_sigma"])
			}
		}
	}
	if !found {
		t.Errorf("no case where the leakage bound is used")
	}
}
