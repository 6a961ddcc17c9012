package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/estimate"
)

// Consistent is the joint estimate of a windowed release and a profile
// release of the same readings (docs/math.md §4.14, "Windows and profiles
// together"): every window's and every cell's count histogram projected,
// in the norm weighted by the noise variances, onto the histograms that
// are non-negative, sum to their readings, and add up to the same total
// histogram on both sides. Post-processing of the two published reports:
// it costs no privacy and reads nothing else.
type Consistent struct {
	Bins     []string          `json:"bins"`
	Windows  []ConsistentEntry `json:"windows"`
	Profile  []ConsistentEntry `json:"profile"`
	Total    []float64         `json:"total"`    // the total histogram both sides now agree on
	Readings float64           `json:"readings"` // the readings of either side (public)
	// Disagreement is the largest difference between the two sides'
	// totals of a bin before (the noisy estimates each release printed)
	// and after.
	DisagreementBefore float64 `json:"disagreement_before"`
	DisagreementAfter  float64 `json:"disagreement_after"`
	// Warnings: the iteration stopped at its round cap before its
	// tolerance (estimate.JointResult.Capped).
	Warnings []string `json:"warnings,omitempty"`
}

// ConsistentEntry is one window's or cell's joint estimate.
type ConsistentEntry struct {
	Start    string    `json:"start,omitempty"`
	End      string    `json:"end,omitempty"`
	Cell     string    `json:"cell,omitempty"`
	Estimate []float64 `json:"estimate"`
}

// reportEntry is what ConsistentReports reads of a window or a cell.
type reportEntry struct {
	Start        string   `json:"start"`
	End          string   `json:"end"`
	Cell         string   `json:"cell"`
	Query        string   `json:"query"`
	Observations *float64 `json:"observations"`
	PerBinScale  *float64 `json:"per_bin_scale"`
	// EstimateAtMost is Report.EstimateAtMost: a reading's value may be
	// missing, so the histogram sums to at most its readings.
	EstimateAtMost bool `json:"estimate_at_most"`
	Histogram      []struct {
		State    string   `json:"state"`
		Value    *float64 `json:"value"`
		Estimate *float64 `json:"estimate"`
		Range    string   `json:"range"`
	} `json:"histogram"`
}

// maxReportBytes bounds a report ConsistentReports reads (a release of
// --max-windows 10,000 windows of 1,000 bins is about 500 MB; this is far
// above the reports puff writes by default and far below memory).
const maxReportBytes = 1 << 30

