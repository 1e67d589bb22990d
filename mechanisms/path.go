package mechanisms

import (
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// PathSpec sets a chain's threat model to the path: the adversary sees
// every quantity the sampler's privacy proof treats as released, at every
// iteration (SGLD's noisy updates; DP-HMC's noisy gradients and noisy
// log-likelihood ratios; the penalty test's noisy ratio; the Barker test's
// noisy statistic), knows D and D′, and the model carries a gradient
// canary (GradientCanary) that tells them apart. A run then releases, at
// each release point, the exact log-likelihood ratio
//
//	Λ_t = ln p(path up to t | D) − ln p(path up to t | D′)
//
// of the declared sampler — the most powerful statistic by the
// Neyman–Pearson lemma (Nasr et al. 2023 §4 audit DP-SGD with it) —
// accumulated inside the sampler's loop, so that no iterate is stored.
// Since the ordinary records are the same on both sides and known, and
// only the canary differs, Λ_t depends on the path through the canary's
// part of each released quantity (docs/derivations/path.md).
type PathSpec struct {
	// Sign is the canary's sign in D (Sign[0]) and in D′ (Sign[1]); 0 when
	// the side has no canary.
	Sign [2]float64
	// N is the number of records of D and D′.
	N [2]int
}

// PathSpecOf returns the path specification of a pair for a model with a
// gradient canary: each side's canary sign (the sign of its one canary
// record, 0 without one) and size. It refuses a side with more than one
// canary record.
func PathSpecOf(m Model, p dataset.Pair) (*PathSpec, error) {
	g := CanaryOf(m)
	if g == nil {
		return nil, field.Errorf(field.At("Model", "model"), "the path threat model needs a gradient canary (neighbour.gradient_canary)")
	}
	spec := &PathSpec{}
	for side, d := range []*dataset.Dataset{p.D, p.DPrime} {
		spec.N[side] = d.Len()
		found := 0
		for _, r := range d.Records {
			if s := g.Sign(r); s != 0 {
				spec.Sign[side] = s
				found++
			}
		}
		if found > 1 {
			return nil, field.Errorf(field.At("Data", "data"), "%s holds %d canary records; the path statistic allows one per dataset", d.Name, found)
		}
	}
	if spec.Sign[0] == spec.Sign[1] {
		return nil, field.Errorf(field.At("Data", "data"), "D and D′ hold the same canary (sign %g): nothing tells them apart", spec.Sign[0])
	}
	return spec, nil
}

// PathLR accumulates Λ, the log-likelihood ratio of one run's path, D
// against D′ (positive values favour D).
type PathLR struct {
	Spec *PathSpec
	// L is Λ so far, less the ratios mulRatio still holds: read Λ with
	// Value.
	L float64
	// Observe, when set, receives every per-step term as it is added
	// (tests recompute Λ from the saved path with it).
	Observe func(term float64)
	out     [1]float64
	// num/den is a product of per-step likelihood ratios not yet added to
	// L (mulRatio), and held the number of its factors.
	num, den float64
	held     int
}

// maxHeld bounds the factors of PathLR's products, each numerator and
// denominator in [1e-16, 1e16], so that the products stay within
// [1e-256, 1e256].
const maxHeld = 16

// NewPathLR returns an accumulator at Λ = 0.
func NewPathLR(spec *PathSpec) *PathLR { return &PathLR{Spec: spec, num: 1, den: 1} }

// mulRatio adds the term ln(num/den) of one step through running
// products: one division and one logarithm per maxHeld steps instead of
// one per step, the sum of logarithms being the logarithm of the product
// up to rounding (a few ulp of each term). The caller guarantees num and
// den in [1e-16, 1e16]; with an Observe hook every term is added at once.
// It is small enough to inline into the samplers' loops.
func (p *PathLR) mulRatio(num, den float64) {
	if p.Observe != nil {
		p.add(math.Log(num / den))
		return
	}
	p.num *= num
	p.den *= den
	if p.held++; p.held == maxHeld {
		p.flush()
	}
}

// flush adds the products of held ratios to L.
func (p *PathLR) flush() {
	if p.held > 0 {
		p.L += math.Log(p.num / p.den)
		p.num, p.den, p.held = 1, 1, 0
	}
}

// Value returns Λ so far.
func (p *PathLR) Value() float64 {
	p.flush()
	return p.L
}

// add adds one step's term.
func (p *PathLR) add(term float64) {
	p.L += term
	if p.Observe != nil {
		p.Observe(term)
	}
}

// release returns the release of a path run: the one-element vector Λ.
func (p *PathLR) release() []float64 {
	p.out[0] = p.Value()
	return p.out[:]
}

// GaussShift returns the log-likelihood ratio of one observation y under
// N(mD, sd²) against N(mDp, sd²): ((y − mDp)² − (y − mD)²)/(2sd²), written
// as (mD − mDp)(y − (mD + mDp)/2)/sd² so that no large squares cancel.
func GaussShift(y, mD, mDp, sd float64) float64 {
	return (mD - mDp) * (y - 0.5*(mD+mDp)) / (sd * sd)
}

// logMix returns ln((1 − q) + q·eˣ) for q ∈ [0, 1], without overflow for
// large x or loss of precision for small q·(eˣ − 1).
func logMix(q, x float64) float64 {
	switch {
	case q == 1:
		return x
	case q == 0:
		return 0
	case x > 0:
		return x + math.Log(q+(1-q)*math.Exp(-x))
	}
	return math.Log1p(q * math.Expm1(x))
}

// BernoulliShiftLogLik returns ln of the density ratio of y under
// (1 − q)·N(0, sd²) + q·N(a, sd²) against N(0, sd²): ln((1 − q) + q·e^{(2ya − a²)/(2sd²)}).
// The log-likelihood ratio of a Poisson- (or uniformly) subsampled
// Gaussian step between two hypotheses is the difference of two of these.
func BernoulliShiftLogLik(y, q, a, sd float64) float64 {
	if a == 0 {
		return 0
	}
	return logMix(q, a*(2*y-a)/(2*sd*sd))
}

// BinomialShiftLogLik returns ln of the density ratio of y under
// Σ_k Bin(k; b, p)·N(k·a, sd²) against N(0, sd²): the law of a
// with-replacement minibatch of b draws among records of which one
// contributes a each time it is drawn (p = 1/n).
func BinomialShiftLogLik(y float64, b int, p, a, sd float64) float64 {
	if a == 0 || p == 0 {
		return 0
	}
	v2 := 2 * sd * sd
	lp, lq := math.Log(p), math.Log1p(-p)
	// ln Bin(k; b, p) and the exponent, summed with the log-sum-exp of the
	// largest term first.
	terms := make([]float64, 0, min(b+1, 64))
	best := math.Inf(-1)
	lgb, _ := math.Lgamma(float64(b) + 1)
	for k := 0; k <= b; k++ {
		lk, _ := math.Lgamma(float64(k) + 1)
		lbk, _ := math.Lgamma(float64(b-k) + 1)
		ka := float64(k) * a
		t := lgb - lk - lbk + float64(k)*lp + float64(b-k)*lq + ka*(2*y-ka)/v2
		terms = append(terms, t)
		best = math.Max(best, t)
		if t < best-60 {
			// The terms are concave in k: past their peak, every later
			// one is smaller still.
			break
		}
	}
	var s float64
	for _, t := range terms {
		s += math.Exp(t - best)
	}
	return best + math.Log(s)
}

// pathSampler is implemented by the samplers that have a path threat
// model: checkPath refuses settings whose path statistic is not exact
// here, runPath is Run with Λ accumulated into lr and released in place
// of the state.
type pathSampler interface {
	checkPath(spec *PathSpec, m Model, d *dataset.Dataset) error
	runPath(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, lr *PathLR) (Info, error)
}

// pathGaussian is implemented by samplers whose path, for some pairs, is a
// composition of Gaussian shift tests of known sizes: the path up to
// iteration it is then exactly μ-GDP (Dong, Roth & Su 2019, Cor. 3.3:
// μ² = Σ μ_t²), and pathMu returns that μ (ok false where the path is not
// of that form, or where a planted bug makes the runs differ from the
// declared sampler).
type pathGaussian interface {
	pathMu(spec *PathSpec, m Model, d *dataset.Dataset, it int) (mu float64, ok bool)
}

// PathMu returns the exact μ of the path threat model's trade-off curve up
// to iteration it, on the chain's pair, when the path is a composition of
// Gaussian shift tests (see pathGaussian); ok is false otherwise.
func (c *Chain) PathMu(d *dataset.Dataset, it int) (mu float64, ok bool) {
	g, is := c.Sampler.(pathGaussian)
	if c.Path == nil || !is {
		return 0, false
	}
	return g.pathMu(c.Path, c.Model, d, it)
}
