package scenario

import (
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// The score fields are refused one line at a time, naming the field and
// the line.
func TestCanaryScoreErrors(t *testing.T) {
	for _, c := range []struct{ canaries, want string }{
		{`{count: 10, kind: mislabel, score: lira}`, "audit.canaries.score: must be raw or calibrated"},
		{`{count: 10, kind: mislabel, references: 2}`, "audit.canaries.references: only with score: calibrated"},
		{`{count: 10, kind: mislabel, score: raw, references: 2}`, "audit.canaries.references: only with score: calibrated"},
		{`{count: 10, kind: mislabel, score: calibrated, references: -1}`, "audit.canaries.references: must be in [1, 1000]"},
		{`{count: 10, kind: mislabel, score: calibrated, references: 1001}`, "audit.canaries.references: must be in [1, 1000]"},
		{`{count: 10, kind: mislabel, reference_canaries: all}`, "audit.canaries.reference_canaries: only with score: calibrated"},
		{`{count: 10, kind: mislabel, score: calibrated, reference_canaries: half}`, "audit.canaries.reference_canaries: must be none or all"},
		{`{count: 10, kind: mislabel, score: calibrated, references: 2}` + "\n  trials: 2", "audit.trials"},
		{`{count: 10, kind: mislabel, average_releases: often}`, "audit.canaries.average_releases"},
	} {
		_, err := ParseConfig([]byte(canaryYAML(c.canaries)))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "line ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", c.canaries, err, c.want)
		}
	}
	// The runs and references are the trials: 2 + 3.
	c, err := ParseConfig([]byte(canaryYAML(`{count: 10, kind: mislabel, runs: 2, score: calibrated, references: 3}` + "\n  trials: 5")))
	if err != nil || c.Audit.Trials != 5 {
		t.Errorf("trials = runs + references: %v", err)
	}
}

// A calibrated scenario runs its references as trials after the runs and
// says so in the report; the raw scenario does not.
func TestCanaryScenarioCalibrated(t *testing.T) {
	p, r := runCanaryScenario(t, canaryYAML(`{count: 40, kind: mislabel, guesses: 10, runs: 2, score: calibrated, references: 3, reference_canaries: all, average_releases: true}`))
	if p.Config.Audit.Trials != 5 || r.Trials != 5 {
		t.Errorf("%d trials in the config, %d in the report; want 2 runs + 3 references", p.Config.Audit.Trials, r.Trials)
	}
	c := r.Canaries
	if c == nil || c.Score != audit.ScoreCalibrated || c.References != 3 || c.ReferenceCanaries != audit.ReferenceAll || !c.AverageReleases {
		t.Fatalf("canary info %+v", c)
	}
	if !strings.HasPrefix(r.Attacks[0], audit.CanaryAttackCalibrated) {
		t.Errorf("attack %q", r.Attacks[0])
	}
	_, raw := runCanaryScenario(t, canaryYAML(`{count: 40, kind: mislabel, guesses: 10, runs: 2}`))
	if raw.Trials != 2 || raw.Canaries.Score != "" || raw.Canaries.References != 0 || raw.Attacks[0] != audit.CanaryAttack {
		t.Errorf("raw: %d trials, canary info %+v, attack %q", raw.Trials, raw.Canaries, raw.Attacks[0])
	}
}
