package testutil

import (
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// RandomTheta draws dim parameters with independent N(0, s²) entries.
func RandomTheta(rng *rand.Rand, dim int, s float64) []float64 {
	th := make([]float64, dim)
	for i := range th {
		th[i] = s * rng.NormFloat64()
	}
	return th
}

// RandomRecord draws a record of d features with independent N(0, s²)
// entries and a label uniform on {0, …, k−1}.
func RandomRecord(rng *rand.Rand, d, k int, s float64) dataset.Record {
	x := make([]float64, d)
	for j := range x {
		x[j] = s * rng.NormFloat64()
	}
	return dataset.Record{X: x, Y: float64(rng.IntN(k))}
}

// SampleMoments returns the mean and the variance of xs and the standard
// error of both, estimated from the same sample: SE(mean) = sqrt(var/N)
// and SE(var) = sqrt((m4 − var²)/N), the delta-method standard error of
// the sample variance with m4 the fourth central moment.
func SampleMoments(xs []float64) (mean, variance, seMean, seVar float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	var m2, m4 float64
	for _, x := range xs {
		d := (x - mean) * (x - mean)
		m2 += d
		m4 += d * d
	}
	m2 /= n
	m4 /= n
	return mean, m2, math.Sqrt(m2 / n), math.Sqrt((m4 - m2*m2) / n)
}
