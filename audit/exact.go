package audit

import (
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

// ExactEpsilons returns, for the interim-region counterexample run exactly
// as Heller & Fetaya analyse it — cyclic SGLD with batch 1, a constant step,
// no clipping, the chain started from the prior, 1-D linear regression on
// D1/D2 — the exact ε at the audit's δ of every release point (the
// hockey-stick privacy profile of closedform, rounded down by its error
// bound), so that reports can set the audit's lower bounds against the
// truth. ok is false for any other scenario, or when δ = 0.
func ExactEpsilons(p *Plan) (eps []float64, ok bool) {
	c := p.Config
	ce := c.Data.Counterexample
	lr := c.Model.LinReg
	if ce == nil || lr == nil || c.Audit.Delta <= 0 || !c.Init.FromPrior {
		return nil, false
	}
	var model closedform.Counterexample
	switch s := p.Sampler.(type) {
	case mechanisms.ExactSampler:
		model = s.E.Model
	case *mechanisms.SGLD:
		if s.Batch != 1 || s.Scheme != mechanisms.Cyclic || s.Step.Gamma != 0 || s.Clip != 0 ||
			(s.NoiseVariance != 0 && s.NoiseVariance != 1) {
			return nil, false
		}
		model = closedform.Counterexample{N: ce.N, Alpha: lr.Alpha, Beta: lr.Beta, XH: ce.XH, C: ce.C, Eta: s.Step.Eta}
	default:
		return nil, false
	}
	if model.Validate() != nil {
		return nil, false
	}
	for _, pt := range p.Points {
		if pt.Iteration%ce.N != 0 {
			return nil, false
		}
		cv, err := model.Curves(pt.Iteration/ce.N, c.Audit.Delta)
		if err != nil {
			return nil, false
		}
		eps = append(eps, cv.Profile.Epsilon)
	}
	return eps, true
}
