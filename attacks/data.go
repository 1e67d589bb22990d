package attacks

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/radix"
)

// Data is a labelled feature matrix: N rows of F features, row-major, with
// Label[i] true for a run on D′ (a positive).
type Data struct {
	N, F  int
	X     []float64
	Label []bool
}

// Row returns the features of run i.
func (d *Data) Row(i int) []float64 { return d.X[i*d.F : (i+1)*d.F] }

// Counts returns the numbers of negatives (runs on D) and positives.
func (d *Data) Counts() (neg, pos int) {
	for _, l := range d.Label {
		pos += radix.Bit(l)
	}
	return len(d.Label) - pos, pos
}

// standardizer maps features to zero mean and unit variance (per column,
// as estimated on the training set); constant columns are left centred.
type standardizer struct{ mean, scale []float64 }

func newStandardizer(d *Data) standardizer {
	s := standardizer{mean: make([]float64, d.F), scale: make([]float64, d.F)}
	for j := 0; j < d.F; j++ {
		var m float64
		for i := 0; i < d.N; i++ {
			m += d.X[i*d.F+j]
		}
		m /= float64(d.N)
		var v float64
		for i := 0; i < d.N; i++ {
			e := d.X[i*d.F+j] - m
			v += e * e
		}
		v /= float64(d.N)
		s.mean[j] = m
		s.scale[j] = 1
		if v > 0 && !math.IsInf(v, 0) {
			s.scale[j] = 1 / math.Sqrt(v)
		}
	}
	return s
}

func (s standardizer) apply(x, out []float64) {
	for j, v := range x {
		out[j] = (v - s.mean[j]) * s.scale[j]
	}
}

// transform returns a standardized copy of d.
func (s standardizer) transform(d *Data) *Data {
	out := &Data{N: d.N, F: d.F, X: make([]float64, len(d.X)), Label: d.Label}
	for i := 0; i < d.N; i++ {
		s.apply(d.Row(i), out.Row(i))
	}
	return out
}
