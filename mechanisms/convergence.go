package mechanisms

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Transfer is what Bertazzi et al. §3.1 needs for one release on one
// adjacent pair: certified bounds on the total variation distance between
// the released law and the posterior on D and on D′, and the posteriors'
// exact privacy profile. Prop. 3.2 (i) turns them into an upper bound on
// the release's privacy, Prop. 3.3 into a lower bound.
type Transfer struct {
	// BetaD and BetaDPrime bound ‖law of the release − posterior‖_TV on D
	// and on D′.
	BetaD, BetaDPrime closedform.TVBound
	// Posterior is the posteriors' exact profile on the pair.
	Posterior closedform.GaussianPairProfile
	// Checks are the assumptions verified, with their numbers.
	Checks []closedform.Check
}

// Beta returns max(β_D, β_D′), the β of Props. A.2 and A.3 for the pair.
func (t *Transfer) Beta() float64 { return math.Max(t.BetaD.Value, t.BetaDPrime.Value) }

// Guarantee returns Prop. 3.2 (i) / A.2 for the release.
func (t *Transfer) Guarantee(release string) closedform.Guarantee {
	note := fmt.Sprintf("for the audited pair only; β = max(β_D, β_D′) = %.6g — D: %s; D′: %s. Posterior: %s",
		t.Beta(), t.BetaD.Method, t.BetaDPrime.Method, t.Posterior.Note)
	g := closedform.TransferGuarantee(release, t.Posterior.Upper, t.Beta(), t.Checks, note)
	if t.Posterior.Spec != nil {
		s := closedform.TransferSpec(t.Beta(), *t.Posterior.Spec)
		g.Spec = &s
	}
	return g
}

// NotDPEpsilon returns the ε that Prop. 3.3 / A.3 proves the release does
// not satisfy at δ (see closedform.NotDPEpsilon).
func (t *Transfer) NotDPEpsilon(delta float64) (float64, bool) {
	return closedform.NotDPEpsilon(t.Posterior.Lower, t.Beta(), delta)
}

// TransferOf returns the convergence-transfer ingredients for the release
// at point at of mechanism m on the pair p, or the reason they cannot be
// computed rigorously. They exist where the released law is known in closed
// form: ULA and full-batch SGLD (no clipping, no projection, constant step)
// on the Gaussian-mean and linear-regression models started from the prior
// or a fixed point, whose law at step n is Gaussian with an exact mean and
// covariance; and the interim-region counterexample sampled exactly.
func TransferOf(m Mechanism, p dataset.Pair, at ReleasePoint) (*Transfer, string) {
	switch c := m.(type) {
	case *Chain:
		if why := runLawDiffers(c.Sampler); why != "" {
			return nil, why
		}
		st := SettingOf(c.Model, p, at.Iteration)
		st.Init = c.Init
		return samplerTransfer(c.Sampler, st)
	case *ExactCounterexample:
		return counterexampleTransfer(c.Model, at.Iteration)
	}
	return nil, fmt.Sprintf("the law of %s's release is not known in closed form", NameOf(m))
}

// runLawDiffers says why the law of what s releases is not the law of the
// sampler it declares ("" when it is): a planted bug, or SGLD with a noise
// variance other than the algorithm's. TransferOf describes the releases
// themselves (a lower bound on their ε is computed from it), so it refuses
// these; the guarantees keep the declared sampler (convergenceGuarantee).
func runLawDiffers(s Sampler) string {
	if p, ok := s.(Planter); ok && len(p.Planted().parts()) > 0 {
		return fmt.Sprintf("a planted bug (%s): the releases' law is not the declared sampler's", strings.Join(p.Planted().parts(), ", "))
	}
	if v, ok := s.(*SGLD); ok && v.NoiseVariance != 0 && v.NoiseVariance != 1 {
		return fmt.Sprintf("noise_variance %g: the releases' law is not the algorithm's", v.NoiseVariance)
	}
	return ""
}

// convergenceGuarantee is Prop. 3.2 (i) for a sampler in a setting, or why
// it does not apply.
func convergenceGuarantee(s Sampler, st Setting) closedform.Guarantee {
	t, reason := samplerTransfer(s, st)
	if t == nil {
		return uncovered(closedform.Prop32Source, reason)
	}
	return t.Guarantee(fmt.Sprintf("state after %d iterations", st.Iterations))
}

