package release_test

import (
	"context"
	"errors"
	"testing"

	"github.com/pufferfish-privacy/pufferfish/markov"
	"github.com/pufferfish-privacy/pufferfish/mechanism"
	"github.com/pufferfish-privacy/pufferfish/reading"
	"github.com/pufferfish-privacy/pufferfish/release"
)

// PlanScale, before any data, is the calibration a release of the
// built-in example draws its noise with: its σ, the bound that set it and
// both bounds' values (the planner of puff serve reports it, issue 40).
func TestPlanScaleIsTheReleasesCalibration(t *testing.T) {
	class, err := markov.ParseClass(release.ExampleClass(), "example class")
	if err != nil {
		t.Fatal(err)
	}
	opts := reading.DefaultCSV
	opts.States = class.States
	data, err := reading.ReadData(release.ExampleData(), "example", opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, eps := range []float64{0.5, 1} {
		r, err := release.Histogram(data, class, false, release.Options{Epsilon: eps, Method: mechanism.Exact})
		if err != nil {
			t.Fatal(err)
		}
		p, err := release.PlanScale(context.Background(), class, r.MaxLength, eps, mechanism.Exact, release.Limits{}, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if release.UsedSigma(p) != release.UsedSigma(r) || *p.Calibration != *r.Calibration || p.Guarantee != r.Guarantee {
			t.Errorf("ε = %g: planned σ %v %+v, released σ %v %+v", eps, release.UsedSigma(p), *p.Calibration, release.UsedSigma(r), *r.Calibration)
		}
	}
	// a method other than MQM keeps its σ, saying so
	p, err := release.PlanScale(context.Background(), class, 10, 1, mechanism.GroupDP, release.Limits{}, nil, false)
	if err != nil || p.Sigma != 10 || p.Calibration.Method != string(mechanism.GroupDP) {
		t.Fatalf("groupdp: %v %+v", err, p)
	}
	// a stopped computation is an error wrapping the context's
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := release.PlanScale(ctx, class, 480, 0.3, mechanism.Exact, release.Limits{}, nil, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled plan: %v", err)
	}
}
