package mechanisms

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// TestLogLikSetMatchesLogLik scores records through LogLikSet (batched
// logits, fastExp) and one by one through Model.LogLik (Logits, math.Exp)
// for a softmax and an MLP, at parameters from the prior and scaled up
// (logits of tens, probabilities near 0 and 1), and checks that every
// value agrees within the rounding of the two orders of summation: the
// logits' error is at most about d·u·Σ|w_j x_j| each (Higham 2002, §3.1),
// so a bound of 1e-12·(1 + |ln p|) leaves a margin of about 100 over it at
// these sizes; more than 2^12 records are scored so that a set spans
// several blocks of the scorer.
func TestLogLikSetMatchesLogLik(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	recs := make([]dataset.Record, 2500)
	for i := range recs {
		x := make([]float64, 64)
		for j := range x {
			x[j] = rng.Float64()
		}
		recs[i] = dataset.Record{X: x, Y: float64(rng.IntN(10))}
	}
	for _, m := range []BatchClassifier{Softmax{Features: 64, Classes: 10, Alpha: 0.1}, MLP{Features: 64, Hidden: 16, Classes: 10, Alpha: 1}} {
		set, err := NewLogLikSet(m, recs)
		if err != nil {
			t.Fatal(err)
		}
		theta := make([]float64, m.Dim())
		m.(PriorSampler).SamplePrior(rng, theta)
		for _, scale := range []float64{1, 10} {
			th := make([]float64, len(theta))
			for j := range th {
				th[j] = scale * theta[j]
			}
			out := make([]float64, len(recs))
			set.LogLiks(th, out)
			worst := 0.0
			for i, r := range recs {
				want := m.LogLik(th, r)
				if d := math.Abs(out[i]-want) / (1 + math.Abs(want)); d > worst {
					worst = d
				}
				if !(math.Abs(out[i]-want) <= 1e-12*(1+math.Abs(want))) {
					t.Fatalf("%s scale %g record %d: LogLikSet %v, LogLik %v", m.Name(), scale, i, out[i], want)
				}
			}
			t.Logf("%s scale %g: worst relative difference %.2g", m.Name(), scale, worst)
		}
	}
}