// langevinStep returns h and σ² of the sampler as a LinearLangevin chain.
func langevinStep(s Sampler, st Setting) (h, noise float64, desc, reason string) {
	switch v := s.(type) {
	case *ULA:
		if v.Radius > 0 {
			return 0, 0, "", "projected ULA: the projection makes the law at step n non-Gaussian"
		}
		return v.Gamma, 2 * v.Gamma, fmt.Sprintf("ULA, γ = %g", v.Gamma), ""
	case *SGLD:
		switch {
		case v.Clip > 0:
			return 0, 0, "", "clipped SGLD: clipping makes the law at step n non-Gaussian"
		case v.Step.Gamma != 0:
			return 0, 0, "", "a decaying step (sampler.step.gamma > 0) is not covered"
		case v.Scheme == WithReplacement || v.Scheme == Poisson:
			return 0, 0, "", fmt.Sprintf("minibatches drawn %s: the law at step n is a mixture, not known in closed form", v.Scheme)
		}
		for _, d := range []*dataset.Dataset{st.Pair.D, st.Pair.DPrime} {
			if d != nil && d.Len() != v.Batch {
				return 0, 0, "", fmt.Sprintf("minibatches of %d out of %d records: the law at step n is a mixture, not known in closed form (full batches are)", v.Batch, d.Len())
			}
		}
		return v.Step.Eta / 2, v.Step.Eta, fmt.Sprintf("full-batch SGLD, η = %g (nominal noise variance)", v.Step.Eta), ""
	}
	return 0, 0, "", fmt.Sprintf("the law of %s at step n is not known in closed form", s.Name())
}

// samplerTransfer computes Transfer for ULA / full-batch SGLD on a
// conjugate Gaussian model, whose score is exactly S⁻¹(m − θ).
func samplerTransfer(s Sampler, st Setting) (*Transfer, string) {
	if c, ok := counterexampleOf(s, st); ok {
		return counterexampleTransfer(c, st.Iterations)
	}
	h, noise, desc, reason := langevinStep(s, st)
	if reason != "" {
		return nil, reason
	}
	var initMean []float64
	var initVar float64
	switch mod := st.Model.(type) {
	case *Gauss:
		if st.Init.FromPrior {
			initMean, initVar = mod.PriorMean(), mod.PriorSD()*mod.PriorSD()
		}
	case LinReg:
		if st.Init.FromPrior {
			initVar = 1 / mod.Alpha
		}
	default:
		return nil, fmt.Sprintf("model %s: its score is not known to be linear with a Gaussian posterior", st.Model.Name())
	}
	if !st.Init.FromPrior {
		initMean = st.Init.Theta
	}
	if st.Pair.D == nil || st.Pair.DPrime == nil {
		return nil, "the adjacent datasets are not known here"
	}
	if st.Pair.D.Virtual > 0 || st.Pair.DPrime.Virtual > 0 {
		return nil, "the datasets are not materialised, so their posteriors are not computed here"
	}
	gp := st.Model.(GaussianPosterior)
	t := &Transfer{}
	var means, covs [2][]float64
	for i, d := range []*dataset.Dataset{st.Pair.D, st.Pair.DPrime} {
		m, c, err := gp.Posterior(d)
		if err != nil {
			return nil, "posterior: " + err.Error()
		}
		means[i], covs[i] = m, c
		ch := closedform.LinearLangevin{Step: h, NoiseVar: noise, Mean: m, Cov: c, InitMean: initMean, InitVar: initVar}
		b, err := ch.TVToTarget(st.Iterations)
		if err != nil {
			return nil, err.Error()
		}
		if i == 0 {
			t.BetaD = b
		} else {
			t.BetaDPrime = b
		}
	}
	dm := make([]float64, len(means[0]))
	for i := range dm {
		dm[i] = means[0][i] - means[1][i]
	}
	prof, err := closedform.NewGaussianPairProfile(dm, covs[0], covs[1])
	if err != nil {
		return nil, err.Error()
	}
	t.Posterior = prof
	start := "a fixed point"
	if st.Init.FromPrior {
		start = "the prior"
	}
	t.Checks = []closedform.Check{
		{Name: "law at step n Gaussian, exact recursion", Holds: true,
			Detail: fmt.Sprintf("%s on %s (score S⁻¹(m − θ)), started from %s", desc, st.Model.Name(), start)},
		{Name: "‖ν_D P^n − π_D‖_TV ≤ β_D", Holds: true, Detail: fmt.Sprintf("β_D = %.6g after %d iterations", t.BetaD.Value, st.Iterations)},
		{Name: "‖ν_D′ P^n − π_D′‖_TV ≤ β_D′", Holds: true, Detail: fmt.Sprintf("β_D′ = %.6g after %d iterations", t.BetaDPrime.Value, st.Iterations)},
		{Name: "posterior pair's (ε, δ) known", Holds: true, Detail: prof.Note},
	}
	return t, ""
}

