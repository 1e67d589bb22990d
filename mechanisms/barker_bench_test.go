package mechanisms

import (
	"context"
	"sync"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// benchBarker runs one chain of b.N iterations and reports the cost per
// iteration.
func benchBarker(b *testing.B, m Model, d *dataset.Dataset, s *DPBarker, init []float64) {
	s.Iters = max(b.N, 1)
	c := &Chain{Model: m, Sampler: s, Init: Init{Theta: init}, Release: ReleaseSpec{Mode: ReleaseFinal}}
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

// BenchmarkDPBarkerFullData: the full-data test (eq. 9) on 1-D linear
// regression with n = 1000 records (n log-likelihoods per iteration).
func BenchmarkDPBarkerFullData(b *testing.B) {
	d, _ := syntheticLinReg(1000, []float64{0.5}, 1, 1, 1)
	benchBarker(b, NewLinReg1D(1, 1), d, &DPBarker{Step: 0.02, Clip: 10}, []float64{0.5})
}

// BenchmarkDPBarkerExact: the non-private exact test (eq. 5), same setting.
func BenchmarkDPBarkerExact(b *testing.B) {
	d, _ := syntheticLinReg(1000, []float64{0.5}, 1, 1, 1)
	benchBarker(b, NewLinReg1D(1, 1), d, &DPBarker{Step: 0.02, Exact: true}, []float64{0.5})
}

// BenchmarkDPBarkerSubsampledLinReg: the subsampled test (eq. 18), b = 100
// of n = 10,000 records, N0 = 10.
func BenchmarkDPBarkerSubsampledLinReg(b *testing.B) {
	d, _ := syntheticLinReg(10000, []float64{0.5}, 1, 1, 1)
	benchBarker(b, NewLinReg1D(1, 1), d, &DPBarker{Step: 0.3, Batch: 100, N0: 10}, []float64{0.5})
}

var (
	paperDataOnce sync.Once
	paperData     *dataset.Dataset
)

// BenchmarkDPBarkerSubsampledPaper: the paper's GMM experiment (§4):
// N = 10⁶ records of the mixture at θ = (0, 1), b = 1000, N0 = 100, C = 2,
// clip √b/N0, proposal variance 0.01; 2b log-likelihoods per iteration.
func BenchmarkDPBarkerSubsampledPaper(b *testing.B) {
	paperDataOnce.Do(func() {
		paperData, _ = syntheticMixture(heikkilaN, heikkilaTheta(), heikkilaMixture(), 1)
	})
	benchBarker(b, heikkilaMixture(), paperData, &DPBarker{Step: 0.1, Batch: 1000, N0: 100}, []float64{0, 1})
}

// BenchmarkVCorSample: one draw of N(0, C) + V_cor at C = 2.
func BenchmarkVCorSample(b *testing.B) {
	v, _ := NewVCor(2)
	rng := TrialRNG(1, dataset.SideD, 0, 0)
	var s float64
	for i := 0; i < b.N; i++ {
		s += v.sampleWithNormal(rng, 1.42)
	}
	_ = s
}
