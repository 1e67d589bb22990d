//go:build unix

package scenario

import (
	"context"
	"runtime"
	"runtime/debug"
	"sort"
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
// trial loop's CPU per trial (Simulate of all 10⁶ trials, one worker)
// divided by 200 × the bare step — the CPU per step of long runs of the
// same chain (same model, data, step size and scheme, 2·10⁷ steps each,
// no release until the end). Each of three rounds simulates the 10⁶ trials
// between two bare runs, its ratio taken against the mean of the two, so
// that a change in the machine's speed (a shared host) weighs on both
// sides of a ratio alike; before each, the heap is handed back to the
// operating system, so that every round pays for fresh memory as a real
// audit does. The benchmark runs with GOMAXPROCS = 1, so that the
// process's CPU time is the worker's and the garbage collector's: with a
// second, idle P the collector's idle mark worker spins there while it
// waits to scan the busy worker's stack, which now and then adds 0.2 s of
// CPU to a round that says nothing about the engine. Reported:
// ns-step-bare and ns-trial over all rounds, overhead-ratio (the median of
// the rounds' ratios; target ≤ 1.5: per-trial and per-release costs at
// most half the sampling) and its min and max.
func BenchmarkInterimOverhead(b *testing.B) {
	const trials, rounds = 1_000_000, 3
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
	bareSteps := float64(long.Iterations(p.Pair.D))
	a, err := p.Audit.WithExecution(audit.Execution{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stepCPU, trialCPU time.Duration
	var ratios []float64
	seq := 0
	runBare := func() time.Duration {
		t0 := cpuTime(b)
		rng := mechanisms.TrialRNG(1, dataset.SideD, seq, mechanisms.StreamSampler)
		seq++
		if _, err := bare.Run(context.Background(), mechanisms.Trial{RNG: rng}, p.Pair.D, nil); err != nil {
			b.Fatal(err)
		}
		d := cpuTime(b) - t0
		stepCPU += d
		return d
	}
	for i := 0; i < b.N; i++ {
		before := runBare()
		for r := 0; r < rounds; r++ {
			debug.FreeOSMemory()
			t1 := cpuTime(b)
			if _, err := a.Simulate(context.Background(), 0, trials); err != nil {
				b.Fatal(err)
			}
			d := cpuTime(b) - t1
			trialCPU += d
			after := runBare()
			step := float64((before + after).Nanoseconds()) / 2 / bareSteps
			ratios = append(ratios, float64(d.Nanoseconds())/trials/(float64(stepsPerTrial)*step))
			before = after
		}
	}
	sort.Float64s(ratios)
	nsStep := float64(stepCPU.Nanoseconds()) / float64(b.N*(rounds+1)) / bareSteps
	nsTrial := float64(trialCPU.Nanoseconds()) / float64(b.N*rounds) / trials
	b.ReportMetric(nsStep, "ns-step-bare")
	b.ReportMetric(nsTrial, "ns-trial")
	b.ReportMetric(ratios[len(ratios)/2], "overhead-ratio")
	b.ReportMetric(ratios[0], "ratio-min")
	b.ReportMetric(ratios[len(ratios)-1], "ratio-max")
}

// BenchmarkCanaryScoringShare measures what scoring the canaries costs a
// one-run audit (testdata/digits-sgld-canaries.yaml: softmax SGLD on the
// digits, 400 canaries scored by their log-likelihood at each of 20
// releases), in CPU time: a whole run (Simulate of the design's first trial:
// training on D with the included canaries, and scoring) against the
// feature map alone applied to as many states. Reported: ms-run,
// ms-scoring and scoring-share (the fraction of the run spent scoring).
func BenchmarkCanaryScoringShare(b *testing.B) {
	c, err := LoadConfig("../../testdata/digits-sgld-canaries.yaml")
	if err != nil {
		b.Fatal(err)
	}
	p, err := Build(c)
	if err != nil {
		b.Fatal(err)
	}
	a, err := p.Audit.WithExecution(audit.Execution{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f := a.Options().Features
	theta := make([]float64, p.Model.Dim())
	p.Model.(mechanisms.PriorSampler).SamplePrior(mechanisms.TrialRNG(1, dataset.SideD, 0, mechanisms.StreamSampler), theta)
	out := make([]float64, len(a.FeatureNames()))
	releases := len(a.Points())
	var runCPU, scoreCPU time.Duration
	for i := 0; i < b.N; i++ {
		t0 := cpuTime(b)
		if _, err := a.Simulate(context.Background(), 0, 1); err != nil {
			b.Fatal(err)
		}
		t1 := cpuTime(b)
		for k := 0; k < releases; k++ {
			f.Map(theta, out)
		}
		runCPU += t1 - t0
		scoreCPU += cpuTime(b) - t1
	}
	b.ReportMetric(float64(runCPU.Microseconds())/1e3/float64(b.N), "ms-run")
	b.ReportMetric(float64(scoreCPU.Microseconds())/1e3/float64(b.N), "ms-scoring")
	b.ReportMetric(float64(scoreCPU)/float64(runCPU), "scoring-share")
}
