package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// SyntheticLinReg draws n records for LinReg: x ~ N(0, I_d) (times xScale),
// y = θ*ᵀx + N(0, 1/beta). The same seed gives the same dataset.
func SyntheticLinReg(n int, thetaStar []float64, beta, xScale float64, seed uint64) (*dataset.Dataset, error) {
	if n < 1 {
		return nil, field.Errorf(field.At("n", "n"), "must be ≥ 1, got %d", n)
	}
	if len(thetaStar) < 1 {
		return nil, field.Errorf(field.At("thetaStar", "theta_star"), "must have at least one coordinate")
	}
	if !(beta > 0) || math.IsInf(beta, 0) {
		return nil, field.Errorf(field.At("beta", "beta"), "must be finite and > 0, got %g", beta)
	}
	if !(xScale > 0) || math.IsInf(xScale, 0) {
		return nil, field.Errorf(field.At("xScale", "x_scale"), "must be finite and > 0, got %g", xScale)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed11))
	d := &dataset.Dataset{Name: fmt.Sprintf("synthetic-linreg(n=%d, seed=%d)", n, seed), Records: make([]dataset.Record, n)}
	sd := 1 / math.Sqrt(beta)
	for i := range d.Records {
		x := make([]float64, len(thetaStar))
		for k := range x {
			x[k] = xScale * rng.NormFloat64()
		}
		d.Records[i] = dataset.Record{X: x, Y: dot(thetaStar, x) + sd*rng.NormFloat64()}
	}
	return d, nil
}

// SyntheticLogistic draws n records for Logistic: x ~ N(0, I_d) (times
// xScale), y ~ Bernoulli(σ(θ*ᵀx)).
func SyntheticLogistic(n int, thetaStar []float64, xScale float64, seed uint64) (*dataset.Dataset, error) {
	if n < 1 {
		return nil, field.Errorf(field.At("n", "n"), "must be ≥ 1, got %d", n)
	}
	if len(thetaStar) < 1 {
		return nil, field.Errorf(field.At("thetaStar", "theta_star"), "must have at least one coordinate")
	}
	if !(xScale > 0) || math.IsInf(xScale, 0) {
		return nil, field.Errorf(field.At("xScale", "x_scale"), "must be finite and > 0, got %g", xScale)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed12))
	d := &dataset.Dataset{Name: fmt.Sprintf("synthetic-logistic(n=%d, seed=%d)", n, seed), Records: make([]dataset.Record, n)}
	for i := range d.Records {
		x := make([]float64, len(thetaStar))
		for k := range x {
			x[k] = xScale * rng.NormFloat64()
		}
		y := 0.0
		if rng.Float64() < Sigmoid(dot(thetaStar, x)) {
			y = 1
		}
		d.Records[i] = dataset.Record{X: x, Y: y}
	}
	return d, nil
}
