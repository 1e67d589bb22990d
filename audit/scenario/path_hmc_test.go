package scenario

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// loadSet loads a scenario of testdata/tight with --set style settings.
func loadSet(t *testing.T, name string, sets ...string) *Config {
	t.Helper()
	var ss []Setting
	for _, s := range sets {
		st, err := ParseSetting(s)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, st)
	}
	c, err := LoadConfig("../../testdata/tight/"+name+".yaml", ss...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pathMuFloor is a floor for μ_lb of a path audit of an exactly μ-GDP path
// with trials runs: the threshold test at Λ = 0 errs with probability
// p = Φ(−μ/2) on each side, on about m = trials/4 evaluation runs; with
// the error count 4 standard deviations above its mean and an upper
// confidence bound of k/m + 2√k/m on the rate, μ_lb stays above
// 2Φ⁻¹(1 − that bound) but for a chance far below 10⁻³.
func pathMuFloor(mu float64, trials int) float64 {
	m := float64(trials) / 4
	p := distuv.UnitNormal.CDF(-mu / 2)
	k := p*m + 4*math.Sqrt(p*m) + 1
	u := math.Min(0.5, (k+2*math.Sqrt(k))/m)
	return 2 * distuv.UnitNormal.Quantile(1-u)
}

// The path audits of DP-HMC and DP-penalty at a reduced run count: the
// correct samplers pass with μ_lb above the floor its run count allows,
// and half the declared noise (a planted bug) is refuted — with 10⁴ runs
// for DP-HMC, whose μ of 5.48 is near the largest μ_lb that 4000 runs
// (10³ evaluation runs a side) can show even without a single error.
func TestPathHMCScenarios(t *testing.T) {
	const trials = 4000
	for _, c := range []struct{ name, sampler, bugTrials string }{{"dp-hmc-path", "dp_hmc", "10000"}, {"dp-penalty-path", "dp_penalty", "4000"}} {
		r := runConfig(t, loadSet(t, c.name, "audit.trials=4000"), 1)
		if r.Violated() {
			t.Errorf("%s: correct sampler refuted: %v", c.name, r.Violations)
		}
		tt := r.Tightness
		if tt == nil || tt.Mu == nil {
			t.Fatalf("%s: no μ tightness: %+v", c.name, tt)
		}
		floor := pathMuFloor(tt.MuUB, trials)
		t.Logf("%s: μ_lb %.4f of μ %.4f (floor %.4f)", c.name, tt.MuLB, tt.MuUB, floor)
		if !(tt.MuLB > floor) || tt.MuLB > tt.MuUB*1.2 {
			t.Errorf("%s: μ_lb %.4f, want in (%.4f, 1.2μ] (μ %.4f)", c.name, tt.MuLB, floor, tt.MuUB)
		}
		bug := runConfig(t, loadSet(t, c.name, "audit.trials="+c.bugTrials, "sampler."+c.sampler+".plant.noise=0.5"), 1)
		if !bug.Violated() {
			t.Errorf("%s: noise × 0.5 not refuted at %s runs", c.name, c.bugTrials)
		}
	}
}
