package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// tinyScenario is a cheap multi-run scenario: ULA on a 2-d linear
// regression, 60 trials.
const tinyScenario = `name: tiny
seed: 11
model: {linreg: {dim: 2, alpha: 1, beta: 1}}
data:
  synthetic_linreg: {n: 20, theta_star: [0.8, -0.5], seed: 3}
neighbour: {adjacency: replace-one, index: 0, record: {x: [3, 3], y: -6}}
sampler:
  ula: {gamma: 0.05, iterations: 20}
init: {from_prior: true}
audit:
  trials: 60
  split: {train: 0.5, eval: 0.5}
  delta: 1.0e-5
  confidence: 0.95
`

// runTiny parses, builds, runs and analyses a scenario.
func runTiny(t *testing.T, y string) (*Plan, *audit.Trials, *audit.Report) {
	t.Helper()
	c, err := ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	tr, err := p.Audit.Simulate(context.Background(), 0, c.Audit.Trials)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Audit.Analyze(tr)
	if err != nil {
		t.Fatal(err)
	}
	return p, tr, r
}

// reportJSON encodes a report.
func reportJSON(t *testing.T, r *audit.Report) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The sampler and model registries hold one entry per field of their
// section, in the section's order, and each entry documents its field.
func TestChoiceRegistriesMatchTheirSections(t *testing.T) {
	var samplers, models []string
	for _, e := range samplerRegistry {
		samplers = append(samplers, e.Key)
		if len(e.Docs) == 0 || e.Docs[0].Path != "sampler."+e.Key {
			t.Errorf("sampler %s: the entry's documents do not start with sampler.%s", e.Key, e.Key)
		}
		for _, f := range e.Docs {
			if !strings.HasPrefix(f.Path, "sampler."+e.Key) {
				t.Errorf("sampler %s documents %s", e.Key, f.Path)
			}
		}
	}
	for _, e := range modelRegistry {
		models = append(models, e.Key)
		if len(e.Docs) == 0 || e.Docs[0].Path != "model."+e.Key {
			t.Errorf("model %s: the entry's documents do not start with model.%s", e.Key, e.Key)
		}
	}
	if want := yamlFields(reflect.TypeOf(SamplerConfig{})).names; !slices.Equal(samplers, want) {
		t.Errorf("sampler registry %v, SamplerConfig %v", samplers, want)
	}
	if want := yamlFields(reflect.TypeOf(ModelConfig{})).names; !slices.Equal(models, want) {
		t.Errorf("model registry %v, ModelConfig %v", models, want)
	}
	// A chain sampler is what sampler() returns, and only those start from
	// init.
	for _, e := range samplerRegistry {
		if f, _ := Lookup("init"); strings.Contains(f.UsedBy, e.Key) != (e.Chain || e.Key == "exact_cyclic_sgld") {
			t.Errorf("init's users %q and sampler %s (chain %v) disagree", f.UsedBy, e.Key, e.Chain)
		}
	}
}

// Every registered feature is documented, decodes, and either builds,
// runs in a tiny audit and merges (its design read back analyses the
// trials into the same report) or is refused with the reason its entry's
// builder gives (probs and logprobs need a DeepFool canary).
func TestEveryRegisteredFeature(t *testing.T) {
	f, _ := Lookup("audit.features")
	for _, e := range featureRegistry {
		name := e.Name
		if e.Arg != "" {
			name += "1"
		}
		if !strings.Contains(f.Range, e.Name+e.Arg) {
			t.Errorf("%s: not in the reference's range %q", name, f.Range)
		}
		y := strings.Replace(tinyScenario, "  trials: 60\n", "  trials: 60\n  features: ["+name+"]\n", 1)
		c, err := ParseConfig([]byte(y))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := Build(c)
		if err != nil {
			if !strings.Contains(err.Error(), "audit.features") || !strings.Contains(err.Error(), name) {
				t.Errorf("%s: refused without naming it: %v", name, err)
			}
			continue
		}
		p.Close()
		pp, _, r := runTiny(t, y)
		if err := analyseAndMerge(pp); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		cols := featureCount(c, p.Model)
		if got := len(r.Points[0].Attacks); got == 0 || cols != e.Count(c, 2) || cols < 1 {
			t.Errorf("%s: %d attacks, %d columns", name, got, cols)
		}
	}
	if _, err := buildFeatures([]string{"nope"}, &Plan{}, 2); err == nil || !strings.Contains(err.Error(), featureRegistry[len(featureRegistry)-1].Name) {
		t.Errorf("an unknown feature: %v", err)
	}
}

