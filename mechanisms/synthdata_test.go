package mechanisms

import (
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/internal/synth"
)

// The tests draw their data with the generators behind packages
// mechanisms/synthetic and mechanisms/presets (which import this package,
// so its tests cannot import them): the same random streams, for inputs the
// tests know to be valid. Those packages test the validation.

func syntheticLinReg(n int, thetaStar []float64, beta, xScale float64, seed uint64) (*dataset.Dataset, error) {
	return synth.LinReg(n, thetaStar, beta, xScale, seed), nil
}

func syntheticBanana(n int, theta [2]float64, b Banana, seed uint64) (*dataset.Dataset, error) {
	p1, p2 := b.Unbend(theta[:])
	return synth.Banana(n, p1, p2, b.Var1, b.Var2, seed), nil
}

func syntheticGauss(n int, theta, cov []float64, seed uint64) (*dataset.Dataset, error) {
	g, err := NewGauss(nil, 1, cov)
	if err != nil {
		return nil, err
	}
	return synth.Gauss(n, theta, g.chol, seed), nil
}

func syntheticMixture(n int, theta []float64, m Mixture, seed uint64) (*dataset.Dataset, error) {
	return synth.Mixture(n, theta, m.VarX, seed), nil
}

func raisaCovariance(d int, shape float64, seed uint64) ([]float64, error) {
	return synth.RaisaCovariance(d, shape, seed)
}

// raisaBanana is presets.RaisaBanana (Räisä et al. §4.1).
func raisaBanana() Banana { return Banana{A: 20, PriorVar: 1e6, Var1: 2000, Var2: 2500} }

// heikkilaMixture is presets.HeikkilaMixture (Heikkilä et al. §4).
func heikkilaMixture() Mixture { return Mixture{Var1: 10, Var2: 1, VarX: 2} }
