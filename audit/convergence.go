package audit

import (
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// ConvergenceSource cites the theoretical lower bound that reports set
// beside the audit's empirical ε_lb.
const ConvergenceSource = "Bertazzi et al. 2025, Prop. 3.3 / A.3 (lower bound from convergence)"

// ConvergenceNote says in reports what the convergence lower bound is and
// is not.
const ConvergenceNote = "a theoretical lower bound from convergence, not an empirical one (no runs, no confidence): " +
	"the posteriors on D and D′ are not (ε, δ′(ε))-DP (their exact profile, less its numerical error) and each release is " +
	"within β of its posterior in total variation (a certified bound on its closed-form law), so the release is not " +
	"(ε, δ′(ε) − (1 + e^ε)β)-DP; the ε shown is the largest with δ′(ε) − (1 + e^ε)β > δ; \"—\" where it proves nothing"

// ConvergenceBound is Bertazzi et al. Prop. 3.3 / A.3 at one release
// point: the ε below which the release is proved not (ε, δ)-DP from the
// posteriors' exact profile and the release's certified total variation
// distance to them. It is a theorem about the sampler on the audited pair,
// computed without the runs.
type ConvergenceBound struct {
	// Source is ConvergenceSource: the bound is theoretical, not the
	// audit's.
	Source string `json:"source"`
	// Epsilon: the release is not (ε′, δ)-DP for any ε′ < Epsilon; nil
	// when the proposition proves nothing here (Reason says why).
	Epsilon *stats.JSONFloat `json:"epsilon,omitempty"`
	// BetaD and BetaDPrime are the certified TV bounds on D and D′ (0 when
	// the release's law is not known).
	BetaD      float64 `json:"beta_d,omitempty"`
	BetaDPrime float64 `json:"beta_dprime,omitempty"`
	// Reason says why there is no bound at this point.
	Reason string `json:"reason,omitempty"`
}

// ConvergenceLowerBounds evaluates Prop. 3.3 / A.3 at δ for every release
// point of m on the pair p (mechanisms.TransferOf: ULA and full-batch SGLD
// on the conjugate Gaussian models, the interim-region counterexample). It
// returns nil when no point's law is known in closed form, so that
// reports show the column only where the proposition can say something.
func ConvergenceLowerBounds(m mechanisms.Mechanism, p dataset.Pair, points []mechanisms.ReleasePoint, delta float64) []ConvergenceBound {
	if m == nil || !(delta > 0) || delta >= 1 {
		return nil
	}
	out := make([]ConvergenceBound, len(points))
	known := false
	for k, pt := range points {
		out[k].Source = ConvergenceSource
		t, reason := mechanisms.TransferOf(m, p, pt)
		if t == nil {
			out[k].Reason = reason
			continue
		}
		known = true
		out[k].BetaD, out[k].BetaDPrime = t.BetaD.Value, t.BetaDPrime.Value
		eps, ok := t.NotDPEpsilon(delta)
		if !ok {
			out[k].Reason = fmt.Sprintf("proves nothing at δ = %g: the posteriors' δ′(0) − 2β is not above δ (β = %.6g)", delta, t.Beta())
			continue
		}
		v := stats.JSONFloat(eps)
		out[k].Epsilon = &v
	}
	if !known {
		return nil
	}
	return out
}

// HasConvergenceBound reports whether the report carries Prop. 3.3's
// lower bound at its points.
func (r *Report) HasConvergenceBound() bool {
	return len(r.Points) > 0 && r.Points[0].Convergence != nil
}
