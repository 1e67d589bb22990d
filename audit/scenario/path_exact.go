package scenario

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

// stepPairer is implemented by the samplers whose path, under the path
// threat model, is the composition of one pair of laws of a released
// statistic, the same at every step (mechanisms.DPBarker,
// mechanisms.SGLD with a constant step and subsampled batches).
type stepPairer interface {
	PathStepPair(spec *mechanisms.PathSpec, m mechanisms.Model) (p, q closedform.GaussMix2, ok bool)
}

// pathExact returns the exact ε at the audit's δ of the path at each
// release point, where it is known: the DP Barker test under the path
// threat model, whose per-iteration pair of laws of the released statistic
// (mechanisms.DPBarker.PathStepPair) composed over the iterations up to the
// release by the PLD accountant (closedform.MixturePLD) gives the path's
// privacy profile (docs/derivations/path-barker.md). nil when unknown: another
// sampler or threat model, a planted bug (the exact ε would be the
// declared sampler's, not the one that runs), or a pair that changes from
// step to step.
func pathExact(c *Config, p *Plan, pts []mechanisms.ReleasePoint) []float64 {
	ch, ok := p.Mechanism.(*mechanisms.Chain)
	if !c.path() || !ok || ch.Path == nil || !(c.Audit.Delta > 0) {
		return nil
	}
	s, ok := ch.Sampler.(stepPairer)
	if pl, planted := ch.Sampler.(mechanisms.Planter); !ok || planted && pl.Planted() != nil {
		return nil
	}
	pd, qd, ok := s.PathStepPair(ch.Path, ch.Model)
	if !ok {
		return nil
	}
	acc, err := closedform.MixturePLD(pd, qd, nil)
	if err != nil {
		return nil
	}
	eps := make([]float64, 0, len(pts))
	for _, pt := range pts {
		if pt.Iteration < 1 {
			return nil
		}
		pr, err := acc.Profile(pt.Iteration)
		if err != nil {
			return nil
		}
		e := pr.Epsilon(c.Audit.Delta)
		if math.IsInf(e, 0) || math.IsNaN(e) {
			return nil
		}
		eps = append(eps, e)
	}
	return eps
}
