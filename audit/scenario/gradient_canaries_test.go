package scenario

import (
	"strings"
	"testing"
)

// gradientYAML is a one-run design with gradient canaries on full-batch
// DP-SGLD, edited by the replacements (old, new, old, new, …).
func gradientYAML(repl ...string) string {
	y := `
name: g
seed: 3
model: {inert: {}}
data: {inert: {n: 10}}
threat: path
sampler:
  sgld: {step: {eta: 0.5625}, batch: 10, scheme: without-replacement, iterations: 4, clip: 1}
release: {mode: final}
audit:
  design: canaries
  canaries: {count: 2000, kind: gradient, guesses: 100}
  delta: 1.0e-5
  confidence: 0.95
claim: {theorems: true}
`
	return strings.NewReplacer(repl...).Replace(y)
}

// Gradient canaries run, are tested against the add/remove bound of one
// canary (μ = 0.75 here, so the report's tightness is in μ too), and
// their scores separate the canaries in from those out.
func TestGradientCanaryScenario(t *testing.T) {
	_, r := runCanaryScenario(t, gradientYAML())
	if r.Canaries == nil || r.Canaries.Kind != "gradient" || r.Canaries.Canaries != 2000 {
		t.Fatalf("canaries %+v", r.Canaries)
	}
	if r.Tightness == nil || r.Tightness.Mu == nil || r.Tightness.MuUB != 0.75 {
		t.Fatalf("tightness %+v: want a μ-GDP bound of 0.75", r.Tightness)
	}
	if r.Epsilon.Epsilon <= 0 || r.Violated() {
		t.Errorf("ε_lb %g, violated %v: want a positive bound and no refutation", r.Epsilon.Epsilon, r.Violated())
	}
	if d := r.Points[0].Descriptive; d == nil || float64(d.AUROC) < 0.6 {
		t.Errorf("descriptive %+v: the scores should rank the canaries in above those out (AUROC ≈ Φ(μ/√2) = 0.70)", d)
	}
}

// Misconfigurations fail in one line naming the field.
func TestGradientCanaryScenarioErrors(t *testing.T) {
	for _, c := range []struct {
		repl  []string
		field string
		want  string
	}{
		{[]string{"threat: path\n", ""}, "threat", "set threat: path"},
		{[]string{"kind: gradient", "kind: random", "claim: {theorems: true}\n", ""}, "threat", "needs audit.canaries.kind: gradient"},
		{[]string{"model: {inert: {}}", "model: {linreg: {dim: 1, alpha: 1, beta: 1}}", "data: {inert: {n: 10}}", "data: {records: [{x: [0], y: 0}]}"}, "model", "use model: {inert: {}}"},
		{[]string{"data: {inert: {n: 10}}", "data: {records: [{x: [], y: 0}]}"}, "data", "inert"},
		{[]string{"guesses: 100", "guesses: 100, slope: -2"}, "audit.canaries.slope", "must be finite and > 0"},
		{[]string{"kind: gradient", "kind: random, slope: 2", "claim: {theorems: true}\n", "", "threat: path\n", ""}, "audit.canaries.slope", "only with kind: gradient"},
		{[]string{"scheme: without-replacement", "scheme: reshuffle"}, "sampler.sgld.scheme", "without-replacement with batch = n"},
		{[]string{"batch: 10", "batch: 5"}, "sampler.sgld.scheme", "batch = n (10)"},
		{[]string{", clip: 1}", "}"}, "sampler.sgld.clip", "clipped SGLD"},
		{[]string{"kind: gradient", "kind: random", "threat: path\n", ""}, "claim.theorems", "kind gradient (n public)"},
		{[]string{"guesses: 100", "guesses: 100, score: calibrated"}, "audit.canaries.score", "path statistic"},
	} {
		_, err := ParseConfig([]byte(gradientYAML(c.repl...)))
		if err == nil {
			var p *Plan
			p, err = Build(mustParse(t, gradientYAML(c.repl...)))
			if err == nil {
				p.Close()
			}
		}
		if err == nil {
			t.Errorf("%v: accepted", c.repl)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.field+":") || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: error %q, want one line naming %s and saying %q", c.repl, msg, c.field, c.want)
		}
	}
}

func mustParse(t *testing.T, y string) *Config {
	t.Helper()
	c, err := ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
