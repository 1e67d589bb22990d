package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite docs/scenario.md from the reference")

// The reference has exactly one entry per field reachable from Config by
// the Go types: a field added to a struct without an entry, or an entry
// left behind by a removed field, fails here.
func TestReferenceCoversEveryField(t *testing.T) {
	want := fieldPaths()
	if len(want) < 150 {
		t.Fatalf("only %d field paths found by reflection", len(want))
	}
	have := map[string]int{}
	for _, f := range Reference() {
		have[f.Path]++
	}
	for _, p := range want {
		if have[p] == 0 {
			t.Errorf("field %s has no reference entry", p)
		}
	}
	for p, n := range have {
		if n > 1 {
			t.Errorf("field %s has %d reference entries", p, n)
		}
		if !slices.Contains(want, p) {
			t.Errorf("reference entry %s names no field of Config", p)
		}
	}
	for _, f := range Reference() {
		if f.Type == "" || f.Meaning == "" {
			t.Errorf("%s: type %q, meaning %q: both are needed", f.Path, f.Type, f.Meaning)
		}
		if f.Required != "" && f.Required != "yes" && !strings.HasPrefix(f.Required, "with ") && !strings.HasPrefix(f.Required, "unless ") {
			t.Errorf("%s: Required %q is not yes, with … or unless …", f.Path, f.Required)
		}
		if f.Required == "yes" && f.Default != "" {
			t.Errorf("%s: required and defaulted", f.Path)
		}
		// Conditions name fields that exist.
		for _, c := range conditionPaths(f.Required) {
			if _, ok := Lookup(c); !ok {
				t.Errorf("%s: condition names %q, which is not a field", f.Path, c)
			}
		}
	}
}

// conditionPaths returns the field paths a Required condition names.
func conditionPaths(req string) []string {
	req = strings.TrimPrefix(strings.TrimPrefix(req, "with "), "unless ")
	if req == "" || req == "yes" {
		return nil
	}
	var out []string
	for _, c := range strings.Split(req, " or ") {
		c, _, _ = strings.Cut(c, " = ")
		c, _, _ = strings.Cut(c, " ≠ ")
		out = append(out, c)
	}
	return out
}

// Every example and every default in the reference is a value of the
// field's type, by the scenario decoder itself.
func TestReferenceValuesHaveTheirTypes(t *testing.T) {
	for _, f := range Reference() {
		typ, ok := typeAt(f.Path)
		if !ok {
			t.Fatalf("%s: no type", f.Path)
		}
		for what, text := range map[string]string{"example": f.Example, "default": f.Default} {
			if text == "" {
				continue
			}
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(text), &n); err != nil {
				t.Errorf("%s: %s %q is not YAML: %v", f.Path, what, text, err)
				continue
			}
			d := &decoder{}
			if err := d.value(n.Content[0], reflect.New(typ).Elem(), f.Path); err != nil {
				t.Errorf("%s: %s %q: %v", f.Path, what, text, err)
			}
		}
		if f.Example == "" && f.UsedBy != "none" && !f.IsChoice() && !isSection(f) && !strings.HasPrefix(f.Range, "not allowed") {
			t.Errorf("%s: no example value", f.Path)
		}
	}
}

// Every sampler × model combination the reference lists is written from
// the reference alone (ExampleScenario) and parses; the allowed ones build,
// run 40 trials and are analysed, and their design, serialised and read
// back, analyses those trials into the same report (what a merge does);
// the others fail with the reason the reference gives.
func TestEveryCombinationFromTheReference(t *testing.T) {
	combos := Combinations()
	samplers := yamlFields(reflect.TypeOf(SamplerConfig{})).names
	models := yamlFields(reflect.TypeOf(ModelConfig{})).names
	if len(combos) != len(samplers)*len(models) {
		t.Fatalf("%d combinations, want %d samplers × %d models", len(combos), len(samplers), len(models))
	}
	for _, c := range combos {
		name := c.Sampler + "×" + c.Model
		y, err := ExampleScenario(c.Sampler, c.Model)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cfg, err := ParseConfig([]byte(y))
		if err != nil {
			t.Errorf("%s: the generated scenario does not parse: %v\n%s", name, err, y)
			continue
		}
		cfg.Audit.Trials = 40
		p, err := Build(cfg)
		switch {
		case c.Allowed && err != nil:
			t.Errorf("%s: allowed by the reference but does not build: %v\n%s", name, err, y)
		case !c.Allowed && err == nil:
			t.Errorf("%s: refused by the reference (%s) but builds", name, c.Reason)
		case !c.Allowed && !strings.Contains(err.Error(), c.Reason):
			t.Errorf("%s: error %q does not give the documented reason %q", name, err, c.Reason)
		case c.Allowed:
			if err := analyseAndMerge(p); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			p.Close()
		}
	}
}

