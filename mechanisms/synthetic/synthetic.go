// Package synthetic draws the synthetic datasets of the papers'
// experiments for the models of package mechanisms: linear and logistic
// regression, Räisä et al.'s Gaussian and banana models, Heikkilä et al.'s
// mixture. Each generator validates its arguments (an error names the
// field, as a Go name and as its scenario-file key) and gives the same
// dataset for the same seed.
package synthetic

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/internal/synth"
	"gonum.org/v1/gonum/mat"
)

func checkN(n int) error {
	if n < 1 {
		return field.Errorf(field.At("n", "n"), "must be ≥ 1, got %d", n)
	}
	return nil
}

func checkPositive(p field.Path, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return field.Errorf(p, "must be finite and > 0, got %g", v)
	}
	return nil
}

func checkFinite(p field.Path, theta []float64) error {
	for i, t := range theta {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return field.Errorf(p.Index(i), "must be finite, got %g", t)
		}
	}
	return nil
}

// LinReg draws n records for mechanisms.LinReg: x ~ N(0, I_d) (times
// xScale), y = θ*ᵀx + N(0, 1/beta). The same seed gives the same dataset.
func LinReg(n int, thetaStar []float64, beta, xScale float64, seed uint64) (*dataset.Dataset, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if len(thetaStar) < 1 {
		return nil, field.Errorf(field.At("thetaStar", "theta_star"), "must have at least one coordinate")
	}
	if err := checkPositive(field.At("beta", "beta"), beta); err != nil {
		return nil, err
	}
	if err := checkPositive(field.At("xScale", "x_scale"), xScale); err != nil {
		return nil, err
	}
	return synth.LinReg(n, thetaStar, beta, xScale, seed), nil
}

// Logistic draws n records for mechanisms.Logistic: x ~ N(0, I_d) (times
// xScale), y ~ Bernoulli(σ(θ*ᵀx)). The same seed gives the same dataset.
func Logistic(n int, thetaStar []float64, xScale float64, seed uint64) (*dataset.Dataset, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if len(thetaStar) < 1 {
		return nil, field.Errorf(field.At("thetaStar", "theta_star"), "must have at least one coordinate")
	}
	if err := checkPositive(field.At("xScale", "x_scale"), xScale); err != nil {
		return nil, err
	}
	return synth.Logistic(n, thetaStar, xScale, seed, mechanisms.Sigmoid), nil
}

// Banana draws n records from the banana model's likelihood at θ = theta:
// x₁ ~ N(θ₁, σ₁²), x₂ ~ N(θ₂ + aθ₁², σ₂²) (Räisä et al. §4.1 use
// θ = (0, 3)). The same seed gives the same dataset.
func Banana(n int, theta [2]float64, b mechanisms.Banana, seed uint64) (*dataset.Dataset, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if err := b.Check(); err != nil {
		return nil, err
	}
	if err := checkFinite(field.At("theta", "theta_star"), theta[:]); err != nil {
		return nil, err
	}
	p1, p2 := b.Unbend(theta[:])
	return synth.Banana(n, p1, p2, b.Var1, b.Var2, seed), nil
}

// Gauss draws n records x ~ N(theta, cov) for mechanisms.Gauss (cov
// row-major, symmetric positive definite). The same seed gives the same
// dataset.
func Gauss(n int, theta, cov []float64, seed uint64) (*dataset.Dataset, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	g, err := mechanisms.NewGauss(nil, 1, cov)
	if err != nil {
		return nil, err
	}
	d := g.Dim()
	if len(theta) != d {
		return nil, field.Errorf(field.At("theta", "theta_star"), "must have %d values, got %d", d, len(theta))
	}
	if err := checkFinite(field.At("theta", "theta_star"), theta); err != nil {
		return nil, err
	}
	// The factor of the symmetrised covariance NewGauss accepted: the
	// same factorisation as the model's own, so the same draws.
	c := g.Cov()
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			sym.SetSym(i, j, c[i*d+j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, field.Errorf(field.At("cov", "cov"), "must be positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	chol := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			chol[i*d+j] = l.At(i, j)
		}
	}
	return synth.Gauss(n, theta, chol, seed), nil
}

// Mixture draws n records from Heikkilä et al.'s eq. 25 at the given θ:
// with probability ½ from N(θ₁, σ_x²), else from N(θ₁ + θ₂, σ_x²). The same
// seed gives the same dataset. The paper's data (§4) are
// Mixture(1_000_000, []float64{0, 1}, presets.HeikkilaMixture(), seed).
func Mixture(n int, theta []float64, m mechanisms.Mixture, seed uint64) (*dataset.Dataset, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if len(theta) != 2 {
		return nil, field.Errorf(field.At("theta", "theta"), "must have 2 values, got %d", len(theta))
	}
	if err := checkFinite(field.At("theta", "theta"), theta); err != nil {
		return nil, err
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	return synth.Mixture(n, theta, m.VarX, seed), nil
}
