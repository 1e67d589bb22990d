package mechanisms

import (
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Model is a Bayesian target π(θ | D) ∝ p(θ)·Π_i p(x_i | θ) with
// per-record log-likelihoods, the form every sampler here needs.
// Implementations must be safe for concurrent use (they hold no scratch
// state); methods writing into grad overwrite it.
type Model interface {
	// Name identifies the model in reports.
	Name() string
	// Dim is the dimension of θ.
	Dim() int
	// DataDim is the number of features of a record.
	DataDim() int
	// LogPrior returns ln p(θ) up to an additive constant.
	LogPrior(theta []float64) float64
	// GradLogPrior writes ∇ ln p(θ) into grad.
	GradLogPrior(theta, grad []float64)
	// LogLik returns ln p(r | θ) (normalised where the model is).
	LogLik(theta []float64, r dataset.Record) float64
	// GradLogLik writes ∇_θ ln p(r | θ) into grad.
	GradLogLik(theta []float64, r dataset.Record, grad []float64)
}

// PriorSampler is implemented by models whose prior can be sampled, so that
// a chain can start from a prior draw (as θ₀ ~ N(0, 1/α) in Heller & Fetaya
// §IV.B).
type PriorSampler interface {
	SamplePrior(rng *rand.Rand, theta []float64)
}

// GaussianPosterior is implemented by conjugate models: the exact posterior
// is N(Mean, Cov) (Cov row-major, Dim×Dim). Tests use it as ground truth.
type GaussianPosterior interface {
	Posterior(d *dataset.Dataset) (mean, cov []float64, err error)
}

// Affine1D is implemented by one-dimensional models whose gradients are
// affine in θ: ∇ ln p(θ) = PriorShift − PriorPrec·θ and
// ∇ ln p(x_i | θ) = H_i − J_i·θ. Samplers use it for an exact fast path
// (the same update rule, with per-record coefficients precomputed).
type Affine1D interface {
	AffineGrad1D(r dataset.Record) (h, j float64)
	AffinePrior1D() (shift, prec float64)
}
