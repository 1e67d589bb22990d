package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// DefaultCanarySlope is the slope K of a gradient canary when none is
// given: large enough that every clip bound of the built-in samplers is
// reached (a clipped gradient of norm C for any C < K, a clipped
// log-likelihood ratio at its bound whenever the canary's coordinate moves
// by more than 10⁻⁶ of the bound).
const DefaultCanarySlope = 1e6

// GradientCanary is a model with a gradient canary (Nasr et al. 2023,
// "Tight auditing of differentially private machine learning", §3: the
// Dirac canary): the inner model's parameters and one more coordinate θ_c,
// the last, which no ordinary record uses. Every record carries one more
// feature, its canary sign s ∈ {−1, 0, +1}, last:
//
//   - s = 0: an ordinary record of the inner model (its other features);
//     its log-likelihood does not depend on θ_c;
//   - s = ±1: a canary, whose log-likelihood is s·K·θ_c (K = Slope) and
//     does not depend on the inner parameters.
//
// So a canary's gradient is s·K·e_c, which per-example clipping at C < K
// turns into s·C·e_c: a clipped gradient of norm C along a direction no
// other record's gradient uses. Its log-likelihood ratio between θ and θ′
// is s·K·(θ′_c − θ_c), which a clip bound b turns into ±b, the sign that of
// s·(θ′_c − θ_c): at the bound, and of opposite signs for s = +1 and −1,
// so a replace-one pair (s = −1 in D, +1 in D′) differs by the full
// sensitivity 2b of the clipped sums. The prior on θ_c is flat (its
// gradient is 0), so θ_c moves only by the canary's contribution and the
// sampler's noise. Build one with NewGradientCanary.
type GradientCanary struct {
	inner Model
	slope float64
}

// NewGradientCanary returns inner with a gradient canary of slope K
// (DefaultCanarySlope when slope is 0). When inner has no parameters (an
// Inert model), the result is one-dimensional with affine gradients and
// implements Affine1D, which SGLD's exact fast path uses.
func NewGradientCanary(inner Model, slope float64) (Model, error) {
	if slope == 0 {
		slope = DefaultCanarySlope
	}
	if !(slope > 0) || math.IsInf(slope, 0) {
		return nil, field.Errorf(field.At("Slope", "slope"), "must be finite and > 0, got %g", slope)
	}
	g := &GradientCanary{inner: inner, slope: slope}
	if inner.Dim() == 0 {
		return &gradientCanary1D{g}, nil
	}
	return g, nil
}

// CanaryOf returns the gradient canary of m (nil when m has none).
func CanaryOf(m Model) *GradientCanary {
	switch g := m.(type) {
	case *GradientCanary:
		return g
	case *gradientCanary1D:
		return g.GradientCanary
	}
	return nil
}

// Inner returns the model the canary was added to.
func (g *GradientCanary) Inner() Model { return g.inner }

// Slope returns K.
func (g *GradientCanary) Slope() float64 { return g.slope }

// Coord returns the index of θ_c, the canary's coordinate.
func (g *GradientCanary) Coord() int { return g.inner.Dim() }

// Sign returns the canary sign s of record r (its last feature).
func (g *GradientCanary) Sign(r dataset.Record) float64 { return r.X[len(r.X)-1] }

// Name implements Model.
func (g *GradientCanary) Name() string {
	return fmt.Sprintf("%s with a gradient canary (slope %g)", g.inner.Name(), g.slope)
}

// Dim implements Model: the inner dimension and θ_c.
func (g *GradientCanary) Dim() int { return g.inner.Dim() + 1 }

// DataDim implements Model: the inner features and the canary sign.
func (g *GradientCanary) DataDim() int { return g.inner.DataDim() + 1 }

// CheckData implements DataChecker: every sign is −1, 0 or +1, and the
// ordinary records suit the inner model.
func (g *GradientCanary) CheckData(d *dataset.Dataset) error {
	inner := &dataset.Dataset{Name: d.Name}
	for i, r := range d.Records {
		switch s := g.Sign(r); s {
		case -1, 1:
		case 0:
			inner.Records = append(inner.Records, g.strip(r))
		default:
			return field.Errorf(field.At("Data", "data"), "record %d: the canary sign (last feature) must be -1, 0 or 1, got %g", i, s)
		}
	}
	if dc, ok := g.inner.(DataChecker); ok && len(inner.Records) > 0 {
		return dc.CheckData(inner)
	}
	return nil
}

