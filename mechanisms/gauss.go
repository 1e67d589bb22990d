package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/mat"
)

// Gauss is the Gaussian model of Räisä et al. (2021), §4.1: the mean θ ∈ ℝᵈ
// of Gaussian records with a known covariance Σ, under an isotropic
// Gaussian prior,
//
//	θ ~ N(μ₀, σ₀² I),  x ~ N(θ, Σ).
//
// A record holds x in Record.X (Record.Y is unused). The model is conjugate:
// the posterior is N(m, S) with S⁻¹ = I/σ₀² + nΣ⁻¹ and
// m = S(μ₀/σ₀² + Σ⁻¹ Σᵢ xᵢ) (Gelman et al., Bayesian Data Analysis §3.5,
// the reference [12] Räisä et al. give for it).
//
// The paper's setting is d = 10, n = 100000, μ₀ = 0, σ₀ = 100, and Σ drawn
// by presets.RaisaCovariance. Build a Gauss with NewGauss; it is immutable and safe
// for concurrent use.
type Gauss struct {
	d       int
	mu0     []float64
	sigma0  float64
	cov     []float64 // Σ, row-major d×d
	prec    []float64 // Σ⁻¹, row-major d×d
	chol    []float64 // lower Cholesky factor of Σ, row-major
	logNorm float64   // −½ ln det(2πΣ)
}

// NewGauss returns the Gaussian model with prior N(priorMean, priorSD² I)
// and record covariance cov (row-major d×d, symmetric positive definite).
// An empty priorMean means the zero vector; d is taken from cov.
func NewGauss(priorMean []float64, priorSD float64, cov []float64) (*Gauss, error) {
	d := int(math.Round(math.Sqrt(float64(len(cov)))))
	if d < 1 || d*d != len(cov) {
		return nil, field.Errorf(field.At("cov", "cov"), "must hold d×d values for some d ≥ 1, got %d values", len(cov))
	}
	if len(priorMean) != 0 && len(priorMean) != d {
		return nil, field.Errorf(field.At("priorMean", "prior_mean"), "must have %d values (the dimension of cov), got %d", d, len(priorMean))
	}
	for i, v := range priorMean {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, field.Errorf(field.At("priorMean", "prior_mean").Index(i), "must be finite, got %g", v)
		}
	}
	if !(priorSD > 0) || math.IsInf(priorSD, 0) {
		return nil, field.Errorf(field.At("priorSD", "prior_sd"), "must be finite and > 0, got %g", priorSD)
	}
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			v := cov[i*d+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, field.Errorf(field.At("cov", "cov").Index(i).Index(j), "must be finite, got %g", v)
			}
			w := cov[j*d+i]
			// Symmetric up to rounding (a covariance computed as QDQᵀ is
			// symmetric only to a few ulps); the average is used.
			if math.Abs(v-w) > 1e-10*math.Sqrt(math.Abs(cov[i*d+i]*cov[j*d+j])) {
				return nil, field.Errorf(field.At("cov", "cov"), "must be symmetric, got cov[%d][%d] = %g and cov[%d][%d] = %g", i, j, v, j, i, w)
			}
			if j >= i {
				sym.SetSym(i, j, 0.5*(v+w))
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, field.Errorf(field.At("cov", "cov"), "must be positive definite")
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return nil, field.Errorf(field.At("cov", "cov"), "too ill-conditioned to invert: %v", err)
	}
	var l mat.TriDense
	ch.LTo(&l)
	g := &Gauss{d: d, sigma0: priorSD, mu0: make([]float64, d),
		cov: make([]float64, d*d), prec: make([]float64, d*d), chol: make([]float64, d*d)}
	copy(g.mu0, priorMean)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			g.cov[i*d+j] = sym.At(i, j)
			g.prec[i*d+j] = inv.At(i, j)
			g.chol[i*d+j] = l.At(i, j)
		}
	}
	g.logNorm = -0.5 * (float64(d)*math.Log(2*math.Pi) + ch.LogDet())
	return g, nil
}

// Name implements Model.
func (g *Gauss) Name() string { return fmt.Sprintf("gauss(d=%d, prior_sd=%g)", g.d, g.sigma0) }

// Dim implements Model.
func (g *Gauss) Dim() int { return g.d }

// DataDim implements Model.
func (g *Gauss) DataDim() int { return g.d }

// Cov returns a copy of the record covariance Σ (row-major).
func (g *Gauss) Cov() []float64 { return append([]float64(nil), g.cov...) }

// PriorMean returns a copy of μ₀.
func (g *Gauss) PriorMean() []float64 { return append([]float64(nil), g.mu0...) }

// PriorSD returns σ₀.
func (g *Gauss) PriorSD() float64 { return g.sigma0 }

