package mechanisms

import (
	"context"
	"fmt"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The exact sampler against the real one: cyclic SGLD run step by step on
// the materialised pair at n = 6 and the exact epoch-boundary sampler
// agree in the mean and variance of every release and in the covariance of
// consecutive releases (the AR(1) transition), for D1 and D2, within the
// Monte Carlo error of both samples (SE of a difference of independent
// estimates: sqrt(SE₁² + SE₂²), 4.5 of them allowed).
func TestExactCounterexampleMatchesSGLD(t *testing.T) {
	const (
		n, epochs, chains = 6, 5, 30000
		alpha, beta       = 2.0, 1.0
		xh, c             = 1.8, 3.0
	)
	s := alpha + n*xh*xh*beta
	eta := 0.4 / s // λ = 0.8
	pair, _ := dataset.CounterexamplePair(n, xh, c)
	vpair, _ := dataset.VirtualCounterexamplePair(n, xh, c)
	model := closedform.Counterexample{N: n, Alpha: alpha, Beta: beta, XH: xh, C: c, Eta: eta}
	ex, err := NewExactCounterexample(model, epochs, ReleaseSpec{Mode: ReleaseEpochs})
	if err != nil {
		t.Fatal(err)
	}
	ch := &Chain{Model: NewLinReg1D(alpha, beta), Init: Init{FromPrior: true},
		Sampler: &SGLD{Step: StepSchedule{Eta: eta}, Batch: 1, Scheme: Cyclic, Epochs: epochs},
		Release: ReleaseSpec{Mode: ReleaseEpochs}}
	for side := 0; side < 2; side++ {
		real := make([][]float64, epochs)
		exact := make([][]float64, epochs)
		for e := range real {
			real[e], exact[e] = make([]float64, chains), make([]float64, chains)
		}
		d, vd := pair.D, vpair.D
		if side == 1 {
			d, vd = pair.DPrime, vpair.DPrime
		}
		for k := 0; k < chains; k++ {
			if _, err := ch.Run(context.Background(), Trial{RNG: TrialRNG(1, dataset.Side(side), k, 0)}, d, func(p int, th []float64) error { real[p][k] = th[0]; return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := ex.Run(context.Background(), Trial{Side: dataset.Side(side), RNG: TrialRNG(2, dataset.Side(side), k, 0)}, vd, func(p int, th []float64) error { exact[p][k] = th[0]; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		for e := 0; e < epochs; e++ {
			m1, v1, sm1, sv1 := testutil.SampleMoments(real[e])
			m2, v2, sm2, sv2 := testutil.SampleMoments(exact[e])
			checkMoment(t, fmt.Sprintf("side %d epoch %d mean", side, e+1), m2, m1, sqrtSum(sm1, sm2))
			checkMoment(t, fmt.Sprintf("side %d epoch %d variance", side, e+1), v2, v1, sqrtSum(sv1, sv2))
			if e > 0 {
				c1, sc1 := lagCov(real[e-1], real[e])
				c2, sc2 := lagCov(exact[e-1], exact[e])
				checkMoment(t, fmt.Sprintf("side %d epochs %d-%d covariance", side, e, e+1), c2, c1, sqrtSum(sc1, sc2))
			}
		}
	}
}

func sqrtSum(a, b float64) float64 { return math.Sqrt(a*a + b*b) }

// lagCov returns the sample covariance of (x, y) and its SE (from the
// variance of the centred products).
func lagCov(x, y []float64) (float64, float64) {
	mx, _, _, _ := testutil.SampleMoments(x)
	my, _, _, _ := testutil.SampleMoments(y)
	prod := make([]float64, len(x))
	for i := range x {
		prod[i] = (x[i] - mx) * (y[i] - my)
	}
	c, _, se, _ := testutil.SampleMoments(prod)
	return c, se
}
