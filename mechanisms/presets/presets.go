// Package presets holds the models and covariances with the settings the
// papers' experiments state: Räisä et al.'s banana model and random
// covariance (§4.1), Heikkilä et al.'s mixture (§4). Datasets for them
// come from package mechanisms/synthetic.
package presets

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/internal/synth"
)

// RaisaBanana returns the banana model with the hyperparameters stated in
// Räisä et al. §4.1: a = 20, σ₀ = 1000 (PriorVar = 10⁶), σ₁² = 2000,
// σ₂² = 2500.
func RaisaBanana() mechanisms.Banana {
	return mechanisms.Banana{A: 20, PriorVar: 1e6, Var1: 2000, Var2: 2500}
}

// HeikkilaMixture returns the mixture model with Heikkilä et al.'s settings
// σ₁² = 10, σ₂² = 1, σ_x² = 2 (§4).
func HeikkilaMixture() mechanisms.Mixture { return mechanisms.Mixture{Var1: 10, Var2: 1, VarX: 2} }

// RaisaCovariance draws a random d×d covariance the way Räisä et al. §4.1
// chose Σ for the Gauss model (after Hoffman et al.): eigenvalues i.i.d.
// Gamma(shape, scale 1) — the paper uses shape 0.5 — and eigenvectors from
// orthonormalising (QR) the columns of a matrix with i.i.d. U[0, 1]
// entries; Σ = Q·diag(λ)·Qᵀ. The same seed gives the same matrix.
// Small shapes give ill-conditioned matrices (shape 0.5 puts eigenvalues
// below 1e-4 with probability ≈ 1%), exactly as in the paper.
func RaisaCovariance(d int, shape float64, seed uint64) ([]float64, error) {
	if d < 1 || d > 1000 {
		return nil, field.Errorf(field.At("d", "dim"), "must be in [1, 1000], got %d", d)
	}
	if !(shape > 0) || math.IsInf(shape, 0) {
		return nil, field.Errorf(field.At("shape", "shape"), "must be finite and > 0, got %g", shape)
	}
	return synth.RaisaCovariance(d, shape, seed)
}
