package scenario

import (
	"math"
	"testing"
)

// The shipped DP-HMC scenario moves and samples the posterior on D, as its
// description says: acceptance between 20% and 60% at every release, no
// "barely moves" warning, and at the last release (4000 runs, about 2000 a
// side) the releases' mean within 0.1 posterior SDs of the exact posterior
// mean on D (4.5 standard errors of 1/√2000 ≈ 0.022 plus the chain's own
// small bias) and their SD within 10% of the posterior's; on D′ clipping
// keeps them away from the exact posterior (by more than 0.3 SD); and the
// audit finds a positive ε lower bound.
func TestDPHMCScenarioMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	c, err := LoadConfig("../../testdata/dp-hmc-gauss.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := runConfig(t, c, 2)
	if len(r.Warnings) > 0 || r.HeadlineBarelyMoves() {
		t.Errorf("warnings: %v", r.Warnings)
	}
	for _, pr := range r.Points {
		u := pr.Utility
		if u == nil || u.AcceptanceRate == nil || *u.AcceptanceRate < 0.2 || *u.AcceptanceRate > 0.6 || u.BarelyMoves || len(u.Posterior) != 2 {
			t.Fatalf("%s: utility %+v", pr.Point.Label, u)
		}
	}
	last := r.Points[len(r.Points)-1].Utility.Posterior
	for j := range last[0].MeanError {
		if math.Abs(last[0].MeanError[j]) > 0.1 || math.Abs(last[0].SDRatio[j]-1) > 0.1 {
			t.Errorf("D, coordinate %d: mean error %.3g SD, SD ratio %.3g", j, last[0].MeanError[j], last[0].SDRatio[j])
		}
	}
	worst := 0.0
	for _, e := range last[1].MeanError {
		worst = math.Max(worst, math.Abs(e))
	}
	if worst < 0.3 {
		t.Errorf("D′: mean error %v: clipping should keep the chain away from the exact posterior with the canary", last[1].MeanError)
	}
	if r.Epsilon.Epsilon <= 0 {
		t.Errorf("headline ε_lb = %g", r.Epsilon.Epsilon)
	}
	t.Logf("acceptance %.3f; last release: D mean error %.3v SD, SD ratio %.3v; D′ mean error %.3v; ε_lb = %.4g",
		*r.Points[len(r.Points)-1].Utility.AcceptanceRate, last[0].MeanError, last[0].SDRatio, last[1].MeanError, r.Epsilon.Epsilon)
}
