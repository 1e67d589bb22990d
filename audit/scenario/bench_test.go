package scenario

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkExactCounterexample1e6 measures, against a target of 5 s, the
// exact sampling mode: 10⁶ runs of the Fig. 1 setting (n = 17,864,389,
// 70 epochs, 14 releases) including the precomputation (Build: moments and
// transitions of every release epoch). Target: ≤ 5 s per op.
func BenchmarkExactCounterexample1e6(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c, err := LoadConfig("../../testdata/fig1-exact.yaml")
		if err != nil {
			b.Fatal(err)
		}
		p, err := Build(c)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := withWorkers(b, p.Audit, 0).Simulate(context.Background(), 0, 1_000_000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/1e6runs")
}

// sgldScenario is batch-1 cyclic SGLD on 1-D linear regression with
// n = 1000 records, 20 epochs (20,000 steps a run), final release only.
const sgldScenario = `
name: sgld-steps
seed: 1
model: {linreg: {dim: 1, alpha: 1, beta: 1}}
data: {synthetic_linreg: {n: 1000, theta_star: [0.5], seed: 1}}
neighbour: {adjacency: replace-one, index: 0, record: {x: [2], y: 0}}
sampler: {sgld: {step: {eta: 1.0e-4}, batch: 1, scheme: cyclic, epochs: 20}}
init: {from_prior: true}
release: {mode: final}
audit: {trials: %d, split: {train: 0.5, eval: 0.5}, delta: 1.0e-5, confidence: 0.95}
`

// BenchmarkSGLDStepWorkers measures the engine's batch-1 SGLD throughput
// with 1 and with 2 workers in the same run, and reports ns per step for
// each and the speed-up (targets: ≤ 4 ns/step with 2 workers on the
// 2-core machine, speed-up ≥ 1.85).
func BenchmarkSGLDStepWorkers(b *testing.B) {
	const trials = 400
	c, err := ParseConfig([]byte(fmt.Sprintf(sgldScenario, trials)))
	if err != nil {
		b.Fatal(err)
	}
	p, err := Build(c)
	if err != nil {
		b.Fatal(err)
	}
	steps := float64(trials * 20 * 1000)
	var t1, t2 time.Duration
	for i := 0; i < b.N; i++ {
		for _, w := range []int{1, 2} {
			start := time.Now()
			if _, err := withWorkers(b, p.Audit, w).Simulate(context.Background(), 0, trials); err != nil {
				b.Fatal(err)
			}
			if w == 1 {
				t1 += time.Since(start)
			} else {
				t2 += time.Since(start)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(t1.Nanoseconds())/n/steps, "ns/step-1worker")
	b.ReportMetric(float64(t2.Nanoseconds())/n/steps, "ns/step-2workers")
	b.ReportMetric(float64(t1)/float64(t2), "speedup")
}

// BenchmarkDigitsSGLD is testdata/digits-sgld.yaml end to end as the CLI
// runs it minus the analysis: Build (data, DeepFool canary from 20 trained
// models) and Simulate of the 1000 runs (softmax SGLD, 20 epochs, per-epoch
// releases with test accuracy) on one worker per CPU.
func BenchmarkDigitsSGLD(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c, err := LoadConfig("../../testdata/digits-sgld.yaml")
		if err != nil {
			b.Fatal(err)
		}
		p, err := Build(c)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := withWorkers(b, p.Audit, 0).Simulate(context.Background(), 0, c.Audit.Trials); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/op")
}

// BenchmarkInterimWorkers is testdata/sgld-interim.yaml at 10⁶ trials end
// to end short of rendering (Build, Simulate, Analyze: 200-step runs, 20
// release points, so per-trial overhead and the analysis weigh as much as
// the steps), on 1 and on 2 workers in the same run; it reports both wall
// times and the speed-up (target ≥ 1.7 on the 2-core machine).
func BenchmarkInterimWorkers(b *testing.B) {
	const trials = 1_000_000
	var spent [2]time.Duration
	for i := 0; i < b.N; i++ {
		for w := 1; w <= 2; w++ {
			runtime.GC() // the previous audit's garbage is not this one's work
			start := time.Now()
			c, err := LoadConfig("../../testdata/sgld-interim.yaml")
			if err != nil {
				b.Fatal(err)
			}
			c.Audit.Trials = trials
			p, err := Build(c)
			if err != nil {
				b.Fatal(err)
			}
			a := withWorkers(b, p.Audit, w)
			tr, err := a.Simulate(context.Background(), 0, trials)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := a.Analyze(tr); err != nil {
				b.Fatal(err)
			}
			spent[w-1] += time.Since(start)
		}
	}
	n := float64(b.N)
	b.ReportMetric(spent[0].Seconds()/n, "s-1worker")
	b.ReportMetric(spent[1].Seconds()/n, "s-2workers")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "speedup")
}
