package scenario

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// runConfig builds, simulates and analyses a scenario.
func runConfig(t testing.TB, c *Config, workers int) *audit.Report {
	t.Helper()
	p, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a := withWorkers(t, p.Audit, workers)
	tr, err := a.Simulate(context.Background(), 0, c.Audit.Trials)
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Analyze(tr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runYAML parses and runs a scenario given as text.
func runYAML(t testing.TB, yml string, workers int) *audit.Report {
	t.Helper()
	c, err := ParseConfig([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	return runConfig(t, c, workers)
}

// gaussScenario is the Gaussian mechanism on a sum query with D and D′
// differing in one record by shift: exactly μ-GDP with μ = shift/σ.
func gaussScenario(seed uint64, trials int, shift float64, attacks string) string {
	return fmt.Sprintf(`
name: gauss-known-mu
seed: %d
model: {linreg: {dim: 1, alpha: 1, beta: 1}}
data:
  records: [{x: [0.3], y: 0}, {x: [-0.2], y: 0}, {x: [0], y: 0}]
neighbour: {adjacency: replace-one, index: 2, record: {x: [%g], y: 0}}
sampler: {gaussian_query: {sigma: 1}}
audit:
  trials: %d
  split: {train: 0.5, eval: 0.5}
  attacks: %s
  delta: 1.0e-5
  confidence: 0.95
`, seed, shift, trials, attacks)
}

func TestConfigErrors(t *testing.T) {
	base := gaussScenario(1, 400, 1, "[threshold]")
	cases := []struct{ yml, want string }{
		{base + "bogus: 1\n", `unknown top-level field "bogus"`},
		{gaussScenario(1, 10, 1, "[threshold]"), "audit.trials: must be in [20,"},
		{gaussScenario(1, 400, 1, "[magic]"), "audit.attacks: must be one of"},
		{"name: x\n", "model: must set exactly one of"},
		{strings.Replace(base, "replace-one", "remove_one", 1), "neighbour.adjacency: must be one of replace-one, remove-one, add-one"},
	}
	for _, c := range cases {
		cfg, err := ParseConfig([]byte(c.yml))
		if err == nil {
			_, err = Build(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// The YAML path is a thin layer over the engine: a scenario and the same
// audit built through the library API give the same report.
func TestScenarioEqualsLibraryAudit(t *testing.T) {
	fromYAML := runYAML(t, gaussScenario(11, 600, 1, "[threshold, linear]"), 2)
	d := &dataset.Dataset{Name: "inline", Records: []dataset.Record{{X: []float64{0.3}}, {X: []float64{-0.2}}, {X: []float64{0}}}}
	pair, _ := dataset.Neighbour(d, dataset.ReplaceOne, 2, dataset.Record{X: []float64{1}})
	lib, err := audit.Run(context.Background(), audit.Target{Name: "gauss-known-mu", Pair: pair, Mechanism: &mechanisms.Chain{
		Model: mechanisms.NewLinReg1D(1, 1), Sampler: &mechanisms.GaussianQuery{Sigma: 1}, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}},
		audit.Options{Trials: 600, Seed: 11, Delta: 1e-5, Attacks: []attacks.Classifier{attacks.BestCoordinate{}, attacks.LinearLS{}}}, audit.Execution{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range lib.Points {
		a, b := lib.Points[k], fromYAML.Points[k]
		if a.Region() != b.Region() || a.GDP() != b.GDP() || a.Estimates[0].Best != b.Estimates[0].Best {
			t.Fatalf("point %d: library %+v, scenario %+v", k, a.Region(), b.Region())
		}
	}
}

// withWorkers returns a with w workers.
func withWorkers(t testing.TB, a *audit.Audit, w int) *audit.Audit {
	t.Helper()
	x := a.Execution()
	x.Workers = w
	b, err := a.WithExecution(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
