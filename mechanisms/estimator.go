package mechanisms

import (
	"context"
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// EstimatorSpec is a Monte Carlo estimator released with noise (Bertazzi
// et al. §3.2, eq. 5): A(D) = (1/N)Σ_{n=From}^{To} fᵀθ_n + L, with f a fixed
// vector (a coordinate: a unit vector), N = To − From + 1 and L Laplace of
// scale Laplace or Gaussian of standard deviation Gaussian.
type EstimatorSpec struct {
	// F holds the weights of f(θ) = Fᵀθ, one per coordinate of θ.
	F []float64 `yaml:"f" json:"f"`
	// From and To are the first and last iterations averaged.
	From int `yaml:"from" json:"from"`
	To   int `yaml:"to" json:"to"`
	// Laplace and Gaussian are the noise's scale (exactly one > 0).
	Laplace  float64 `yaml:"laplace,omitempty" json:"laplace,omitempty"`
	Gaussian float64 `yaml:"gaussian,omitempty" json:"gaussian,omitempty"`
}

// EstimatorLabel labels the estimator's release point.
const EstimatorLabel = "estimator"

// points checks the spec against a run of total iterations and returns the
// release point: one, after To.
func (e *EstimatorSpec) points(total int) ([]ReleasePoint, error) {
	if e == nil {
		return nil, field.Errorf(field.At("Estimator", "estimator"), "release.mode estimator needs the estimator section (f, from, to and the noise)")
	}
	if e.From < 1 || e.To < e.From || e.To > total {
		return nil, field.Errorf(field.At("Estimator", "estimator").Field("To", "to"), "the window [from, to] must satisfy 1 ≤ from ≤ to ≤ the run's %d iterations, got [%d, %d]", total, e.From, e.To)
	}
	if err := e.check(); err != nil {
		return nil, err
	}
	return []ReleasePoint{{Iteration: e.To, Label: EstimatorLabel}}, nil
}

// check validates what the spec says on its own, whatever the run's
// length: a window [from, to] with 1 ≤ from ≤ to of at most
// MaxReleasePoints iterations, one finite noise scale > 0 and finite
// weights. It runs before anything is sized from the window.
func (e *EstimatorSpec) check() error {
	at := field.At("Estimator", "estimator")
	switch {
	case e.From < 1 || e.To < e.From:
		return field.Errorf(at.Field("To", "to"), "the window [from, to] must satisfy 1 ≤ from ≤ to ≤ the run's length, got [%d, %d]", e.From, e.To)
	case e.To-e.From >= MaxReleasePoints:
		return field.Errorf(at.Field("From", "from"), "the window may hold at most %d iterations, got %d", MaxReleasePoints, e.To-e.From+1)
	case (e.Laplace > 0) == (e.Gaussian > 0) || math.IsInf(e.Laplace, 0) || math.IsInf(e.Gaussian, 0) || e.Laplace < 0 || e.Gaussian < 0:
		return field.Errorf(at.Field("Laplace", "laplace"), "give exactly one noise scale, laplace or gaussian, finite and > 0 (got laplace %g, gaussian %g)", e.Laplace, e.Gaussian)
	}
	for _, w := range e.F {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return field.Errorf(at.Field("F", "f"), "weights must be finite, got %v", e.F)
		}
	}
	return nil
}

// noise returns L's description for closedform.
func (e *EstimatorSpec) noise() closedform.EstimatorNoise {
	return closedform.EstimatorNoise{Laplace: e.Laplace, Gaussian: e.Gaussian}
}

// Estimator releases a chain's Monte Carlo estimator with noise
// (EstimatorSpec): one release of dimension 1 per run.
type Estimator struct {
	// Chain is the chain averaged; its Release is ignored.
	Chain *Chain
	Spec  EstimatorSpec
	inner *Chain
}

// NewEstimator returns the estimator of chain c (whose Release must be
// ReleaseEstimator with its spec).
func NewEstimator(c *Chain) (*Estimator, error) {
	if c.Release.Mode != ReleaseEstimator || c.Release.Estimator == nil {
		return nil, field.Errorf(field.At("Release", "release").Field("Mode", "mode"), "an estimator needs release.mode estimator and its estimator section")
	}
	s := *c.Release.Estimator
	// The window sizes the snapshot list: it is checked first, so that a
	// window of 10⁹ iterations is refused, not allocated.
	if err := s.check(); err != nil {
		return nil, field.Wrap(err, field.At("Release", "release"))
	}
	at := make([]int, 0, s.To-s.From+1)
	for k := s.From; k <= s.To; k++ {
		at = append(at, k)
	}
	inner := &Chain{Model: c.Model, Sampler: c.Sampler, Init: c.Init, Release: ReleaseSpec{Mode: ReleaseSnapshots, At: at}}
	return &Estimator{Chain: c, Spec: s, inner: inner}, nil
}