// LogPrior implements Model: −‖θ − μ₀‖²/(2σ₀²) (constant dropped).
func (g *Gauss) LogPrior(theta []float64) float64 {
	var s float64
	for i, t := range theta {
		e := t - g.mu0[i]
		s += e * e
	}
	return -0.5 * s / (g.sigma0 * g.sigma0)
}

// GradLogPrior implements Model: −(θ − μ₀)/σ₀².
func (g *Gauss) GradLogPrior(theta, grad []float64) {
	v := g.sigma0 * g.sigma0
	for i, t := range theta {
		grad[i] = -(t - g.mu0[i]) / v
	}
}

// LogLik implements Model: ln N(x; θ, Σ) = −½(x−θ)ᵀΣ⁻¹(x−θ) − ½ ln det(2πΣ).
func (g *Gauss) LogLik(theta []float64, r dataset.Record) float64 {
	var q float64
	for i := 0; i < g.d; i++ {
		row := g.prec[i*g.d : (i+1)*g.d]
		var s float64
		for j, p := range row {
			s += p * (r.X[j] - theta[j])
		}
		q += (r.X[i] - theta[i]) * s
	}
	return g.logNorm - 0.5*q
}

// GradLogLik implements Model: Σ⁻¹(x − θ).
func (g *Gauss) GradLogLik(theta []float64, r dataset.Record, grad []float64) {
	for i := 0; i < g.d; i++ {
		row := g.prec[i*g.d : (i+1)*g.d]
		var s float64
		for j, p := range row {
			s += p * (r.X[j] - theta[j])
		}
		grad[i] = s
	}
}

// LogLikRatio implements LogLikRatioModel: ln p(x|θ′) − ln p(x|θ) =
// (θ′−θ)ᵀΣ⁻¹(x − (θ+θ′)/2), the difference of the two quadratic forms
// factored so that no two large terms are subtracted.
func (g *Gauss) LogLikRatio(theta, thetaNew []float64, r dataset.Record) float64 {
	var q float64
	for i := 0; i < g.d; i++ {
		row := g.prec[i*g.d : (i+1)*g.d]
		var s float64
		for j, p := range row {
			s += p * (r.X[j] - 0.5*(theta[j]+thetaNew[j]))
		}
		q += (thetaNew[i] - theta[i]) * s
	}
	return q
}

// SamplePrior implements PriorSampler.
func (g *Gauss) SamplePrior(rng *rand.Rand, theta []float64) {
	for i := range theta {
		theta[i] = g.mu0[i] + g.sigma0*rng.NormFloat64()
	}
}

// Posterior implements GaussianPosterior: S⁻¹ = I/σ₀² + nΣ⁻¹,
// m = S(μ₀/σ₀² + Σ⁻¹ Σᵢ xᵢ).
func (g *Gauss) Posterior(ds *dataset.Dataset) (mean, cov []float64, err error) {
	if err := ds.Validate(g.d); err != nil {
		return nil, nil, err
	}
	d := g.d
	n := float64(ds.Len())
	sum := make([]float64, d)
	for _, r := range ds.Records {
		for j, x := range r.X {
			sum[j] += x
		}
	}
	v0 := g.sigma0 * g.sigma0
	prec := mat.NewSymDense(d, nil)
	rhs := make([]float64, d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			p := n * g.prec[i*d+j]
			if i == j {
				p += 1 / v0
			}
			prec.SetSym(i, j, p)
		}
		s := g.mu0[i] / v0
		for j := 0; j < d; j++ {
			s += g.prec[i*d+j] * sum[j]
		}
		rhs[i] = s
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		return nil, nil, fmt.Errorf("gauss: posterior precision is not positive definite")
	}
	var c mat.SymDense
	if err := ch.InverseTo(&c); err != nil {
		return nil, nil, err
	}
	var mv mat.VecDense
	if err := ch.SolveVecTo(&mv, mat.NewVecDense(d, rhs)); err != nil {
		return nil, nil, err
	}
	cov = make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			cov[i*d+j] = c.At(i, j)
		}
	}
	return mv.RawVector().Data, cov, nil
}

// linearGrad implements linearGradModel: ∇ ln p(xᵢ | θ) = Σ⁻¹xᵢ − Σ⁻¹θ.
func (g *Gauss) linearGrad(ds *dataset.Dataset) (a, b []float64) {
	d := g.d
	a = make([]float64, ds.Len()*d)
	for n, r := range ds.Records {
		for i := 0; i < d; i++ {
			row := g.prec[i*d : (i+1)*d]
			var s float64
			for j, p := range row {
				s += p * r.X[j]
			}
			a[n*d+i] = s
		}
	}
	return a, g.prec
}
