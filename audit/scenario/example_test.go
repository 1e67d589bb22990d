package scenario_test

import (
	"context"
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
)

// Parsing and building a scenario, then running its audit from Go: the
// config is decoded strictly (an error names the YAML line and field),
// Build makes the datasets, the sampler and the audit, and the audit runs
// like any other. Here: full-batch SGLD on 1-D Bayesian linear regression
// with 20 synthetic records, one replaced by an outlier (x = 3, y = 5), the
// final state released, 2,000 runs; and a typo, which names its line.
func Example() {
	const yaml = `
name: linreg-sgld
seed: 5
model: {linreg: {dim: 1, alpha: 1, beta: 1}}
data: {synthetic_linreg: {n: 20, theta_star: [1], seed: 3}}
neighbour: {adjacency: replace-one, index: 0, record: {x: [3], y: 5}}
sampler: {sgld: {step: {eta: 0.01}, batch: 20, scheme: cyclic, iterations: 50}}
audit: {trials: 2000, split: {train: 0.5, eval: 0.5}, delta: 1.0e-5, confidence: 0.95}
`
	cfg, err := scenario.ParseConfig([]byte(yaml))
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := scenario.Build(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer plan.Close()
	fmt.Printf("D has %d records, D′ %d; release points: %v\n", plan.Pair.D.Len(), plan.Pair.DPrime.Len(), plan.Points()[0].Label)
	tr, err := plan.Audit.Simulate(context.Background(), 0, cfg.Audit.Trials)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := plan.Audit.Analyze(tr)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ε_lb = %.3f (%d evaluation runs, confidence %g)\n", r.Epsilon.Epsilon, r.EvalRuns, r.Epsilon.Confidence)

	_, err = scenario.ParseConfig([]byte("name: x\nmodel: {linreg: {dim: 1, alpha: 1, beta: 1}}\nsampler: {sgld: {stepp: 1}}\n"))
	fmt.Println(err)
	// Output:
	// D has 20 records, D′ 20; release points: final
	// ε_lb = 2.239 (1000 evaluation runs, confidence 0.95)
	// line 3: sampler.sgld: unknown field "stepp" (did you mean "step"?)
}
