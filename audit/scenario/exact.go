package scenario

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// exactEpsilons returns the exact ε at the audit's δ of every release
// point where it is known — a μ-GDP path under the path threat model, or
// the interim-region counterexample (the hockey-stick privacy profile of
// closedform, rounded down by its error bound) — so that reports can set
// the audit's lower bounds against the truth, and where it comes from for
// the report's legend. It is nil for any other scenario, or when δ = 0.
func exactEpsilons(c *Config, p *Plan, points []mechanisms.ReleasePoint) ([]float64, string) {
	if eps := gaussianPathEpsilons(c, p, points); eps != nil {
		return eps, "under the path threat model, of the μ-GDP path (a composition of Gaussian shift tests; Dong, Roth & Su 2019, Cor. 3.3)"
	}
	if eps := pathExact(c, p, points); eps != nil {
		return eps, "under the path threat model, of the composition of the per-step pair of laws of the released statistic (PLD accountant, pessimistic grid)"
	}
	return counterexampleEpsilons(c, p, points), ""
}

// counterexampleEpsilons returns, for the interim-region counterexample
// run exactly as Heller & Fetaya analyse it — cyclic SGLD with batch 1, a
// constant step, no clipping, the chain started from the prior, 1-D linear
// regression on D1/D2 — the exact ε at the audit's δ of every release
// point; nil otherwise.
func counterexampleEpsilons(c *Config, p *Plan, points []mechanisms.ReleasePoint) []float64 {
	ce := c.Data.Counterexample
	lr := c.Model.LinReg
	if ce == nil || lr == nil || c.Audit.Delta <= 0 || !c.Init.FromPrior {
		return nil
	}
	var model closedform.Counterexample
	switch {
	case c.Sampler.ExactCyclicSGLD != nil:
		model = p.Mechanism.(*mechanisms.ExactCounterexample).Model
	case c.Sampler.SGLD != nil:
		s := c.Sampler.SGLD
		if s.Batch != 1 || s.Scheme != mechanisms.Cyclic || s.Step.Gamma != 0 || s.Clip != 0 ||
			(s.NoiseVariance != 0 && s.NoiseVariance != 1) || s.Plant != nil {
			return nil
		}
		model = closedform.Counterexample{N: ce.N, Alpha: lr.Alpha, Beta: lr.Beta, XH: ce.XH, C: ce.C, Eta: s.Step.Eta}
	default:
		return nil
	}
	if model.Validate() != nil {
		return nil
	}
	var eps []float64
	for _, pt := range points {
		if pt.Iteration%ce.N != 0 {
			return nil
		}
		cv, err := model.Curves(pt.Iteration/ce.N, c.Audit.Delta)
		if err != nil {
			return nil
		}
		eps = append(eps, cv.Profile.Epsilon)
	}
	return eps
}

// gaussianPathEpsilons returns, under the path threat model, the exact ε
// at the audit's δ of every release point when the path is a composition
// of Gaussian shift tests (mechanisms.Chain.PathMu): the μ-GDP profile's ε
// (Dong, Roth & Su 2019, Cor. 2.13). Nil otherwise, or when δ = 0.
func gaussianPathEpsilons(c *Config, p *Plan, points []mechanisms.ReleasePoint) []float64 {
	ch, ok := p.Mechanism.(*mechanisms.Chain)
	if !ok || ch.Path == nil || c.Audit.Delta <= 0 {
		return nil
	}
	eps := make([]float64, len(points))
	for k, pt := range points {
		mu, ok := ch.PathMu(p.Pair.D, pt.Iteration)
		if !ok {
			return nil
		}
		if eps[k], _ = stats.GDPEpsilon(mu, c.Audit.Delta); math.IsInf(eps[k], 0) || math.IsNaN(eps[k]) {
			return nil
		}
	}
	return eps
}