// Name implements Namer.
func (e *Estimator) Name() string {
	return fmt.Sprintf("Monte Carlo estimator (1/%d)Σ fᵀθ_n over iterations %d–%d + %s, f = %v, of %s",
		e.Spec.To-e.Spec.From+1, e.Spec.From, e.Spec.To, e.Spec.noise(), e.Spec.F, e.Chain.Name())
}

// Dim implements Mechanism: the estimator is a scalar.
func (e *Estimator) Dim() int { return 1 }

// Points implements Mechanism.
func (e *Estimator) Points(d *dataset.Dataset) ([]ReleasePoint, error) {
	pts, err := e.Spec.points(e.Chain.Sampler.Iterations(d))
	return pts, field.Wrap(err, field.At("Release", "release"))
}

// Check implements Checker.
func (e *Estimator) Check(d *dataset.Dataset) error {
	if len(e.Spec.F) != e.Chain.Model.Dim() {
		return field.Errorf(field.At("Release", "release").Field("Estimator", "estimator").Field("F", "f"),
			"must have %d weights (the model's dimension), got %d", e.Chain.Model.Dim(), len(e.Spec.F))
	}
	if _, err := e.Points(d); err != nil {
		return err
	}
	return e.inner.Check(d)
}

// Run implements Mechanism: the chain runs on t.RNG, then L is drawn from
// it.
func (e *Estimator) Run(ctx context.Context, t Trial, d *dataset.Dataset, emit Emit) (Info, error) {
	var sum float64
	info, err := e.inner.Run(ctx, t, d, func(_ int, theta []float64) error {
		for j, w := range e.Spec.F {
			sum += w * theta[j]
		}
		return nil
	})
	if err != nil {
		return info, err
	}
	v := sum / float64(e.Spec.To-e.Spec.From+1)
	if e.Spec.Laplace > 0 {
		v += e.Spec.Laplace * (t.RNG.ExpFloat64() - t.RNG.ExpFloat64())
	} else {
		v += e.Spec.Gaussian * t.RNG.NormFloat64()
	}
	info.PerRelease = nil
	return info, emit(0, []float64{v})
}

// Guarantees implements Guarantor: Props. 3.7 and 3.10 where the ergodic
// average's law is known exactly, else both with the reason their
// assumptions are not verified.
func (e *Estimator) Guarantees(p dataset.Pair, _ ReleasePoint) []closedform.Guarantee {
	release := fmt.Sprintf("Monte Carlo estimator over iterations %d–%d", e.Spec.From, e.Spec.To)
	pair, checks, reason := e.estimatorPair(p)
	if pair == nil {
		why := "Assumptions 3.6, 3.8 and 3.9 not verified: " + reason
		return []closedform.Guarantee{
			{Source: closedform.Prop37Source, Release: release, Reason: why, Checks: []closedform.Check{{Name: "Assumption 3.6", Holds: false, Detail: reason}}},
			{Source: closedform.Prop310Source, Release: release, Reason: why, Checks: []closedform.Check{{Name: "Assumptions 3.8, 3.9", Holds: false, Detail: reason}}},
		}
	}
	s37, s310 := pair.Prop37Spec(), pair.Prop310Spec()
	note := "for the audited pair only (the paper's constants are suprema over all adjacent pairs); η (Prop. 3.7) and C (Prop. 3.10) are chosen per ε to minimise δ"
	return []closedform.Guarantee{
		{Source: closedform.Prop37Source, Release: release, Applies: true, Checks: append(checks[:len(checks):len(checks)], closedform.Check{
			Name: "Assumption 3.6 (independent chains)", Holds: true,
			Detail: fmt.Sprintf("A_D − A_D′ ~ N(%.6g, %.6g²), δ̃(η) = P(|A_D − A_D′| > η)", pair.MeanD-pair.MeanDPrime, math.Sqrt(pair.VarD+pair.VarDPrime))}),
			Profile: func(eps float64) float64 { d, _ := pair.Prop37(eps); return d }, Spec: &s37, Note: note},
		{Source: closedform.Prop310Source, Release: release, Applies: true, Checks: append(checks[:len(checks):len(checks)],
			closedform.Check{Name: "Assumption 3.8", Holds: true,
				Detail: fmt.Sprintf("δ̃(C) = max over D, D′ of P(|A − π(f)| > C); bias A_D − π_D(f) = %.6g, A_D′ − π_D′(f) = %.6g", pair.MeanD-pair.PiD, pair.MeanDPrime-pair.PiDPrime)},
			closedform.Check{Name: "Assumption 3.9", Holds: true, Detail: fmt.Sprintf("γ_f = |π_D(f) − π_D′(f)| = %.6g; η = 2C + γ_f", pair.GammaF())}),
			Profile: func(eps float64) float64 { d, _ := pair.Prop310(eps); return d }, Spec: &s310, Note: note},
	}
}