// strip returns r without its canary sign.
func (g *GradientCanary) strip(r dataset.Record) dataset.Record {
	return dataset.Record{X: r.X[:len(r.X)-1], Y: r.Y}
}

// LogPrior implements Model: the inner prior (flat in θ_c).
func (g *GradientCanary) LogPrior(theta []float64) float64 {
	return g.inner.LogPrior(theta[:len(theta)-1])
}

// GradLogPrior implements Model.
func (g *GradientCanary) GradLogPrior(theta, grad []float64) {
	c := len(theta) - 1
	g.inner.GradLogPrior(theta[:c], grad[:c])
	grad[c] = 0
}

// LogLik implements Model.
func (g *GradientCanary) LogLik(theta []float64, r dataset.Record) float64 {
	c := len(theta) - 1
	if s := g.Sign(r); s != 0 {
		return s * g.slope * theta[c]
	}
	return g.inner.LogLik(theta[:c], g.strip(r))
}

// GradLogLik implements Model.
func (g *GradientCanary) GradLogLik(theta []float64, r dataset.Record, grad []float64) {
	c := len(theta) - 1
	if s := g.Sign(r); s != 0 {
		clear(grad[:c])
		grad[c] = s * g.slope
		return
	}
	g.inner.GradLogLik(theta[:c], g.strip(r), grad[:c])
	grad[c] = 0
}

// LogLikRatio implements LogLikRatioModel: a canary's ratio is
// s·K·(θ′_c − θ_c) exactly, an ordinary record's the inner model's.
func (g *GradientCanary) LogLikRatio(theta, thetaNew []float64, r dataset.Record) float64 {
	c := len(theta) - 1
	if s := g.Sign(r); s != 0 {
		return s * g.slope * (thetaNew[c] - theta[c])
	}
	in := g.strip(r)
	if lr, ok := g.inner.(LogLikRatioModel); ok {
		return lr.LogLikRatio(theta[:c], thetaNew[:c], in)
	}
	return g.inner.LogLik(thetaNew[:c], in) - g.inner.LogLik(theta[:c], in)
}

// SamplePrior implements PriorSampler when the inner model does: the inner
// parameters from their prior, θ_c = 0 (its prior is flat).
func (g *GradientCanary) SamplePrior(rng *rand.Rand, theta []float64) {
	c := len(theta) - 1
	if ps, ok := g.inner.(PriorSampler); ok {
		ps.SamplePrior(rng, theta[:c])
	}
	theta[c] = 0
}

// gradientCanary1D is a gradient canary on an Inert model: θ = (θ_c).
type gradientCanary1D struct{ *GradientCanary }

// AffineGrad1D implements Affine1D: a canary's gradient is s·K, constant.
func (g *gradientCanary1D) AffineGrad1D(r dataset.Record) (h, j float64) {
	return g.Sign(r) * g.slope, 0
}

// AffinePrior1D implements Affine1D: the flat prior.
func (g *gradientCanary1D) AffinePrior1D() (shift, prec float64) { return 0, 0 }

// Inert is a model with no parameters whose records have no features and
// a log-likelihood of 0: the ordinary records of a scenario in which only
// a gradient canary moves anything. The canary's path then has the same
// law as beside any inner model (the canary's coordinate is one no
// ordinary record uses), at the cost of the canary's coordinate alone.
type Inert struct{}

// Name implements Model.
func (Inert) Name() string { return "inert records" }

// Dim implements Model.
func (Inert) Dim() int { return 0 }

// DataDim implements Model.
func (Inert) DataDim() int { return 0 }

// LogPrior implements Model.
func (Inert) LogPrior([]float64) float64 { return 0 }

// GradLogPrior implements Model.
func (Inert) GradLogPrior(_, _ []float64) {}

// LogLik implements Model.
func (Inert) LogLik([]float64, dataset.Record) float64 { return 0 }

// GradLogLik implements Model.
func (Inert) GradLogLik(_ []float64, _ dataset.Record, _ []float64) {}

// LogLikRatio implements LogLikRatioModel.
func (Inert) LogLikRatio(_, _ []float64, _ dataset.Record) float64 { return 0 }

// SamplePrior implements PriorSampler (nothing to draw).
func (Inert) SamplePrior(*rand.Rand, []float64) {}
