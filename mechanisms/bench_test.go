package mechanisms

import (
	"context"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// benchSGLD runs one chain of b.N iterations of batch-1 SGLD on 1-D linear
// regression with n = 1000 records and reports the cost per iteration.
func benchSGLD(b *testing.B, m Model, scheme IndexScheme) {
	d, _ := syntheticLinReg(1000, []float64{0.5}, 1, 1, 1)
	c := &Chain{Model: m, Init: Init{Theta: []float64{0}},
		Sampler: &SGLD{Step: StepSchedule{Eta: 1e-4}, Batch: 1, Scheme: scheme, Iters: max(b.N, 1)},
		Release: ReleaseSpec{Mode: ReleaseFinal}}
	if err := c.Check(d); err != nil {
		b.Fatal(err)
	}
	rng := TrialRNG(1, dataset.SideD, 0, 0)
	b.ResetTimer()
	if _, err := c.Run(context.Background(), Trial{RNG: rng}, d, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
}

// BenchmarkSGLDStep measures batch-1 cyclic SGLD on 1-D linreg (target: ≤ 8 ns/step on one core).
func BenchmarkSGLDStep(b *testing.B) { benchSGLD(b, NewLinReg1D(1, 1), Cyclic) }

// BenchmarkSGLDStepWithReplacement draws an index per step.
func BenchmarkSGLDStepWithReplacement(b *testing.B) {
	benchSGLD(b, NewLinReg1D(1, 1), WithReplacement)
}

// BenchmarkSGLDStepGeneric uses the generic (interface) path.
func BenchmarkSGLDStepGeneric(b *testing.B) { benchSGLD(b, hideAffine{NewLinReg1D(1, 1)}, Cyclic) }

// BenchmarkSGLDStepSchemes times batch-1 cyclic and with-replacement SGLD
// in the same run (1-D linreg, n = 1000, b.N steps each, in alternating
// chunks so that both see the same machine load) and reports ns/step of
// each and their ratio; the with-replacement loop is meant to cost what
// the cyclic one does (ratio ≈ 1).
func BenchmarkSGLDStepSchemes(b *testing.B) {
	d, _ := syntheticLinReg(1000, []float64{0.5}, 1, 1, 1)
	const chunk = 1 << 20
	chains := map[IndexScheme]*Chain{}
	for _, s := range []IndexScheme{Cyclic, WithReplacement} {
		chains[s] = &Chain{Model: NewLinReg1D(1, 1), Init: Init{Theta: []float64{0}},
			Sampler: &SGLD{Step: StepSchedule{Eta: 1e-4}, Batch: 1, Scheme: s, Iters: chunk},
			Release: ReleaseSpec{Mode: ReleaseFinal}}
		if err := chains[s].Check(d); err != nil {
			b.Fatal(err)
		}
	}
	var spent [2]time.Duration
	steps := 0
	b.ResetTimer()
	for k := 0; steps < b.N; k++ {
		for i, s := range []IndexScheme{Cyclic, WithReplacement} {
			start := time.Now()
			if _, err := chains[s].Run(context.Background(), NewTrial(1, dataset.SideD, k), d, nil); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
		steps += chunk
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(steps), "ns/step-cyclic")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(steps), "ns/step-replacement")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "replacement/cyclic")
}
