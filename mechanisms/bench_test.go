package mechanisms

import (
	"context"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// benchSGLD runs one chain of b.N iterations of batch-1 SGLD on 1-D linear
// regression with n = 1000 records and reports the cost per iteration.
func benchSGLD(b *testing.B, m Model, scheme IndexScheme) {
	d, _ := SyntheticLinReg(1000, []float64{0.5}, 1, 1, 1)
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
