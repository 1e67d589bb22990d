package scenario

import (
	"strings"
	"testing"
)

// plantScenario is a small DP-HMC audit with theorem claims; plant is
// the YAML of sampler.dp_hmc.plant ("" for none).
func plantScenario(plant string) string {
	p := ""
	if plant != "" {
		p = "\n    plant: " + plant
	}
	return `
name: plant
seed: 5
model: {gauss: {prior_sd: 10, cov: [1, 0.3, 0.3, 1]}}
data: {synthetic_gauss: {n: 20, theta_star: [0.5, -0.5], seed: 7}}
neighbour: {adjacency: replace-one, index: 0, record: {x: [6, 6], y: 0}}
sampler:
  dp_hmc:
    iterations: 4
    step: 0.03
    leapfrog_steps: 2
    clip_llr: 3
    clip_grad: 3
    tau_l: 2
    tau_g: 2` + p + `
init: {theta: [0.5, -0.5]}
audit:
  trials: 200
  split: {train: 0.5, eval: 0.5}
  features: [theta]
  attacks: [threshold]
  delta: 1.0e-5
  confidence: 0.95
claim: {theorems: true}
`
}

// A planted bug runs (the report's mechanism name and a note say so, the
// sampler's counters show the extra steps) while the theorem claims keep
// the declared configuration's bounds exactly.
func TestPlantScenario(t *testing.T) {
	ok := runYAML(t, plantScenario(""), 1)
	bug := runYAML(t, plantScenario("{noise: 0.5, clip: 2, steps: 3}"), 1)
	if strings.Contains(ok.Mechanism, "planted") || len(ok.Notes) != 0 {
		t.Errorf("unplanted report: %q, notes %q", ok.Mechanism, ok.Notes)
	}
	if !strings.Contains(bug.Mechanism, "[planted: noise × 0.5, clip × 2, steps + 3]") {
		t.Errorf("mechanism %q does not name the plant", bug.Mechanism)
	}
	if len(bug.Notes) != 1 || !strings.Contains(bug.Notes[0], "declared") || !strings.Contains(bug.Notes[0], "σ_g 6 (declared 12)") {
		t.Errorf("notes %q", bug.Notes)
	}
	if ok.ConfigHash == bug.ConfigHash {
		t.Error("a planted configuration has the hash of the declared one")
	}
	if len(ok.Points) != len(bug.Points) || len(ok.Points) == 0 {
		t.Fatalf("%d and %d release points", len(ok.Points), len(bug.Points))
	}
	claims := 0
	for i := range ok.Points {
		a, b := ok.Points[i].Claims, bug.Points[i].Claims
		if len(a) != len(b) {
			t.Fatalf("point %d: %d and %d claims", i, len(a), len(b))
		}
		for j := range a {
			if a[j].Name != b[j].Name || a[j].EpsilonAtDelta != b[j].EpsilonAtDelta || a[j].Covered != b[j].Covered {
				t.Errorf("point %d claim %d: declared %+v, planted %+v", i, j, a[j], b[j])
			}
			claims++
		}
	}
	if claims == 0 {
		t.Error("no theorem claim to compare")
	}
	if bug.Info.Iterations != ok.Info.Iterations+3*bug.Trials {
		t.Errorf("iterations %d planted, %d declared over %d runs: want 3 more a run", bug.Info.Iterations, ok.Info.Iterations, bug.Trials)
	}
}

// A plant field that does not apply is a one-line error naming the
// scenario field and why.
func TestPlantScenarioErrors(t *testing.T) {
	for plant, want := range map[string]string{
		"{rate: 2}":   "sampler.dp_hmc.plant.rate: does not apply",
		"{noise: 0}":  "sampler.dp_hmc.plant.noise: must be in (0, ∞)",
		"{steps: -1}": "sampler.dp_hmc.plant.steps",
	} {
		c, err := ParseConfig([]byte(plantScenario(plant)))
		if err == nil {
			var p *Plan
			p, err = Build(c)
			if err == nil {
				p.Close()
			}
		}
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("plant %s: error %v, want one line with %q", plant, err, want)
		}
	}
}
