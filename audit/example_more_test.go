package audit_test

import (
	"context"
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Refuting a claimed privacy profile from error counts: an attack erred on
// 3 of 500 runs on D and 7 of 500 on D′. Their one-sided Clopper–Pearson
// upper bounds (at α/2 each, 95% together) admit no 0.5-GDP mechanism at
// some (ε, δ(ε)) of its profile, but are compatible with 5-GDP. No
// Gaussian shape is assumed of the mechanism itself: the test is the
// hypothesis-testing inequality FPR + e^ε·FNR ≥ 1 − δ(ε) at every ε.
// (SciPy agrees on the printed profile values: δ(0.930) = 0.009525 for
// 0.5-GDP and δ(0) = 2Φ(2.5) − 1 = 0.98758 for 5-GDP; the rate bounds are
// 0.017434 and 0.028632.)
func ExampleRefute() {
	fpr, _ := stats.ClopperPearsonUpperTail(3, 500, 0.025)
	fnr, _ := stats.ClopperPearsonUpperTail(7, 500, 0.025)
	for _, mu := range []float64{0.5, 5} {
		profile := func(eps float64) float64 { return stats.GDPDelta(mu, eps) }
		r := audit.Refute(fpr, fnr, profile, nil)
		fmt.Printf("%g-GDP refuted: %v (most clearly at ε = %.3f, where δ(ε) = %.3g)\n", mu, r.Refuted, r.Epsilon, r.Delta)
	}
	// Output:
	// 0.5-GDP refuted: true (most clearly at ε = 0.930, where δ(ε) = 0.00953)
	// 5-GDP refuted: false (most clearly at ε = 0.000, where δ(ε) = 0.988)
}

// An audit run in two shards — on two machines, say — and merged: each
// shard simulates its own range of trials (trial i draws its randomness
// from (seed, side, i) only), the Merger joins them, and the analysis of
// the merged trials is the analysis of one uninterrupted run.
func ExampleMerger() {
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{{X: []float64{0.5}}, {X: []float64{-1}}}}
	pair, _ := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1.5}})
	a, err := audit.New(audit.Target{Name: "noisy sum", Mechanism: noisySum{}, Pair: pair},
		audit.Options{Trials: 4000, Seed: 7, Delta: 1e-5})
	if err != nil {
		fmt.Println(err)
		return
	}
	var m audit.Merger
	for i, r := range [][2]int{{0, 2500}, {2500, 4000}} {
		part, err := a.Simulate(context.Background(), r[0], r[1])
		if err == nil {
			err = m.Add(part, fmt.Sprintf("shard %d", i))
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	merged, err := m.Trials()
	if err != nil {
		fmt.Println(err)
		return
	}
	fromParts, err := a.Analyze(merged)
	if err != nil {
		fmt.Println(err)
		return
	}
	whole, _ := a.Simulate(context.Background(), 0, 4000)
	oneRun, _ := a.Analyze(whole)
	fmt.Printf("merged: ε_lb = %.4f on %d evaluation runs; one run: ε_lb = %.4f\n",
		fromParts.Epsilon.Epsilon, fromParts.EvalRuns, oneRun.Epsilon.Epsilon)
	// Output:
	// merged: ε_lb = 1.3938 on 2000 evaluation runs; one run: ε_lb = 1.3938
}
