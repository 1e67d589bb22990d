package mechanisms

import (
	"math"
	"math/rand/v2"
	"testing"
)

// zTol is the acceptance band, in standard errors, of the statistical
// tests: with fixed seeds they are deterministic; for a correct sampler
// a 4.5-SE deviation has probability ≈ 7e-6 per comparison, while the
// defects they are meant to catch (drift η instead of η/2, wrong batch
// scaling, missing noise) move the moments by tens of SEs (each test
// asserts that margin too).
const zTol = 4.5

func checkMoment(t *testing.T, what string, got, want, se float64) {
	t.Helper()
	if z := (got - want) / se; math.Abs(z) > zTol {
		t.Errorf("%s = %.6g, exact %.6g (%.1f SE off, SE %.3g)", what, got, want, z, se)
	}
}

// hideAffine wraps a model so that samplers take their generic path.
type hideAffine struct{ Model }

func (h hideAffine) SamplePrior(rng *rand.Rand, theta []float64) {
	h.Model.(PriorSampler).SamplePrior(rng, theta)
}

// digitsPath is the bundled digits set (testdata/DATA.md).
const digitsPath = "../testdata/digits.csv.gz"

// heikkilaTheta returns θ = (0, 1), the parameter value at which Heikkilä
// et al. (§4) draw their data.
func heikkilaTheta() []float64 { return []float64{0, 1} }

// heikkilaN is Heikkilä et al.'s dataset size (§4).
const heikkilaN = 1_000_000