// extraBases are scenarios for the sections the generated examples leave
// out (CSV data, DeepFool canaries, epoch releases, claims, the canary
// design), on which the defaults of their fields are checked.
var extraBases = []string{
	`model: {linreg: {alpha: 1, beta: 1}}
data: {synthetic_linreg: {n: 10, theta_star: [0.5], seed: 1}}
neighbour: {gradient_canary: {}}
threat: path
sampler: {sgld: {step: {eta: 0.01}, batch: 5, scheme: poisson, iterations: 10, clip: 1}}
audit: {trials: 20, split: {train: 0.5, eval: 0.5}, confidence: 0.95}
`,
	`model: {logistic: {dim: 30, alpha: 1}}
data: {csv: {path: ../../testdata/breast_cancer.csv, options: {header: true, classes: 2, scale: standardize}, test_fraction: 0.2, seed: 4}}
neighbour: {index: 3, record: {x: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], y: 1}}
sampler: {sgld: {step: {eta: 0.001}, batch: 10, scheme: reshuffle, iterations: 30}}
audit: {trials: 20, split: {train: 0.5, eval: 0.5}, confidence: 0.95}
`,
	`model: {softmax: {features: 64, classes: 10, alpha: 1}}
data: {csv: {path: ../../testdata/digits.csv.gz, options: {classes: 10, scale: divide, divisor: 16}}}
neighbour: {index: 5, record: {x: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], y: 3}}
sampler: {sgld: {step: {eta: 0.001}, batch: 50, scheme: reshuffle, iterations: 10}}
audit: {trials: 20, split: {train: 0.5, eval: 0.5}, confidence: 0.95}
`,
	`model: {gauss: {prior_sd: 10, raisa_cov: {dim: 2, shape: 0.5, seed: 3}}}
data: {synthetic_gauss: {n: 10, theta_star: [0, 0]}}
neighbour: {record: {x: [5, 5]}}
sampler: {ula: {gamma: 0.01, iterations: 10}}
audit: {trials: 20, split: {train: 0.5, eval: 0.5}, confidence: 0.95}
`,
	`model: {linreg: {alpha: 2, beta: 1}}
data: {counterexample: {n: 10, xh: 1.8, c: 25}}
sampler: {sgld: {step: {eta: 0.0016899675500270416}, batch: 1, scheme: cyclic, epochs: 3}}
init: {from_prior: true}
release: {mode: epochs}
audit: {trials: 20, split: {train: 0.5, eval: 0.5}, confidence: 0.95, delta: 1.0e-5}
`,
	`model: {softmax: {features: 2, classes: 3, alpha: 1}}
data:
  records: [{x: [0, 0], y: 0}, {x: [0.1, 0], y: 0}, {x: [0, 0.1], y: 0}, {x: [3, 0], y: 1}, {x: [3.1, 0], y: 1},
            {x: [3, 0.1], y: 1}, {x: [0, 3], y: 2}, {x: [0.1, 3], y: 2}, {x: [0, 3.1], y: 2}]
neighbour: {deepfool: {models: 3, canary: {clamp: true, lower: -1, upper: 4}}}
sampler: {sgld: {step: {eta: 0.05}, batch: 3, scheme: reshuffle, epochs: 30}}
init: {from_prior: true}
audit: {trials: 20, split: {train: 0.5, eval: 0.5}, features: [probs], confidence: 0.95}
`,
	`model: {linreg: {alpha: 1, beta: 1}}
data: {synthetic_linreg: {n: 20, theta_star: [0.5], seed: 2}}
neighbour: {record: {x: [3], y: -6}}
sampler: {dp_barker: {step: 0.2, iterations: 30, batch: 4}}
audit: {trials: 20, split: {train: 0.5, eval: 0.5}, confidence: 0.95}
`,
	`model: {linreg: {alpha: 1, beta: 1}}
data: {synthetic_linreg: {n: 6, theta_star: [0.5]}}
neighbour: {record: {x: [3], y: -6}}
sampler: {sgld: {step: {eta: 0.05, b: 10, gamma: 0.5}, batch: 2, scheme: cyclic, epochs: 4}}
release: {mode: epochs}
audit: {trials: 20, split: {train: 0.5, select: 0.25, eval: 0.25}, confidence: 0.95, delta: 1.0e-5}
claim: {gdp: 1}
`,
	`model: {logistic: {dim: 2, alpha: 1}}
data: {synthetic_logistic: {n: 30, theta_star: [1, -1], x_scale: 1, seed: 2}}
sampler: {sgld: {step: {eta: 0.01}, batch: 5, scheme: without-replacement, epochs: 1}}
release: {mode: epochs}
audit: {design: canaries, canaries: {count: 40, kind: mislabel, runs: 20}, confidence: 0.95}
`,
}