// Every registered estimator can be chosen in audit.estimators: alone, the
// headline is its bound; the design serialises and an analysis of the
// design read back gives the same report. Without the field the config's
// hash is the one it had before estimators could be chosen (the field is
// not written), and an unknown name is refused naming the field and the
// registered names.
func TestEveryRegisteredEstimatorFromTheScenario(t *testing.T) {
	for _, e := range audit.RegisteredEstimators() {
		// Each design takes the estimators of its kind: a guess
		// estimator runs on a canary design.
		y := strings.Replace(tinyScenario, "  trials: 60\n", "  trials: 60\n  estimators: ["+e.Name()+"]\n", 1)
		if _, guess := e.(audit.GuessEstimator); guess {
			y = strings.Replace(canaryYAML("{count: 40, kind: random, guesses: 10}"), "  delta:", "  estimators: ["+e.Name()+"]\n  delta:", 1)
		}
		p, tr, r := runTiny(t, y)
		if len(r.Points[0].Estimates) != 1 || r.Points[0].Estimates[0].Estimator != e.Name() || r.Epsilon != r.Points[r.Headline].Estimates[0].Bound {
			t.Errorf("%s: estimates %+v, headline %+v", e.Name(), r.Points[0].Estimates, r.Epsilon)
		}
		spec, err := json.Marshal(p.Audit.Design())
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		var d audit.Design
		if err := json.Unmarshal(spec, &d); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		a, err := audit.FromDesign(d)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		r2, err := a.Analyze(tr)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if !bytes.Equal(reportJSON(t, r2), reportJSON(t, r)) {
			t.Errorf("%s: the report of the design read back differs", e.Name())
		}
	}
	c, err := ParseConfig([]byte(tinyScenario))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(c); bytes.Contains(b, []byte("estimators")) {
		t.Errorf("the default writes the estimators into the config's hash: %s", b)
	}
	_, err = ParseConfig([]byte(strings.Replace(tinyScenario, "  trials: 60\n", "  trials: 60\n  estimators: [region, nope]\n", 1)))
	if err == nil || !strings.Contains(err.Error(), "audit.estimators") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("an unknown estimator: %v", err)
	}
	for _, n := range audit.EstimatorNames() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("the error %q does not name %s", err, n)
		}
	}
}

// Every registered canary kind is documented, accepted by the checks of
// audit.canaries (with the section it needs), runs, and merges.
func TestEveryRegisteredCanaryKind(t *testing.T) {
	f, _ := Lookup("audit.canaries.kind")
	for _, k := range canaryKinds {
		if !strings.Contains(f.Range, k.Name) || !strings.Contains(f.Meaning, k.Name+": "+k.Doc) {
			t.Errorf("%s: not documented in %q", k.Name, f.Range)
		}
		cc := "{count: 3, kind: " + k.Name + ", guesses: 2"
		if k.Crafted {
			cc += ", deepfool: {models: 3, canary: {margin: 0.1}}"
		}
		y := `name: kinds
seed: 3
model: {softmax: {features: 2, classes: 3, alpha: 1}}
data:
  records: [{x: [0, 0], y: 0}, {x: [0.1, 0], y: 0}, {x: [0, 0.1], y: 0}, {x: [3, 0], y: 1}, {x: [3.1, 0], y: 1},
            {x: [3, 0.1], y: 1}, {x: [0, 3], y: 2}, {x: [0.1, 3], y: 2}, {x: [0, 3.1], y: 2}]
sampler: {sgld: {step: {eta: 0.01}, batch: 3, scheme: reshuffle, epochs: 5}}
audit: {design: canaries, canaries: ` + cc + `}, delta: 1.0e-5, confidence: 0.95}
`
		if k.Gradient {
			// Gradient canaries are coordinates among inert records,
			// under threat: path, on a sampler that clips.
			y = `name: kinds
seed: 3
model: {inert: {}}
data: {inert: {n: 9}}
threat: path
sampler: {sgld: {step: {eta: 0.01}, batch: 3, scheme: poisson, epochs: 5, clip: 1}}
audit: {design: canaries, canaries: ` + cc + `}, delta: 1.0e-5, confidence: 0.95}
`
		}
		c, err := ParseConfig([]byte(y))
		if err != nil {
			t.Errorf("%s: %v", k.Name, err)
			continue
		}
		// Each kind also builds, runs, is analysed, and its design read
		// back analyses the run into the same report (a merge).
		p, err := Build(c)
		if err != nil {
			t.Errorf("%s: %v", k.Name, err)
			continue
		}
		if err := analyseAndMerge(p); err != nil {
			t.Errorf("%s: %v", k.Name, err)
		}
		p.Close()
	}
	c := &CanaryConfig{Count: 100, Kind: "nope"}
	if err := c.validateKind(); err == nil || !strings.Contains(err.Error(), canaryKinds[0].Name) {
		t.Errorf("an unknown kind: %v", err)
	}
}
