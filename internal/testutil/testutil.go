package testutil

import (
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