// dependentDefaults give, for the fields whose documented default depends
// on the rest of the scenario, the explicit value it stands for in the
// base scenario the test uses (built from the omitted variant).
var dependentDefaults = map[string]func(p *Plan) string{
	"model.gauss.prior_mean":            func(p *Plan) string { return "[0, 0]" },
	"init.theta":                        func(p *Plan) string { return zeros(p.Model.Dim()) },
	"sampler.ula.center":                func(p *Plan) string { return zeros(p.Model.Dim()) },
	"data.synthetic_linreg.beta":        func(p *Plan) string { return g(p.Config.Model.LinReg.Beta) },
	"data.csv.options.label_column":     func(p *Plan) string { return strconv.Itoa(len(p.Pair.D.Records[0].X) + 1) },
	"data.csv.options.classes":          func(p *Plan) string { return "2" },
	"data.csv.options.name":             func(p *Plan) string { return dataset.NameFromPath(p.Config.Data.CSV.Path) },
	"sampler.dp_barker.n0":              func(p *Plan) string { return strconv.Itoa(p.Pair.D.Len()) },
	"sampler.dp_barker.variance_limit":  func(p *Plan) string { return "2" }, // = c, whose default is 2
	"neighbour.deepfool.canary.targets": func(p *Plan) string { return otherClasses(p) },
	"sampler.dp_barker.clip": func(p *Plan) string {
		b := p.Config.Sampler.DPBarker
		if b.Batch == 0 {
			return "0" // no clipping for the full-data test: 0 is its only spelling
		}
		return g(math.Sqrt(float64(b.Batch)) / float64(p.Pair.D.Len()))
	},
}

func zeros(d int) string { return "[" + strings.TrimSuffix(strings.Repeat("0, ", d), ", ") + "]" }

