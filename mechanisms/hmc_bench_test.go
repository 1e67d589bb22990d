package mechanisms

import (
	"fmt"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// benchGauss returns the Gauss model of dimension dim (Räisä covariance,
// seed 1, prior N(0, 100² I)) and n records drawn at θ = (0, 3, 0, …).
func benchGauss(b *testing.B, dim, n int) (*Gauss, *dataset.Dataset) {
	cov, err := raisaCovariance(dim, 0.5, 1)
	if err != nil {
		b.Fatal(err)
	}
	g, err := NewGauss(nil, 100, cov)
	if err != nil {
		b.Fatal(err)
	}
	theta := make([]float64, dim)
	if dim > 1 {
		theta[1] = 3
	}
	d, err := syntheticGauss(n, theta, cov, 2)
	if err != nil {
		b.Fatal(err)
	}
	return g, d
}

// benchRun runs one chain of b.N iterations from the posterior mean and
// reports the cost per iteration and per per-record evaluation (gradient
// or log-likelihood ratio).
func benchRun(b *testing.B, m Model, d *dataset.Dataset, s Sampler, evalsPerIter int) {
	start := make([]float64, m.Dim())
	if gp, ok := m.(GaussianPosterior); ok {
		mean, _, err := gp.Posterior(d)
		if err != nil {
			b.Fatal(err)
		}
		copy(start, mean)
	}
	if err := s.Check(m, d); err != nil {
		b.Fatal(err)
	}
	rng := TrialRNG(1, dataset.SideD, 0, 0)
	b.ResetTimer()
	if _, err := s.Run(m, d, start, rng, nil, nil); err != nil {
		b.Fatal(err)
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns, "ns/iter")
	b.ReportMetric(ns/float64(evalsPerIter), "ns/record-eval")
}

// BenchmarkDPHMC: one DP-HMC iteration (L = 10, so 11 noisy gradient sums
// and one clipped ratio sum) on the Gauss model with n = 1000 records.
func BenchmarkDPHMC(b *testing.B) {
	for _, dim := range []int{2, 10} {
		b.Run(fmt.Sprintf("gauss-d%d-n1000-L10", dim), func(b *testing.B) {
			g, d := benchGauss(b, dim, 1000)
			const L = 10
			h := &DPHMC{Iters: max(b.N, 1), Step: 1e-4, LeapfrogSteps: L, ClipLLR: 6, ClipGrad: 10, TauL: 0.1, TauG: 0.25}
			benchRun(b, g, d, h, (L+2)*d.Len())
		})
	}
	b.Run("banana-n1000-L10", func(b *testing.B) {
		bn := raisaBanana()
		d, _ := syntheticBanana(1000, [2]float64{0, 3}, bn, 1)
		h := &DPHMC{Iters: max(b.N, 1), Step: 0.006, LeapfrogSteps: 10, ClipLLR: 0.1, ClipGrad: 0.05, TauL: 0.1, TauG: 0.55, StepJitter: JitterHalton}
		benchRun(b, bn, d, h, 12*d.Len())
	})
}

// BenchmarkDPPenalty: one DP-penalty iteration (one clipped ratio sum) on
// the Gauss model with n = 1000 records, with the factored ratio and with
// the cached log-likelihood fallback.
func BenchmarkDPPenalty(b *testing.B) {
	for _, dim := range []int{2, 10} {
		b.Run(fmt.Sprintf("gauss-d%d-n1000", dim), func(b *testing.B) {
			g, d := benchGauss(b, dim, 1000)
			s := &DPPenalty{Iters: max(b.N, 1), ProposalSD: []float64{0.002}, ClipLLR: 10, Tau: 0.05}
			benchRun(b, g, d, s, d.Len())
		})
	}
	b.Run("gauss-d2-n1000-cached", func(b *testing.B) {
		g, d := benchGauss(b, 2, 1000)
		s := &DPPenalty{Iters: max(b.N, 1), ProposalSD: []float64{0.002}, ClipLLR: 10, Tau: 0.05}
		benchRun(b, hideRatio{g}, d, s, d.Len())
	})
}
