package closedform

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// PureDPProfile returns the tightest privacy profile implied by pure
// (ε₀, 0)-DP alone:
//
//	δ(ε) = max(0, (e^{ε₀} − e^ε)/(1 + e^{ε₀})).
//
// An (ε₀, 0)-DP pair of output laws is a post-processing of randomized
// response with parameter ε₀ (Kairouz, Oh & Viswanath 2015, Thm 2.1), whose
// hockey-stick divergence is exactly this δ(ε); randomized response attains
// it, so no smaller profile follows from ε₀ alone. It is below the cruder
// 1 − e^{ε−ε₀} for every ε < ε₀ and is 0 for ε ≥ ε₀.
func PureDPProfile(eps0 float64) func(float64) float64 {
	return func(eps float64) float64 {
		if eps >= eps0 {
			return 0
		}
		// (e^{ε₀} − e^ε)/(1 + e^{ε₀}) = −expm1(ε − ε₀)/(1 + e^{−ε₀}).
		return -math.Expm1(eps-eps0) / (1 + math.Exp(-eps0))
	}
}

// PureDPRDP returns the tightest RDP curve implied by pure (ε₀, 0)-DP: the
// Rényi divergence of randomized response, p = e^{ε₀}/(1 + e^{ε₀}), q = 1 − p,
//
//	D_α = ln(p^α q^{1−α} + q^α p^{1−α})/(α − 1) = ε₀ + ln(1 − q(1 − e^{−2(α−1)ε₀}))/(α − 1),
//
// an upper bound for every ε₀-DP pair by the post-processing argument of
// PureDPProfile and the data-processing inequality. It is ≤ ε₀ and tends to
// the KL divergence ε₀·tanh(ε₀/2) as α → 1.
func PureDPRDP(eps0 float64) stats.RDPCurve {
	q := 1 / (1 + math.Exp(eps0))
	return func(a float64) float64 {
		u := (a - 1) * eps0
		return eps0 + math.Log1p(q*math.Expm1(-2*u))/(a-1)
	}
}

// pureDPGuarantee wraps an ε₀-DP statement.
func pureDPGuarantee(source, release string, eps0 float64, note string) Guarantee {
	return Guarantee{
		Source: source, Release: release, Applies: true,
		Checks:  []Check{{Name: "|log p(x|θ)| ≤ B for every record x and every θ", Holds: true, Detail: "assumed by the caller"}},
		Profile: PureDPProfile(eps0),
		Spec:    ptr(PureSpec(eps0)),
		EpsilonAt: func(delta float64) float64 {
			// Smallest ε with (e^{ε₀} − e^ε)/(1 + e^{ε₀}) ≤ δ:
			// e^ε = e^{ε₀} − δ(1 + e^{ε₀}), i.e. ε = ε₀ + ln(1 − δ(1 + e^{−ε₀})).
			x := delta * (1 + math.Exp(-eps0))
			if x >= 1 {
				return 0
			}
			return math.Max(0, eps0+math.Log1p(-x))
		},
		RDP:  PureDPRDP(eps0),
		Note: note,
	}
}

func checkLogLikBound(b float64) error {
	if !(b >= 0) || math.IsInf(b, 1) {
		return fmt.Errorf("B: log-likelihood bound must be finite and ≥ 0, got %g", b)
	}
	return nil
}

// Posterior4B is the "one posterior sample" bound of Wang, Fienberg &
// Smola 2015: if |log p(x|θ)| ≤ B for every record x and every θ, releasing
// one exact draw from the posterior (any prior) is (4B, 0)-DP for datasets
// that differ by replacing one record. The argument: the two posteriors'
// density ratio is p(x|θ)/p(x′|θ) · Z_{D′}/Z_D; the first factor lies in
// [e^{−2B}, e^{2B}], and so does the ratio of normalising constants, which
// is a posterior expectation of the same likelihood ratio. The profile is
// the tightest one implied by pure 4B-DP (PureDPProfile): δ(ε) = 0 for
// ε ≥ 4B and (e^{4B} − e^ε)/(1 + e^{4B}) below, never the vacuous 1.
//
// The guarantee is for the exact posterior; an MCMC sampler inherits it only
// up to its distance to the posterior (Bertazzi et al. Prop. 3.2).
func Posterior4B(b float64) (Guarantee, error) {
	if err := checkLogLikBound(b); err != nil {
		return Guarantee{}, err
	}
	return pureDPGuarantee("Wang, Fienberg & Smola 2015, one posterior sample (4B bound)",
		"one exact posterior draw", 4*b,
		fmt.Sprintf("pure ε₀ = 4B = %g-DP, replace-one adjacency", 4*b)), nil
}

// PosteriorAddRemove2B is Posterior4B for datasets that differ by adding or
// removing one record: the density ratio is p(x|θ)·Z_D/Z_{D∪{x}}, both
// factors in [e^{−B}, e^{B}], so one posterior draw is (2B, 0)-DP. (Same
// argument as Wang, Fienberg & Smola 2015, under the other adjacency.)
func PosteriorAddRemove2B(b float64) (Guarantee, error) {
	if err := checkLogLikBound(b); err != nil {
		return Guarantee{}, err
	}
	return pureDPGuarantee("Wang, Fienberg & Smola 2015 argument, add/remove-one (2B bound)",
		"one exact posterior draw", 2*b,
		fmt.Sprintf("pure ε₀ = 2B = %g-DP, add/remove-one adjacency", 2*b)), nil
}