// counterexampleTransfer computes Transfer for the exact counterexample
// sampler at an epoch boundary.
func counterexampleTransfer(c closedform.Counterexample, iteration int) (*Transfer, string) {
	if iteration%c.N != 0 {
		return nil, fmt.Sprintf("iteration %d is not an epoch boundary", iteration)
	}
	k := iteration / c.N
	b1, b2, err := c.PosteriorTV(k)
	if err != nil {
		return nil, err.Error()
	}
	prof, err := c.PosteriorPairProfile()
	if err != nil {
		return nil, err.Error()
	}
	t := &Transfer{BetaD: b1, BetaDPrime: b2, Posterior: prof}
	t.Checks = []closedform.Check{
		{Name: "law at step n known exactly", Holds: true,
			Detail: fmt.Sprintf("cyclic SGLD, batch 1, η = %g, from the prior: Gaussian on D1, mixture of n = %d Gaussians on D2", c.Eta, c.N)},
		{Name: "‖ν_D P^n − π_D‖_TV ≤ β_D", Holds: true, Detail: fmt.Sprintf("β_D = %.6g at epoch %d", b1.Value, k)},
		{Name: "‖ν_D′ P^n − π_D′‖_TV ≤ β_D′", Holds: true, Detail: fmt.Sprintf("β_D′ = %.6g at epoch %d", b2.Value, k)},
		{Name: "posterior pair's (ε, δ) known", Holds: true, Detail: prof.Note},
	}
	return t, ""
}

// counterexampleOf recognises Heller & Fetaya's counterexample run by plain
// SGLD: cyclic order, batch 1, constant step, no clipping, the nominal
// noise, started from the prior of a 1-D linear regression, on D1 = n
// copies of (x_h, c·x_h) and D2 = D1 with one record replaced by
// (x_h/2, c·x_h/2). It returns false for anything else. c is read back as
// y/x_h, exact to an ulp.
func counterexampleOf(s Sampler, st Setting) (closedform.Counterexample, bool) {
	v, ok := s.(*SGLD)
	lr, ok2 := st.Model.(LinReg)
	if !ok || !ok2 || lr.D != 1 || v.Scheme != Cyclic || v.Batch != 1 || v.Step.Gamma != 0 || v.Clip != 0 ||
		(v.NoiseVariance != 0 && v.NoiseVariance != 1) || !st.Init.FromPrior {
		return closedform.Counterexample{}, false
	}
	n, x0, y0, ok := counterexamplePair(st.Pair.D, st.Pair.DPrime)
	if !ok {
		return closedform.Counterexample{}, false
	}
	c := closedform.Counterexample{N: n, Alpha: lr.Alpha, Beta: lr.Beta, XH: x0, C: y0 / x0, Eta: v.Step.Eta}
	return c, c.Validate() == nil
}

// counterexamplePair reports whether d1, d2 are the counterexample's pair
// (materialised, or dataset.VirtualCounterexamplePair) and returns n and
// the repeated record (x_h, c·x_h).
func counterexamplePair(d1, d2 *dataset.Dataset) (n int, x0, y0 float64, ok bool) {
	if d1 == nil || d2 == nil || d1.Len() != d2.Len() || len(d1.Records) < 1 || len(d2.Records) < len(d1.Records) {
		return 0, 0, 0, false
	}
	x0, y0 = d1.Records[0].X[0], d1.Records[0].Y
	if !(x0 > 0) || !(y0 > 0) {
		return 0, 0, 0, false
	}
	repeated := func(r dataset.Record) bool { return r.X[0] == x0 && r.Y == y0 }
	special := func(r dataset.Record) bool { return r.X[0] == x0/2 && r.Y == y0/2 }
	if d1.Virtual > 0 || d2.Virtual > 0 {
		// D1 holds the repeated record, D2 the repeated and the special one.
		ok = d1.Virtual == d2.Virtual && len(d1.Records) == 1 && len(d2.Records) == 2 &&
			repeated(d2.Records[0]) && special(d2.Records[1])
		return d1.Virtual, x0, y0, ok
	}
	specials := 0
	for i := range d1.Records {
		a, b := d1.Records[i], d2.Records[i]
		switch {
		case !repeated(a):
			return 0, 0, 0, false
		case special(b):
			specials++
		case !repeated(b):
			return 0, 0, 0, false
		}
	}
	return d1.Len(), x0, y0, specials == 1
}
