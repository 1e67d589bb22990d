package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Banana is the banana model of Räisä et al. (2021), §4.1: a Gaussian
// model seen through the bend g(φ₁, φ₂) = (φ₁, φ₂ − a·φ₁²), whose inverse is
// g⁻¹(θ₁, θ₂) = (θ₁, θ₂ + a·θ₁²) and whose Jacobian determinant is 1.
// Writing Ban(μ, Σ, a) for the law of g(φ) when φ ~ N(μ, Σ), the model is
//
//	θ ~ Ban(0, σ₀² I, a),  x₁ ~ N(θ₁, σ₁²),  x₂ ~ N(θ₂ + a·θ₁², σ₂²),
//
// i.e. φ = g⁻¹(θ) ~ N(0, σ₀² I) and x ~ N(φ, diag(σ₁², σ₂²)). A record holds
// (x₁, x₂) in Record.X. The posterior is Ban(μ, Σ, a) with the conjugate
// Gaussian posterior of φ (Räisä et al. §4.1; see BananaPosterior), so the
// posterior is not Gaussian but has exact samples and moments.
//
// The paper states σ₀ = 1000, σ₁² = 2000, σ₂² = 2500, a = 20, n = 100000
// and true θ = (0, 3). Its public experiment code uses prior precision
// 0.001, i.e. σ₀² = 1000 rather than 10⁶; both are flat next to n = 10⁵
// records. Banana is a value type, safe for concurrent use.
type Banana struct {
	// A is the curvature a of the bend.
	A float64 `yaml:"a" json:"a"`
	// PriorVar is σ₀², the variance of each coordinate of g⁻¹(θ) a priori.
	PriorVar float64 `yaml:"prior_var" json:"prior_var"`
	// Var1 and Var2 are σ₁² and σ₂², the variances of x₁ and x₂.
	Var1 float64 `yaml:"var1" json:"var1"`
	Var2 float64 `yaml:"var2" json:"var2"`
}

// Check validates the parameters.
func (b Banana) Check() error {
	if math.IsNaN(b.A) || math.IsInf(b.A, 0) {
		return field.Errorf(field.At("A", "a"), "must be finite, got %g", b.A)
	}
	for _, f := range []struct {
		name field.Path
		v    float64
	}{{field.At("PriorVar", "prior_var"), b.PriorVar}, {field.At("Var1", "var1"), b.Var1}, {field.At("Var2", "var2"), b.Var2}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return field.Errorf(f.name, "must be finite and > 0, got %g", f.v)
		}
	}
	return nil
}

// Name implements Model.
func (b Banana) Name() string {
	return fmt.Sprintf("banana(a=%g, prior_var=%g, var1=%g, var2=%g)", b.A, b.PriorVar, b.Var1, b.Var2)
}

// Dim implements Model.
func (b Banana) Dim() int { return 2 }

// DataDim implements Model.
func (b Banana) DataDim() int { return 2 }

// Unbend returns g⁻¹(θ) = (θ₁, θ₂ + a·θ₁²).
func (b Banana) Unbend(theta []float64) (phi1, phi2 float64) {
	return theta[0], theta[1] + b.A*theta[0]*theta[0]
}

// Bend writes g(φ) = (φ₁, φ₂ − a·φ₁²) into theta.
func (b Banana) Bend(phi1, phi2 float64, theta []float64) {
	theta[0], theta[1] = phi1, phi2-b.A*phi1*phi1
}

// LogPrior implements Model: ln N(g⁻¹(θ); 0, σ₀² I) up to a constant (the
// bend has unit Jacobian): −(θ₁² + (θ₂ + aθ₁²)²)/(2σ₀²).
func (b Banana) LogPrior(theta []float64) float64 {
	p1, p2 := b.Unbend(theta)
	return -0.5 * (p1*p1 + p2*p2) / b.PriorVar
}

// GradLogPrior implements Model: with u = θ₂ + aθ₁²,
// ∂/∂θ₁ = −(θ₁ + 2aθ₁u)/σ₀², ∂/∂θ₂ = −u/σ₀².
func (b Banana) GradLogPrior(theta, grad []float64) {
	p1, u := b.Unbend(theta)
	grad[0] = -(p1 + 2*b.A*p1*u) / b.PriorVar
	grad[1] = -u / b.PriorVar
}

// LogLik implements Model: ln N(x₁; θ₁, σ₁²) + ln N(x₂; θ₂ + aθ₁², σ₂²).
func (b Banana) LogLik(theta []float64, r dataset.Record) float64 {
	p1, u := b.Unbend(theta)
	e1, e2 := r.X[0]-p1, r.X[1]-u
	return -0.5*(e1*e1/b.Var1+e2*e2/b.Var2) - 0.5*math.Log(4*math.Pi*math.Pi*b.Var1*b.Var2)
}

// GradLogLik implements Model: with u = θ₂ + aθ₁²,
// ∂/∂θ₁ = (x₁−θ₁)/σ₁² + 2aθ₁(x₂−u)/σ₂², ∂/∂θ₂ = (x₂−u)/σ₂².
func (b Banana) GradLogLik(theta []float64, r dataset.Record, grad []float64) {
	p1, u := b.Unbend(theta)
	e2 := (r.X[1] - u) / b.Var2
	grad[0] = (r.X[0]-p1)/b.Var1 + 2*b.A*p1*e2
	grad[1] = e2
}

