package mechanisms

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// benchGrad reports the cost of one per-record gradient of m on the
// digits' shape (64 features in [0, 1], 10 classes).
func benchGrad(b *testing.B, m Model) {
	rng := rand.New(rand.NewPCG(1, 1))
	theta := testutil.RandomTheta(rng, m.Dim(), 0.3)
	recs := make([]dataset.Record, 64)
	for i := range recs {
		x := make([]float64, m.DataDim())
		for j := range x {
			x[j] = rng.Float64()
		}
		recs[i] = dataset.Record{X: x, Y: float64(rng.IntN(10))}
	}
	g := make([]float64, m.Dim())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.GradLogLik(theta, recs[i&63], g)
	}
}

// BenchmarkSoftmaxGradLogLik: one record's gradient, 64 features, 10
// classes (650 parameters).
func BenchmarkSoftmaxGradLogLik(b *testing.B) {
	benchGrad(b, Softmax{Features: 64, Classes: 10, Alpha: 1})
}

// BenchmarkSoftmaxLogLik: one record's log-likelihood.
func BenchmarkSoftmaxLogLik(b *testing.B) {
	m := Softmax{Features: 64, Classes: 10, Alpha: 1}
	rng := rand.New(rand.NewPCG(1, 1))
	theta := testutil.RandomTheta(rng, m.Dim(), 0.3)
	r := testutil.RandomRecord(rng, 64, 10, 0.5)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.LogLik(theta, r)
	}
}

// benchDigitsRun times one SGLD run of the lead's audit shape: 20 epochs,
// batch 32, over the 1,438 training digits (≈ 28,760 record gradients).
func benchDigitsRun(b *testing.B, m Model) {
	d, err := dataset.ReadCSVFile(digitsPath, dataset.DigitsOptions())
	if err != nil {
		b.Fatal(err)
	}
	tr, _, err := dataset.StratifiedSplit(d, 10, 0.2, 1)
	if err != nil {
		b.Fatal(err)
	}
	c := &Chain{Model: m, Init: Init{FromPrior: true}, Release: ReleaseSpec{Mode: ReleaseEpochs},
		Sampler: &SGLD{Step: StepSchedule{Eta: 1e-3}, Batch: 32, Scheme: Reshuffle, Epochs: 20}}
	if err := c.Check(tr); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Run(context.Background(), Trial{RNG: TrialRNG(1, dataset.SideD, i, 0)}, tr, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/run")
}

// BenchmarkSGLDRunDigitsSoftmax: one 20-epoch SGLD run of the softmax
// model on the digits.
func BenchmarkSGLDRunDigitsSoftmax(b *testing.B) {
	benchDigitsRun(b, Softmax{Features: 64, Classes: 10, Alpha: 1})
}

// benchMinibatchGrad times the summed log-likelihood gradient of one
// minibatch of 32 records on the digits' shape (64 features in [0, 1], 10
// classes), record by record (sumGradRef, how SGLD summed minibatches
// before) and as matrix products (SumGradLogLik), alternately in the same
// run, and reports µs per minibatch for each and their ratio.
func benchMinibatchGrad(b *testing.B, m BatchGradModel, clip float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	theta := testutil.RandomTheta(rng, m.Dim(), 0.3)
	recs := make([]dataset.Record, 1024)
	for i := range recs {
		x := make([]float64, m.DataDim())
		for j := range x {
			x[j] = rng.Float64()
		}
		recs[i] = dataset.Record{X: x, Y: float64(rng.IntN(10))}
	}
	const bs = 32
	batches := make([][]int, 64)
	for i := range batches {
		batches[i] = rng.Perm(len(recs))[:bs]
	}
	sum, g := make([]float64, m.Dim()), make([]float64, m.Dim())
	gb := m.NewGradBatch(bs)
	var ref, fast time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 64 {
		start := time.Now()
		for _, bt := range batches {
			sumGradRef(m, theta, recs, bt, clip, sum, g)
		}
		mid := time.Now()
		for _, bt := range batches {
			gb.SumGradLogLik(theta, recs, bt, clip, sum)
		}
		ref, fast = ref+mid.Sub(start), fast+time.Since(mid)
	}
	n := float64((b.N + 63) / 64 * 64)
	b.ReportMetric(float64(ref.Nanoseconds())/n/1e3, "µs/batch-ref")
	b.ReportMetric(float64(fast.Nanoseconds())/n/1e3, "µs/batch-fast")
	b.ReportMetric(float64(ref)/float64(fast), "speedup")
}

// BenchmarkSoftmaxMinibatchGrad: one minibatch of 32 digits-shaped records
// (650 parameters), reference vs matrix products.
func BenchmarkSoftmaxMinibatchGrad(b *testing.B) {
	benchMinibatchGrad(b, Softmax{Features: 64, Classes: 10, Alpha: 1}, 0)
}

// BenchmarkSoftmaxMinibatchGradClipped: the same with per-example clipping
// (the DP-SGLD digits scenario).
func BenchmarkSoftmaxMinibatchGradClipped(b *testing.B) {
	benchMinibatchGrad(b, Softmax{Features: 64, Classes: 10, Alpha: 1}, 1)
}