func g(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func otherClasses(p *Plan) string {
	var out []string
	for k := 0; k < p.Config.Model.Softmax.Classes; k++ {
		if k != p.Canary.Y0 {
			out = append(out, strconv.Itoa(k))
		}
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// Every documented default matches the code: a scenario with the field
// omitted and the same scenario with the field set to its documented
// default build the same datasets and release points, and their first 20
// trials release bit-identical features.
func TestDocumentedDefaultsMatchTheCode(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	bases := append([]string(nil), extraBases...)
	for _, c := range Combinations() {
		if c.Allowed {
			y, _ := ExampleScenario(c.Sampler, c.Model)
			bases = append(bases, y)
		}
	}
	checked := 0
	for _, f := range Reference() {
		if f.Default == "" {
			continue
		}
		base, omitted := variantOf(t, bases, f.Path, nil)
		if base == "" {
			t.Errorf("%s: no base scenario has its section; add one to extraBases", f.Path)
			continue
		}
		explicitText := f.Default
		if dep, ok := dependentDefaults[f.Path]; ok {
			c, err := ParseConfig([]byte(omitted))
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			p, err := Build(c)
			if err != nil {
				t.Fatalf("%s: %v\n%s", f.Path, err, omitted)
			}
			explicitText = dep(p)
		}
		var val yaml.Node
		if err := yaml.Unmarshal([]byte(explicitText), &val); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		_, explicit := variantOf(t, []string{base}, f.Path, val.Content[0])
		a, b := outcome(t, omitted), outcome(t, explicit)
		if a != b {
			t.Errorf("%s: omitted and set to its documented default %s differ:\nomitted:  %.300s\nexplicit: %.300s", f.Path, explicitText, a, b)
		}
		checked++
	}
	if checked < 50 {
		t.Errorf("only %d defaults checked", checked)
	}
}

// variantOf finds the first base scenario holding the section of path
// that builds with the field omitted — preferring one where the field's
// parent mapping is already written — and returns it with the field
// removed (val nil) or set to val.
func variantOf(t *testing.T, bases []string, path string, val *yaml.Node) (string, string) {
	t.Helper()
	for _, create := range []bool{false, true} {
		for _, base := range bases {
			v, ok := edit(t, base, path, val, create)
			if !ok {
				continue
			}
			if len(bases) > 1 {
				if omitted, _ := edit(t, base, path, nil, create); strings.Contains(outcome(t, omitted), " error: ") {
					continue
				}
			}
			return base, v
		}
	}
	return "", ""
}

// edit returns base with the field at path removed or set.
func edit(t *testing.T, base, path string, val *yaml.Node, create bool) (string, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(base), &doc); err != nil {
		t.Fatal(err)
	}
	if !setPath(doc.Content[0], "", path, val, create) {
		return "", false
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), true
}

// setPath sets (or removes, val nil) the field at path below the mapping
// m, creating plain mappings on the way when create is set but never a
// choice (a model, data or sampler key), a canary or a list; it reports
// whether the path could be reached.
func setPath(m *yaml.Node, prefix, path string, val *yaml.Node, create bool) bool {
	seg, rest, last := strings.Cut(path, ".")
	last = !last
	key, item := strings.CutSuffix(seg, "[]")
	full := join(prefix, seg)
	var v *yaml.Node
	idx := -1
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v, idx = m.Content[i+1], i
		}
	}
	if last {
		if val == nil {
			if idx >= 0 {
				m.Content = append(m.Content[:idx], m.Content[idx+2:]...)
			}
			return true
		}
		if idx >= 0 {
			m.Content[idx+1] = val
		} else {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, val)
		}
		return true
	}
	if v == nil {
		if f, _ := Lookup(full); !create || f.IsChoice() || item || full == "neighbour.deepfool" || full == "neighbour.record" {
			return false
		}
		v = &yaml.Node{Kind: yaml.MappingNode}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	if item {
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return false
		}
		v = v.Content[0]
	}
	if v.Kind != yaml.MappingNode {
		return false
	}
	return setPath(v, full, rest, val, create)
}

// outcome summarises what a scenario builds and does: the error, or the
// datasets, release points and the features of its first 20 trials.
func outcome(t *testing.T, y string) string {
	t.Helper()
	c, err := ParseConfig([]byte(y))
	if err != nil {
		return "parse error: " + err.Error()
	}
	c.Audit.Trials = 20
	p, err := Build(c)
	if err != nil {
		return "build error: " + err.Error()
	}
	tr, err := p.Audit.Simulate(context.Background(), 0, 20)
	if err != nil {
		return "run error: " + err.Error()
	}
	var b bytes.Buffer
	var dPrime []dataset.Record // none in the canary design
	if p.Pair.DPrime != nil {
		dPrime = p.Pair.DPrime.Records
	}
	fmt.Fprintf(&b, "D %v\nD′ %v\npoints %v\nfeatures %v\n", p.Pair.D.Records, dPrime, p.Points(), p.Audit.FeatureNames())
	o := p.Audit.Options()
	fmt.Fprintf(&b, "options %v %+v %v %v δ=%v conf=%v workers=%v\n", o.Assignment, o.Split, o.AttackSelection, o.PointSelection, o.Delta, o.Confidence, p.Audit.Execution().Workers)
	for _, cl := range p.Audit.Claims() {
		fmt.Fprintf(&b, "claim %s\n", cl.Name)
	}
	fmt.Fprintf(&b, "sides %v\nref %v\nx %v\ninfo %+v\ncorrect %v %d\n", tr.Side, tr.Ref, tr.X, tr.Info, tr.Correct, tr.TestSize)
	rep, err := p.Audit.Analyze(tr)
	if err != nil {
		return b.String() + "analysis error: " + err.Error()
	}
	for _, pr := range rep.Points {
		fmt.Fprintf(&b, "%+v %+v %v\n", pr.Region(), pr.GDP(), pr.Attacks[pr.Estimates[0].Best].Attack)
	}
	return b.String()
}