// LogLikRatio implements LogLikRatioModel: with u = θ₂ + aθ₁² and u′ the
// same at θ′, ln p(x|θ′) − ln p(x|θ) = (θ₁′−θ₁)(x₁ − (θ₁+θ₁′)/2)/σ₁² +
// (u′−u)(x₂ − (u+u′)/2)/σ₂², where u′−u = (θ₂′−θ₂) + a(θ₁′−θ₁)(θ₁′+θ₁) is
// formed without cancelling large terms.
func (b Banana) LogLikRatio(theta, thetaNew []float64, r dataset.Record) float64 {
	d1 := thetaNew[0] - theta[0]
	_, u := b.Unbend(theta)
	_, un := b.Unbend(thetaNew)
	du := (thetaNew[1] - theta[1]) + b.A*d1*(thetaNew[0]+theta[0])
	return d1*(r.X[0]-0.5*(theta[0]+thetaNew[0]))/b.Var1 + du*(r.X[1]-0.5*(u+un))/b.Var2
}

// SamplePrior implements PriorSampler: θ = g(φ), φ ~ N(0, σ₀² I).
func (b Banana) SamplePrior(rng *rand.Rand, theta []float64) {
	s := math.Sqrt(b.PriorVar)
	p1 := s * rng.NormFloat64()
	p2 := s * rng.NormFloat64()
	b.Bend(p1, p2, theta)
}

// BananaLaw is the distribution Ban(μ, diag(Var), a): the law of g(φ) for
// φ ~ N(μ, diag(Var₁, Var₂)).
type BananaLaw struct {
	Mu  [2]float64
	Var [2]float64
	A   float64
}

// BananaPosterior returns the exact posterior of the banana model given d,
// Ban(μ, Σ, a) with (Räisä et al. §4.1), τᵢ = 1/σᵢ², x̄ᵢ the data means,
//
//	μᵢ = nτᵢx̄ᵢ/(nτᵢ + τ₀),  Σ = diag(1/(nτ₁ + τ₀), 1/(nτ₂ + τ₀)).
func (b Banana) BananaPosterior(d *dataset.Dataset) (BananaLaw, error) {
	if err := b.Check(); err != nil {
		return BananaLaw{}, err
	}
	if err := d.Validate(2); err != nil {
		return BananaLaw{}, err
	}
	var s1, s2 float64
	for _, r := range d.Records {
		s1 += r.X[0]
		s2 += r.X[1]
	}
	n := float64(d.Len())
	t0, t1, t2 := 1/b.PriorVar, 1/b.Var1, 1/b.Var2
	// nτᵢx̄ᵢ = τᵢ·Σx.
	return BananaLaw{
		Mu:  [2]float64{t1 * s1 / (n*t1 + t0), t2 * s2 / (n*t2 + t0)},
		Var: [2]float64{1 / (n*t1 + t0), 1 / (n*t2 + t0)},
		A:   b.A,
	}, nil
}

// Sample writes a draw of the law into theta.
func (l BananaLaw) Sample(rng *rand.Rand, theta []float64) {
	p1 := l.Mu[0] + math.Sqrt(l.Var[0])*rng.NormFloat64()
	p2 := l.Mu[1] + math.Sqrt(l.Var[1])*rng.NormFloat64()
	theta[0], theta[1] = p1, p2-l.A*p1*p1
}

// Mean returns E[θ] = (μ₁, μ₂ − a(μ₁² + V₁)), from E[φ₁²] = μ₁² + V₁.
func (l BananaLaw) Mean() [2]float64 {
	return [2]float64{l.Mu[0], l.Mu[1] - l.A*(l.Mu[0]*l.Mu[0]+l.Var[0])}
}

// Cov returns the covariance of θ: Var θ₁ = V₁,
// Var θ₂ = V₂ + a²·Var(φ₁²) = V₂ + a²(2V₁² + 4μ₁²V₁),
// Cov(θ₁, θ₂) = −a·Cov(φ₁, φ₁²) = −2aμ₁V₁ (Gaussian moments of φ₁).
func (l BananaLaw) Cov() [2][2]float64 {
	m, v, a := l.Mu[0], l.Var[0], l.A
	c := -2 * a * m * v
	return [2][2]float64{{v, c}, {c, l.Var[1] + a*a*(2*v*v+4*m*m*v)}}
}

// LogDensity returns the normalised log-density of the law at θ:
// ln N(g⁻¹(θ); μ, diag(V)) (unit Jacobian).
func (l BananaLaw) LogDensity(theta []float64) float64 {
	e1 := theta[0] - l.Mu[0]
	e2 := theta[1] + l.A*theta[0]*theta[0] - l.Mu[1]
	return -0.5*(e1*e1/l.Var[0]+e2*e2/l.Var[1]) - 0.5*math.Log(4*math.Pi*math.Pi*l.Var[0]*l.Var[1])
}
