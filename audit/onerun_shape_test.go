package audit

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// pointBounds is what a reader takes of a release point's bounds from a
// JSON report of either design: every bound decodes into stats.Estimate.
type pointBounds struct {
	Point     mechanisms.ReleasePoint `json:"point"`
	Region    *stats.Estimate         `json:"region"`
	GDP       *stats.Estimate         `json:"gdp"`
	OneRun    *stats.Estimate         `json:"one_run"`
	OneRunFDP *stats.Estimate         `json:"one_run_fdp"`
	Ceiling   stats.Estimate          `json:"ceiling"`
}

// decodeBounds writes r as JSON and reads its points back as pointBounds.
func decodeBounds(t *testing.T, r *Report) ([]pointBounds, stats.Estimate) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Points  []pointBounds  `json:"points"`
		Epsilon stats.Estimate `json:"epsilon"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Points, doc.Epsilon
}

// A one-run report and a multi-run report give their per-point bounds in
// one shape: both decode into pointBounds, each bound equal to the
// report's own (counts in the multi-run design, guesses in the canary
// design), and the headline likewise.
func TestBothDesignsDecodeIntoOneType(t *testing.T) {
	multi := runGauss(t, 3, gaussOptions(1, 400))
	one := canaryReport(t, canaryTarget(400, 2, 2), Options{Seed: 2, Canaries: &CanaryDesign{Count: 400}, Delta: 1e-5}, Execution{Workers: 1})
	for _, c := range []struct {
		name     string
		r        *Report
		eps, mu  string
		guesses  bool
		headline stats.Estimate
	}{{"multi-run", multi, "region", "gdp", false, multi.Epsilon}, {"canaries", one, "one-run", "one-run-fdp", true, one.Epsilon}} {
		pts, head := decodeBounds(t, c.r)
		if len(pts) != len(c.r.Points) || len(pts) == 0 {
			t.Fatalf("%s: %d points decoded, %d in the report", c.name, len(pts), len(c.r.Points))
		}
		if (head.Guesses != nil) != c.guesses || head.Epsilon != c.headline.Epsilon || head.Estimator != c.headline.Estimator {
			t.Errorf("%s: headline decoded %+v, report %+v", c.name, head, c.headline)
		}
		for k, p := range pts {
			eps, mu := p.Region, p.GDP
			if c.guesses {
				eps, mu = p.OneRun, p.OneRunFDP
			}
			if eps == nil || mu == nil {
				t.Fatalf("%s point %d: bounds missing: %+v", c.name, k, p)
			}
			want, _ := c.r.Points[k].Estimate(c.eps)
			wantMu, _ := c.r.Points[k].Estimate(c.mu)
			if eps.Epsilon != want.Bound.Epsilon || eps.Confidence != want.Bound.Confidence || (eps.Guesses != nil) != c.guesses {
				t.Errorf("%s point %d: ε bound decoded %+v, report %+v", c.name, k, *eps, want.Bound)
			}
			if mu.Mu != wantMu.Bound.Mu || mu.Assumption == "" {
				t.Errorf("%s point %d: μ bound decoded %+v, report %+v", c.name, k, *mu, wantMu.Bound)
			}
			if c.guesses && *eps.Guesses != *want.Bound.Guesses {
				t.Errorf("%s point %d: guesses %+v, want %+v", c.name, k, *eps.Guesses, *want.Bound.Guesses)
			}
			if !c.guesses && eps.Counts != want.Bound.Counts {
				t.Errorf("%s point %d: counts %+v, want %+v", c.name, k, eps.Counts, want.Bound.Counts)
			}
			if p.Ceiling.Epsilon < eps.Epsilon {
				t.Errorf("%s point %d: ceiling %v below ε_lb %v", c.name, k, p.Ceiling.Epsilon, eps.Epsilon)
			}
		}
	}
}
