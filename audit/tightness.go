package audit

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Tightness says how much of the claimed upper bound the audit proves at
// the release the headline ε_lb comes from (Report.Headline, or under
// Bonferroni over the points the release of the largest bound): the
// ratio of the lower bound to the upper bound, in ε at the audit's δ and,
// where a claim is a μ-GDP profile, in μ — the figure Nasr et al. 2023
// ("Tight auditing of differentially private machine learning") report,
// here with a rigorous lower bound in the numerator. A ratio near 1 says
// the bound cannot be improved much; near 0, that the audit proves little
// of it.
type Tightness struct {
	// Epsilon is ε_lb / ε_ub, where ε_ub is the smallest ε at δ among the
	// claims covering the release (the tightest bound) and EpsilonClaim
	// names that claim. It is 0 when ε_lb is 0 and when ε_ub is +Inf (the
	// bound certifies nothing at δ).
	Epsilon      stats.JSONFloat `json:"epsilon"`
	EpsilonClaim string          `json:"epsilon_claim"`
	// Mu is μ_lb / μ for the smallest μ among the claims covering the
	// release whose profile there is μ-GDP (a GDP claim, or a theorem's
	// claim whose profile spec has kind "gdp"), and MuClaim names it; both
	// absent when no such claim covers it or the audit bounds no μ.
	Mu      *stats.JSONFloat `json:"mu,omitempty"`
	MuClaim string           `json:"mu_claim,omitempty"`
	// Exact is ε_lb over the release's exact ε at δ, where the report
	// carries it (PointResult.Exact).
	Exact *stats.JSONFloat `json:"exact,omitempty"`

	// Release indexes the release the figures are for; EpsilonUB and MuUB
	// are the denominators of Epsilon and Mu, MuLB the numerator of Mu
	// (for the text and HTML reports, which state them; the JSON report
	// has them in the release's row).
	Release   int     `json:"-"`
	EpsilonUB float64 `json:"-"`
	MuUB      float64 `json:"-"`
	MuLB      float64 `json:"-"`
}

// BoundRatio returns lb/ub, how much of an upper bound ub a lower bound lb
// proves: 0 when lb is not positive or ub is +Inf (a bound that
// certifies nothing is proved nothing of), +Inf when ub is 0 and lb
// positive (the bound is exceeded outright).
func BoundRatio(lb, ub float64) float64 {
	switch {
	case math.IsNaN(lb) || math.IsNaN(ub):
		return math.NaN()
	case lb <= 0 || math.IsInf(ub, 1):
		return 0
	case ub <= 0:
		return math.Inf(1)
	}
	return lb / ub
}

// TightestClaim returns the index (in Claims) of the claim covering the
// release with the smallest ε at δ — the first on a tie — and false when
// no claim covers it.
func (pr *PointResult) TightestClaim() (int, bool) {
	best := -1
	for i, c := range pr.Claims {
		if c.Covered && (best < 0 || float64(c.EpsilonAtDelta) < float64(pr.Claims[best].EpsilonAtDelta)) {
			best = i
		}
	}
	return best, best >= 0
}

// EpsilonTightness returns the release's ε_lb (EpsilonBound) over the
// tightest covering claim's ε at δ (BoundRatio), and false when no claim
// covers the release.
func (pr *PointResult) EpsilonTightness() (float64, bool) {
	i, ok := pr.TightestClaim()
	if !ok {
		return 0, false
	}
	return BoundRatio(pr.EpsilonBound().Epsilon, float64(pr.Claims[i].EpsilonAtDelta)), true
}

// hasMuBound reports whether the audit bounds μ at the release (the GDP
// estimator, or the one-run f-DP estimator in a canary design).
func (pr *PointResult) hasMuBound() bool {
	_, gdp := pr.Estimate(GDPEstimator{}.Name())
	_, fdp := pr.Estimate(OneRunFDPEstimator{}.Name())
	return gdp || fdp
}

// claimMu returns the μ of claim cl's profile at release k when that
// profile is μ-GDP: a GDP claim, or a theorem's claim whose spec there has
// kind "gdp".
func claimMu(cl Claim, k int) (float64, bool) {
	s := cl.Spec
	switch {
	case s == nil:
		return 0, false
	case s.Kind == "gdp":
		return s.Mu, true
	case s.Kind == "theorem" && k < len(s.Points) && s.Points[k] != nil && s.Points[k].Kind == "gdp":
		mu, ok := s.Points[k].Params["mu"]
		return float64(mu), ok
	}
	return 0, false
}

// tightness computes the report's Tightness at release h (the headline's:
// headlinePoint), or nil when no claim covers it.
func (a *Audit) tightness(r *Report, h int) *Tightness {
	if h < 0 || h >= len(r.Points) {
		return nil
	}
	pr := &r.Points[h]
	i, ok := pr.TightestClaim()
	if !ok {
		return nil
	}
	lb := r.Epsilon.Epsilon
	ub := float64(pr.Claims[i].EpsilonAtDelta)
	t := &Tightness{Release: h, Epsilon: stats.JSONFloat(BoundRatio(lb, ub)), EpsilonClaim: pr.Claims[i].Name, EpsilonUB: ub}
	if pr.hasMuBound() {
		mj := -1
		for j, cl := range a.claims {
			if mu, ok := claimMu(cl, h); ok && j < len(pr.Claims) && pr.Claims[j].Covered && (mj < 0 || mu < t.MuUB) {
				mj, t.MuUB = j, mu
			}
		}
		if mj >= 0 {
			t.MuLB = pr.MuBound().Mu
			m := stats.JSONFloat(BoundRatio(t.MuLB, t.MuUB))
			t.Mu, t.MuClaim = &m, a.claims[mj].Name
		}
	}
	if pr.Exact != nil {
		x := stats.JSONFloat(BoundRatio(lb, float64(*pr.Exact)))
		t.Exact = &x
	}
	return t
}