// docs/scenario.md is the generator's output; go generate (or
// go test -run TestReferenceDocIsCurrent -update) rewrites it.
func TestReferenceDocIsCurrent(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReferenceMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	path := "../../docs/scenario.md"
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go generate ./audit/scenario)", err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Errorf("docs/scenario.md differs from the reference; run go generate ./audit/scenario")
	}
	for _, f := range Reference() {
		if !bytes.Contains(b.Bytes(), []byte(f.Meaning)) {
			t.Errorf("the document lacks the entry of %s", f.Path)
		}
	}
}

func TestExplain(t *testing.T) {
	var b bytes.Buffer
	if err := Explain(&b, "sampler.sgld.step.eta"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sampler.sgld.step.eta\n", "Type: number", "Required", "(0, ∞)", "Example: 0.05"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("--explain sampler.sgld.step.eta lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Explain(&b, "data.records[2].x"); err != nil || !strings.Contains(b.String(), "data.records[].x") {
		t.Errorf("indexed path: %v\n%s", err, b.String())
	}
	b.Reset()
	fields := 0
	for _, f := range Reference() {
		if strings.HasPrefix(f.Path, "sampler.sgld.") {
			fields++
		}
	}
	if err := Explain(&b, "sampler.sgld"); err != nil || fields < 2 || strings.Count(b.String(), "\n  sampler.sgld.") != fields {
		t.Errorf("a section lists its %d fields: %v\n%s", fields, err, b.String())
	}
	b.Reset()
	if err := Explain(&b, ""); err != nil || strings.Count(b.String(), "\n") != len(Reference()) {
		t.Errorf("no field lists all %d: %v (%d lines)", len(Reference()), err, strings.Count(b.String(), "\n"))
	}
	err := Explain(&b, "sampler.sgld.step.etta")
	if err == nil || !strings.Contains(err.Error(), `did you mean "sampler.sgld.step.eta"?`) {
		t.Errorf("a misspelt field: %v", err)
	}
}

// analyseAndMerge runs every trial of p's audit and analyses them, then
// analyses them again from p's design serialised and read back (as
// "audit merge" does), and compares the two reports' JSON.
func analyseAndMerge(p *Plan) error {
	n := p.Audit.Options().Trials
	tr, err := p.Audit.Simulate(context.Background(), 0, n)
	if err != nil {
		return fmt.Errorf("builds but %d trials fail: %w", n, err)
	}
	r, err := p.Audit.Analyze(tr)
	if err != nil {
		return fmt.Errorf("analysis: %w", err)
	}
	spec, err := json.Marshal(p.Audit.Design())
	if err != nil {
		return fmt.Errorf("design: %w", err)
	}
	var d audit.Design
	if err := json.Unmarshal(spec, &d); err != nil {
		return fmt.Errorf("design read back: %w", err)
	}
	a, err := audit.FromDesign(d)
	if err != nil {
		return fmt.Errorf("design read back: %w", err)
	}
	r2, err := a.Analyze(tr)
	if err != nil {
		return fmt.Errorf("analysis from the design: %w", err)
	}
	want, _ := json.Marshal(r)
	got, _ := json.Marshal(r2)
	if !bytes.Equal(got, want) {
		return fmt.Errorf("the design read back analyses the trials into another report")
	}
	return nil
}
