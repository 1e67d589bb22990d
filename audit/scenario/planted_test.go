package scenario

import (
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

func runFile(t *testing.T, path string, seed uint64) *audit.Report {
	t.Helper()
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if seed != 0 {
		c.Seed = seed
	}
	return runConfig(t, c, 0)
}

// Planted bug: DP-SGLD whose noise variance is half of what its accountant
// assumes is flagged with 10⁴ runs per side; the correct variant of the
// same scenario is not. The scenario files' own seeds must give exactly
// that, and over ten further seeds the bug must be caught at least 8 times
// while the correct sampler is flagged at most once (its false-alarm rate
// is at most α = 5% by construction).
func TestPlantedBugFlagged(t *testing.T) {
	if testing.Short() {
		t.Skip("20 audits of 20,000 runs")
	}
	bug := runFile(t, "../../testdata/dp-sgld-planted-bug.yaml", 0)
	ok := runFile(t, "../../testdata/dp-sgld-correct.yaml", 0)
	if bug.EvalNegatives > 10000 || bug.EvalPositives > 10000 {
		t.Fatalf("more than 10⁴ evaluation runs per side: %d, %d", bug.EvalNegatives, bug.EvalPositives)
	}
	if !bug.Violated() {
		t.Errorf("planted bug not flagged: %+v", bug.Points[0].Claims)
	}
	if ok.Violated() {
		t.Errorf("correct sampler flagged: %v", ok.Violations)
	}
	caught, alarms := 0, 0
	for s := uint64(1); s <= 10; s++ {
		if runFile(t, "../../testdata/dp-sgld-planted-bug.yaml", s).Violated() {
			caught++
		}
		if runFile(t, "../../testdata/dp-sgld-correct.yaml", s).Violated() {
			alarms++
		}
	}
	t.Logf("planted bug caught in %d/10 audits; correct sampler flagged in %d/10", caught, alarms)
	if caught < 8 || alarms > 1 {
		t.Errorf("caught %d/10 (want ≥ 8), false alarms %d/10 (want ≤ 1)", caught, alarms)
	}
}