// ConsistentReports reads a windowed release (`puff release --window …
// --json`) from w and a profile release (`--profile … --json`) from p, of
// the same readings and levels, and returns their joint estimate. Both
// must be count histograms ("counts"). A histogram whose readings may miss
// their value (its report's estimate sums at most to its readings:
// Report.EstimateSumsAtMost, the release's own rule — numeric levels, a
// nullable Parquet column) is held to sum at most to its readings; any
// other, exactly. The names are for errors.
func ConsistentReports(ctx context.Context, w io.Reader, wName string, p io.Reader, pName string) (*Consistent, error) {
	var wr struct {
		Windows []reportEntry `json:"windows"`
	}
	var pr struct {
		Profile []reportEntry `json:"profile"`
	}
	if err := decodeReport(w, wName, &wr); err != nil {
		return nil, err
	}
	if err := decodeReport(p, pName, &pr); err != nil {
		return nil, err
	}
	if len(wr.Windows) == 0 {
		return nil, fmt.Errorf("%s: no \"windows\": give the JSON report of a release with --window", wName)
	}
	if len(pr.Profile) == 0 {
		return nil, fmt.Errorf("%s: no \"profile\": give the JSON report of a release with --profile", pName)
	}
	var bins []string
	side := func(entries []reportEntry, name, what string) ([]estimate.Histogram, []float64, error) {
		var hs []estimate.Histogram
		var before []float64
		for i, e := range entries {
			where := fmt.Sprintf("%s: %s %d", name, what, i+1)
			if e.Query != "counts" {
				return nil, nil, fmt.Errorf("%s: query %q: only count histograms (--query counts) have a joint estimate", where, e.Query)
			}
			if e.Observations == nil || !(*e.Observations >= 0) || math.IsInf(*e.Observations, 0) || *e.Observations != math.Trunc(*e.Observations) {
				return nil, nil, fmt.Errorf("%s: \"observations\" missing or not a count", where)
			}
			if e.PerBinScale == nil || !(*e.PerBinScale > 0) || math.IsInf(*e.PerBinScale, 0) {
				return nil, nil, fmt.Errorf("%s: \"per_bin_scale\" missing or not a positive number", where)
			}
			var labels []string
			h := estimate.Histogram{N: *e.Observations, Variance: 2 * *e.PerBinScale * *e.PerBinScale}
			numeric := false
			for j, b := range e.Histogram {
				if b.Value == nil || math.IsNaN(*b.Value) || math.IsInf(*b.Value, 0) {
					return nil, nil, fmt.Errorf("%s: bin %d: \"value\" missing or not finite", where, j+1)
				}
				labels = append(labels, b.State)
				h.Noisy = append(h.Noisy, *b.Value)
				if b.Range != "" {
					numeric = true
				}
				if b.Estimate != nil {
					if len(before) < len(e.Histogram) {
						before = append(before, make([]float64, len(e.Histogram)-len(before))...)
					}
					before[j] += *b.Estimate
				}
			}
			if len(labels) == 0 {
				return nil, nil, fmt.Errorf("%s: no histogram", where)
			}
			h.Exact = !estimateAtMost(e.EstimateAtMost, numeric)
			if bins == nil {
				bins = labels
			} else if !slices.Equal(bins, labels) {
				return nil, nil, fmt.Errorf("%s: its bins (%s) are not the other histograms' (%s)", where, strings.Join(labels, ","), strings.Join(bins, ","))
			}
			hs = append(hs, h)
		}
		return hs, before, nil
	}
	a, beforeA, err := side(wr.Windows, wName, "window")
	if err != nil {
		return nil, err
	}
	b, beforeB, err := side(pr.Profile, pName, "profile cell")
	if err != nil {
		return nil, err
	}
	jr, err := estimate.Joint(ctx, a, b)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s and %s: %w", wName, pName, err)
	}
	return consistentOf(jr, bins, wr.Windows, pr.Profile, a, beforeA, beforeB), nil
}

// consistentOf is ConsistentReports' result from the joint estimate jr of
// the windows' and cells' histograms (a: the windows'), with the sums of
// the estimates each release printed (before; nil when not all printed
// one).
func consistentOf(jr *estimate.JointResult, bins []string, windows, cells []reportEntry, a []estimate.Histogram, beforeA, beforeB []float64) *Consistent {
	ea, eb := jr.A, jr.B
	out := &Consistent{Bins: bins, Total: make([]float64, len(bins))}
	totB := make([]float64, len(bins))
	for i, e := range windows {
		out.Windows = append(out.Windows, ConsistentEntry{Start: e.Start, End: e.End, Estimate: ea[i]})
		out.Readings += a[i].N
		for j, v := range ea[i] {
			out.Total[j] += v
		}
	}
	for i, e := range cells {
		out.Profile = append(out.Profile, ConsistentEntry{Cell: e.Cell, Estimate: eb[i]})
		for j, v := range eb[i] {
			totB[j] += v
		}
	}
	for j := range bins {
		out.DisagreementAfter = max(out.DisagreementAfter, math.Abs(out.Total[j]-totB[j]))
		if len(beforeA) == len(bins) && len(beforeB) == len(bins) {
			out.DisagreementBefore = max(out.DisagreementBefore, math.Abs(beforeA[j]-beforeB[j]))
		}
	}
	if jr.Capped {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the joint estimate stopped at its cap of %d rounds before its tolerance (%g of the largest histogram's readings): every histogram is non-negative and sums to its readings (at most, where a value may be missing), but the two sides' totals agree only to %.3g, and the estimate is not the projection to that accuracy", jr.Rounds, estimate.JointTol, out.DisagreementAfter))
	}
	return out
}

// decodeReport decodes one JSON report, at most maxReportBytes, naming
// the file in errors.
func decodeReport(r io.Reader, name string, v any) error {
	dec := json.NewDecoder(io.LimitReader(r, maxReportBytes+1))
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return fmt.Errorf("%s: not a JSON report (byte %d: %v)", name, se.Offset, err)
		case errors.As(err, &te):
			return fmt.Errorf("%s: field %q: %v", name, te.Field, err)
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return fmt.Errorf("%s: the JSON report ends early (or is over %d bytes)", name, maxReportBytes)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
