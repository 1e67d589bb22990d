package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// GaussianQuery is the Gaussian mechanism on a sum query, a mechanism of
// known privacy used to validate audits: it releases
//
//	Σ_i clip_C(x_i) + N(0, Sigma²·I),
//
// with clip_C(x) = x·min(1, C/‖x‖) when Clip = C > 0. For two datasets whose
// (clipped) sums differ by Δ the output laws are N(q, σ²I) and N(q′, σ²I),
// so the mechanism on that pair is exactly μ-GDP with μ = ‖Δ‖/σ (Dong, Roth
// & Su 2019, Thm 2.7). It ignores the model except for its dimension,
// which must equal the records' dimension.
type GaussianQuery struct {
	Sigma float64 `yaml:"sigma" json:"sigma"`
	Clip  float64 `yaml:"clip,omitempty" json:"clip,omitempty"`
}

// Name implements Sampler.
func (g *GaussianQuery) Name() string {
	if g.Clip > 0 {
		return fmt.Sprintf("Gaussian mechanism(sum clipped at %g, sigma=%g)", g.Clip, g.Sigma)
	}
	return fmt.Sprintf("Gaussian mechanism(sum, sigma=%g)", g.Sigma)
}

// Iterations implements Sampler: one release.
func (g *GaussianQuery) Iterations(*dataset.Dataset) int { return 1 }

// IterationsPerEpoch implements Sampler.
func (g *GaussianQuery) IterationsPerEpoch(*dataset.Dataset) int { return 1 }

// Check implements Sampler.
func (g *GaussianQuery) Check(m Model, d *dataset.Dataset) error {
	if !(g.Sigma > 0) || math.IsInf(g.Sigma, 0) {
		return field.Errorf(field.At("Sigma", "sigma"), "must be finite and > 0, got %g", g.Sigma)
	}
	if !(g.Clip >= 0) || math.IsInf(g.Clip, 0) {
		return field.Errorf(field.At("Clip", "clip"), "must be finite and ≥ 0, got %g", g.Clip)
	}
	if m.Dim() != m.DataDim() {
		return modelErrorf("the Gaussian query releases a record-sized sum; the model's dimension %d must equal the records' %d", m.Dim(), m.DataDim())
	}
	return nil
}

// Query returns the (clipped) sum Σ_i clip_C(x_i).
func (g *GaussianQuery) Query(d *dataset.Dataset, dim int) []float64 {
	q := make([]float64, dim)
	for _, r := range d.Records {
		f := 1.0
		if g.Clip > 0 {
			var nn float64
			for _, x := range r.X {
				nn += x * x
			}
			if nn = math.Sqrt(nn); nn > g.Clip {
				f = g.Clip / nn
			}
		}
		for k, x := range r.X {
			q[k] += f * x
		}
	}
	return q
}

// Run implements Sampler: theta's starting value is ignored.
func (g *GaussianQuery) Run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit) (Info, error) {
	q := g.Query(d, len(theta))
	for k := range theta {
		theta[k] = q[k] + g.Sigma*rng.NormFloat64()
	}
	rel := releaser{at: at, emit: emit}
	info := Info{Iterations: 1}
	if rel.due(1) {
		if err := rel.release(theta, &info); err != nil {
			return info, err
		}
	}
	return info, nil
}
