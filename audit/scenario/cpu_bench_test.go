//go:build unix

package scenario

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// cpuTime is the CPU time (user + system) this process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkInterimOverhead measures what the engine adds to the sampling
// on testdata/sgld-interim.yaml at 10⁶ trials (200 steps and 20 releases a
// trial), in CPU time so that a loaded machine does not skew it: the
// trial loop's CPU per trial (Simulate, one worker) divided by 200 × the
// bare step — the CPU per step of one long run of the same chain (same
// model, data, step size and scheme, 2·10⁷ steps, no release until the
// end). Reported: ns-step-bare, ns-trial, and overhead-ratio (target
// ≤ 1.5: per-trial and per-release costs at most half the sampling).
func BenchmarkInterimOverhead(b *testing.B) {
	const trials = 1_000_000
	c, err := LoadConfig("../../testdata/sgld-interim.yaml")
	if err != nil {
		b.Fatal(err)
	}
	c.Audit.Trials = trials
	p, err := Build(c)
	if err != nil {
		b.Fatal(err)
	}
	sg, ok := p.Sampler.(*mechanisms.SGLD)
	if !ok {
		b.Fatalf("sampler is %T, want *mechanisms.SGLD", p.Sampler)
	}
	stepsPerTrial := sg.Iterations(p.Pair.D)
	long := &mechanisms.SGLD{Step: sg.Step, Batch: sg.Batch, Scheme: sg.Scheme, Clip: sg.Clip,
		NoiseVariance: sg.NoiseVariance, Epochs: 2_000_000} // 2·10⁷ steps at n = 10
	bare := &mechanisms.Chain{Model: p.Model, Sampler: long, Init: mechanisms.Init{Theta: []float64{0}},
		Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}
	if err := bare.Check(p.Pair.D); err != nil {
		b.Fatal(err)
	}
	bareSteps := long.Iterations(p.Pair.D)
	a, err := p.Audit.WithExecution(audit.Execution{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	var stepCPU, trialCPU time.Duration
	for i := 0; i < b.N; i++ {
		t0 := cpuTime(b)
		rng := mechanisms.TrialRNG(1, dataset.SideD, i, mechanisms.StreamSampler)
		if _, err := bare.Run(context.Background(), mechanisms.Trial{RNG: rng}, p.Pair.D, nil); err != nil {
			b.Fatal(err)
		}
		t1 := cpuTime(b)
		if _, err := a.Simulate(context.Background(), 0, trials); err != nil {
			b.Fatal(err)
		}
		t2 := cpuTime(b)
		stepCPU += t1 - t0
		trialCPU += t2 - t1
	}
	nsStep := float64(stepCPU.Nanoseconds()) / float64(b.N) / float64(bareSteps)
	nsTrial := float64(trialCPU.Nanoseconds()) / float64(b.N) / trials
	b.ReportMetric(nsStep, "ns-step-bare")
	b.ReportMetric(nsTrial, "ns-trial")
	b.ReportMetric(nsTrial/(float64(stepsPerTrial)*nsStep), "overhead-ratio")
}