// estimatorPair computes the ergodic average's exact law on D and D′ for
// ULA / full-batch SGLD on a conjugate Gaussian model (the LinearLangevin
// chains of convergence.go), with the checks that say so.
func (e *Estimator) estimatorPair(p dataset.Pair) (*closedform.EstimatorPair, []closedform.Check, string) {
	c := e.Chain
	st := SettingOf(c.Model, p, e.Spec.To)
	st.Init = c.Init
	h, noise, desc, reason := langevinStep(c.Sampler, st)
	if reason != "" {
		return nil, nil, reason
	}
	gp, ok := c.Model.(GaussianPosterior)
	if !ok {
		return nil, nil, fmt.Sprintf("model %s: the ergodic average's law is known only on the Gaussian-mean and linear-regression models", c.Model.Name())
	}
	if p.D == nil || p.DPrime == nil || p.D.Virtual > 0 || p.DPrime.Virtual > 0 {
		return nil, nil, "the datasets are not materialised"
	}
	if len(e.Spec.F) != c.Model.Dim() {
		return nil, nil, "f has the wrong dimension"
	}
	var initMean []float64
	var initVar float64
	switch mod := c.Model.(type) {
	case *Gauss:
		if c.Init.FromPrior {
			initMean, initVar = mod.PriorMean(), mod.PriorSD()*mod.PriorSD()
		}
	case LinReg:
		if c.Init.FromPrior {
			initVar = 1 / mod.Alpha
		}
	}
	if !c.Init.FromPrior {
		initMean = c.Init.Theta
	}
	out := &closedform.EstimatorPair{Noise: e.Spec.noise()}
	for i, d := range []*dataset.Dataset{p.D, p.DPrime} {
		m, cov, err := gp.Posterior(d)
		if err != nil {
			return nil, nil, "posterior: " + err.Error()
		}
		ll := closedform.LinearLangevin{Step: h, NoiseVar: noise, Mean: m, Cov: cov, InitMean: initMean, InitVar: initVar}
		mean, v, err := ll.ErgodicAverage(e.Spec.F, e.Spec.From, e.Spec.To)
		if err != nil {
			return nil, nil, err.Error()
		}
		var pi float64
		for j, w := range e.Spec.F {
			pi += w * m[j]
		}
		if i == 0 {
			out.MeanD, out.VarD, out.PiD = mean, v, pi
		} else {
			out.MeanDPrime, out.VarDPrime, out.PiDPrime = mean, v, pi
		}
	}
	checks := []closedform.Check{
		{Name: "ergodic average Gaussian, exact mean and variance", Holds: true,
			Detail: fmt.Sprintf("%s on %s, f linear: A_D ~ N(%.6g, %.6g²), A_D′ ~ N(%.6g, %.6g²); π_D(f) = %.6g, π_D′(f) = %.6g",
				desc, c.Model.Name(), out.MeanD, math.Sqrt(out.VarD), out.MeanDPrime, math.Sqrt(out.VarDPrime), out.PiD, out.PiDPrime)},
		{Name: "Assumption 3.5", Holds: true, Detail: noiseDetail(e.Spec)},
	}
	return out, checks, ""
}

// noiseDetail states Assumption 3.5 for the noise.
func noiseDetail(s EstimatorSpec) string {
	if s.Laplace > 0 {
		return fmt.Sprintf("L ~ Laplace(%g): (ε, max(0, 1 − e^{(ε − η/%g)/2}))-DP for shifts ≤ η, so (η/%g, 0) (Dwork et al. 2006)", s.Laplace, s.Laplace, s.Laplace)
	}
	return fmt.Sprintf("L ~ N(0, %g²): (η/%g)-GDP for shifts ≤ η (Dong, Roth & Su 2019, Thm 2.7)", s.Gaussian, s.Gaussian)
}
