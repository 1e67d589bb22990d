package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/mat"
)

// LinReg is Bayesian linear regression with known noise precision and an
// isotropic Gaussian prior (Heller & Fetaya eq. 4 in one dimension):
//
//	y = θᵀx + ξ,  ξ ~ N(0, 1/Beta),  θ ~ N(0, I/Alpha).
//
// Its posterior is Gaussian (Bishop 2006, eqs. 3.53–3.54; Heller Lemma IV.2):
// Σ⁻¹ = Alpha·I + Beta·Σ xᵢxᵢᵀ, m = Σ·Beta·Σ xᵢyᵢ.
type LinReg struct {
	D     int     `yaml:"dim" json:"dim"`     // dimension of θ and of x
	Alpha float64 `yaml:"alpha" json:"alpha"` // prior precision
	Beta  float64 `yaml:"beta" json:"beta"`   // noise precision
}

// NewLinReg1D returns the one-dimensional model of Heller & Fetaya eq. 4.
func NewLinReg1D(alpha, beta float64) LinReg { return LinReg{D: 1, Alpha: alpha, Beta: beta} }

// Check validates the parameters.
func (m LinReg) Check() error {
	if m.D < 1 || m.D > MaxModelDim {
		return field.Errorf(field.At("D", "dim"), "must be in [1, %d], got %d", MaxModelDim, m.D)
	}
	if !(m.Alpha > 0) || math.IsInf(m.Alpha, 0) {
		return field.Errorf(field.At("Alpha", "alpha"), "must be finite and > 0, got %g", m.Alpha)
	}
	if !(m.Beta > 0) || math.IsInf(m.Beta, 0) {
		return field.Errorf(field.At("Beta", "beta"), "must be finite and > 0, got %g", m.Beta)
	}
	return nil
}

// Name implements Model.
func (m LinReg) Name() string {
	return fmt.Sprintf("linreg(d=%d, alpha=%g, beta=%g)", m.D, m.Alpha, m.Beta)
}

// Dim implements Model.
func (m LinReg) Dim() int { return m.D }

// DataDim implements Model.
func (m LinReg) DataDim() int { return m.D }

// LogPrior implements Model: −Alpha·‖θ‖²/2 (constant dropped).
func (m LinReg) LogPrior(theta []float64) float64 {
	var s float64
	for _, t := range theta {
		s += t * t
	}
	return -0.5 * m.Alpha * s
}

// GradLogPrior implements Model: −Alpha·θ.
func (m LinReg) GradLogPrior(theta, grad []float64) {
	for i, t := range theta {
		grad[i] = -m.Alpha * t
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// LogLik implements Model: ln N(y; θᵀx, 1/Beta).
func (m LinReg) LogLik(theta []float64, r dataset.Record) float64 {
	e := r.Y - dot(theta, r.X)
	return 0.5*math.Log(m.Beta/(2*math.Pi)) - 0.5*m.Beta*e*e
}

// GradLogLik implements Model: Beta·(y − θᵀx)·x.
func (m LinReg) GradLogLik(theta []float64, r dataset.Record, grad []float64) {
	e := m.Beta * (r.Y - dot(theta, r.X))
	for i, x := range r.X {
		grad[i] = e * x
	}
}

// SamplePrior implements PriorSampler.
func (m LinReg) SamplePrior(rng *rand.Rand, theta []float64) {
	s := 1 / math.Sqrt(m.Alpha)
	for i := range theta {
		theta[i] = s * rng.NormFloat64()
	}
}

// AffinePrior1D implements Affine1D.
func (m LinReg) AffinePrior1D() (shift, prec float64) { return 0, m.Alpha }

// AffineGrad1D implements Affine1D: ∇ ln p = Beta·x·y − Beta·x²·θ.
func (m LinReg) AffineGrad1D(r dataset.Record) (h, j float64) {
	x := r.X[0]
	return m.Beta * x * r.Y, m.Beta * x * x
}

// Posterior implements GaussianPosterior.
func (m LinReg) Posterior(d *dataset.Dataset) (mean, cov []float64, err error) {
	if err := d.Validate(m.D); err != nil {
		return nil, nil, err
	}
	prec := mat.NewSymDense(m.D, nil)
	rhs := make([]float64, m.D)
	for i := 0; i < m.D; i++ {
		prec.SetSym(i, i, m.Alpha)
	}
	for _, r := range d.Records {
		prec.SymRankOne(prec, m.Beta, mat.NewVecDense(m.D, r.X))
		for i, x := range r.X {
			rhs[i] += m.Beta * x * r.Y
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		return nil, nil, fmt.Errorf("linreg: posterior precision is not positive definite")
	}
	var c mat.SymDense
	if err := ch.InverseTo(&c); err != nil {
		return nil, nil, err
	}
	var mv mat.VecDense
	mv.MulVec(&c, mat.NewVecDense(m.D, rhs))
	cov = make([]float64, m.D*m.D)
	for i := 0; i < m.D; i++ {
		for j := 0; j < m.D; j++ {
			cov[i*m.D+j] = c.At(i, j)
		}
	}
	return mv.RawVector().Data, cov, nil
}
