package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Mixture is the two-component Gaussian mixture of Heikkilä et al. (2019)
// eqs. 24–25 (the example of Welling & Teh 2011 and Seita et al. 2017):
//
//	θ_j ~ N(0, σ_j²), j = 1, 2,
//	x_i ~ ½·N(θ₁, σ_x²) + ½·N(θ₁ + θ₂, σ_x²),
//
// with one-dimensional records (X[0] = x_i; Y unused). The posterior is
// bimodal and has no closed form. The paper uses σ₁² = 10, σ₂² = 1,
// σ_x² = 2 (presets.HeikkilaMixture) and N = 10⁶ records drawn at θ = (0, 1)
// (synthetic.Mixture).
type Mixture struct {
	// Var1 and Var2 are the prior variances σ₁² and σ₂².
	Var1 float64 `yaml:"var1" json:"var1"`
	Var2 float64 `yaml:"var2" json:"var2"`
	// VarX is the component variance σ_x².
	VarX float64 `yaml:"var_x" json:"var_x"`
}

// Check validates the parameters.
func (m Mixture) Check() error {
	for _, f := range []struct {
		name field.Path
		v    float64
	}{{field.At("Var1", "var1"), m.Var1}, {field.At("Var2", "var2"), m.Var2}, {field.At("VarX", "var_x"), m.VarX}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return field.Errorf(f.name, "must be finite and > 0, got %g", f.v)
		}
	}
	return nil
}

// Name implements Model.
func (m Mixture) Name() string {
	return fmt.Sprintf("mixture(var1=%g, var2=%g, var_x=%g)", m.Var1, m.Var2, m.VarX)
}

// Dim implements Model: θ = (θ₁, θ₂).
func (m Mixture) Dim() int { return 2 }

// DataDim implements Model: one feature per record.
func (m Mixture) DataDim() int { return 1 }

// LogPrior implements Model: −θ₁²/(2σ₁²) − θ₂²/(2σ₂²) (constant dropped).
func (m Mixture) LogPrior(theta []float64) float64 {
	return -0.5 * (theta[0]*theta[0]/m.Var1 + theta[1]*theta[1]/m.Var2)
}

// GradLogPrior implements Model.
func (m Mixture) GradLogPrior(theta, grad []float64) {
	grad[0] = -theta[0] / m.Var1
	grad[1] = -theta[1] / m.Var2
}

// logComponents returns ln(½N(x; θ₁, σ_x²)) and ln(½N(x; θ₁+θ₂, σ_x²)).
func (m Mixture) logComponents(theta []float64, x float64) (l1, l2 float64) {
	c := -math.Ln2 - 0.5*math.Log(2*math.Pi*m.VarX)
	e1 := x - theta[0]
	e2 := x - theta[0] - theta[1]
	return c - 0.5*e1*e1/m.VarX, c - 0.5*e2*e2/m.VarX
}

// LogLik implements Model: ln(½N(x; θ₁, σ_x²) + ½N(x; θ₁+θ₂, σ_x²)) by
// log-sum-exp (eq. 25).
func (m Mixture) LogLik(theta []float64, r dataset.Record) float64 {
	l1, l2 := m.logComponents(theta, r.X[0])
	return numeric.LogAddExp(l1, l2)
}

// GradLogLik implements Model: with responsibilities ρ_k of the two
// components, ∂/∂θ₁ = (ρ₁(x−θ₁) + ρ₂(x−θ₁−θ₂))/σ_x² and
// ∂/∂θ₂ = ρ₂(x−θ₁−θ₂)/σ_x².
func (m Mixture) GradLogLik(theta []float64, r dataset.Record, grad []float64) {
	x := r.X[0]
	l1, l2 := m.logComponents(theta, x)
	// ρ₂ = 1/(1 + e^{l1−l2}) = σ(l2 − l1), computed without overflow.
	rho2 := Sigmoid(l2 - l1)
	rho1 := 1 - rho2
	e1 := (x - theta[0]) / m.VarX
	e2 := (x - theta[0] - theta[1]) / m.VarX
	grad[0] = rho1*e1 + rho2*e2
	grad[1] = rho2 * e2
}

// SamplePrior implements PriorSampler.
func (m Mixture) SamplePrior(rng *rand.Rand, theta []float64) {
	theta[0] = math.Sqrt(m.Var1) * rng.NormFloat64()
	theta[1] = math.Sqrt(m.Var2) * rng.NormFloat64()
}
