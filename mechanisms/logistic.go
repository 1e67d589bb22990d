package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Logistic is Bayesian logistic regression with labels y ∈ {0, 1} and an
// isotropic Gaussian prior θ ~ N(0, I/Alpha):
//
//	p(y = 1 | x, θ) = σ(θᵀx),  σ(z) = 1/(1 + e^{−z}).
//
// An intercept is modelled by a constant feature.
type Logistic struct {
	D     int     `yaml:"dim" json:"dim"`
	Alpha float64 `yaml:"alpha" json:"alpha"` // prior precision
}

// Check validates the parameters.
func (m Logistic) Check() error {
	if m.D < 1 || m.D > MaxModelDim {
		return field.Errorf(field.At("D", "dim"), "must be in [1, %d], got %d", MaxModelDim, m.D)
	}
	if !(m.Alpha > 0) || math.IsInf(m.Alpha, 0) {
		return field.Errorf(field.At("Alpha", "alpha"), "must be finite and > 0, got %g", m.Alpha)
	}
	return nil
}

// Name implements Model.
func (m Logistic) Name() string { return fmt.Sprintf("logistic(d=%d, alpha=%g)", m.D, m.Alpha) }

// Dim implements Model.
func (m Logistic) Dim() int { return m.D }

// DataDim implements Model.
func (m Logistic) DataDim() int { return m.D }

// LogPrior implements Model.
func (m Logistic) LogPrior(theta []float64) float64 { return -0.5 * m.Alpha * dot(theta, theta) }

// priorPrecision implements isotropicPrior: the prior is N(0, I/Alpha).
func (m Logistic) priorPrecision() float64 { return m.Alpha }

// GradLogPrior implements Model.
func (m Logistic) GradLogPrior(theta, grad []float64) {
	for i, t := range theta {
		grad[i] = -m.Alpha * t
	}
}

// LogSigmoid returns ln σ(z) without overflow.
func LogSigmoid(z float64) float64 {
	if z >= 0 {
		return -math.Log1p(math.Exp(-z))
	}
	return z - math.Log1p(math.Exp(z))
}

// Sigmoid returns σ(z) = 1/(1 + e^{−z}).
func Sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// LogLik implements Model: y·ln σ(θᵀx) + (1−y)·ln σ(−θᵀx).
func (m Logistic) LogLik(theta []float64, r dataset.Record) float64 {
	z := dot(theta, r.X)
	if r.Y >= 0.5 {
		return LogSigmoid(z)
	}
	return LogSigmoid(-z)
}

// GradLogLik implements Model: (y − σ(θᵀx))·x.
func (m Logistic) GradLogLik(theta []float64, r dataset.Record, grad []float64) {
	g := r.Y - Sigmoid(dot(theta, r.X))
	for i, x := range r.X {
		grad[i] = g * x
	}
}

// SamplePrior implements PriorSampler.
func (m Logistic) SamplePrior(rng *rand.Rand, theta []float64) {
	s := 1 / math.Sqrt(m.Alpha)
	for i := range theta {
		theta[i] = s * rng.NormFloat64()
	}
}
