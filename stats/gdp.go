package stats

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"gonum.org/v1/gonum/mathext"
)

// GDPAssumption labels ε values obtained from a μ by the GDP profile: they
// hold only if the mechanism's trade-off curve has the Gaussian shape.
const GDPAssumption = "a Gaussian (μ-GDP) trade-off curve; μ_lb itself is a rigorous bound"

// GDPTradeoff returns the μ-GDP trade-off function (Dong, Roth & Su 2019,
// Def. 2.7): the smallest false-negative rate any test can have at
// false-positive rate fpr, G_μ(fpr) = Φ(Φ⁻¹(1−fpr) − μ).
func GDPTradeoff(mu, fpr float64) float64 {
	return numeric.NormCDF(-mathext.NormalQuantile(fpr) - mu)
}

// GDPLogDelta returns ln δ(ε) for μ-GDP, where (Dong, Roth & Su 2019,
// Cor. 2.13; Räisä et al. Thm 2.4)
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2).
//
// It is computed as ln Φ(a) + ln(1 − exp(ε + ln Φ(b) − ln Φ(a))) so that it
// stays accurate when δ is far below the float64 range. μ = 0 gives −Inf.
func GDPLogDelta(mu, eps float64) float64 {
	if mu == 0 {
		return math.Inf(-1)
	}
	a := -eps/mu + mu/2
	b := -eps/mu - mu/2
	la, lb := numeric.LogNormCDF(a), numeric.LogNormCDF(b)
	x := eps + lb - la
	if x >= 0 { // only through rounding, when δ is at the precision floor
		return math.Inf(-1)
	}
	return la + numeric.Log1mExp(x)
}

// GDPDelta returns δ(ε) for μ-GDP; see GDPLogDelta.
func GDPDelta(mu, eps float64) float64 { return math.Exp(GDPLogDelta(mu, eps)) }

// GDPEpsilon returns the smallest ε ≥ 0 with δ(ε) ≤ δ for μ-GDP, found by
// Brent's method on ln δ(ε) − ln δ, which is decreasing in ε; the bracket
// is grown geometrically, so any ε representable in float64 is reached.
func GDPEpsilon(mu, delta float64) (float64, error) {
	if !(mu >= 0) || math.IsInf(mu, 1) {
		return math.NaN(), fmt.Errorf("mu: must be finite and ≥ 0, got %g", mu)
	}
	if !(delta > 0 && delta < 1) {
		return math.NaN(), fmt.Errorf("delta: must be in (0, 1) for a GDP conversion, got %g", delta)
	}
	target := math.Log(delta)
	f := func(eps float64) float64 { return GDPLogDelta(mu, eps) - target }
	if mu == 0 || f(0) <= 0 {
		return 0, nil
	}
	hi := math.Max(1, mu*mu/2+mu*math.Sqrt(-2*target))
	for f(hi) > 0 {
		hi *= 2
		if math.IsInf(hi, 0) {
			return math.Inf(1), fmt.Errorf("stats: GDP ε(δ) overflows for μ = %g, δ = %g", mu, delta)
		}
	}
	return numeric.Root(f, 0, hi, 1e-14*hi)
}

// GDPMuLowerBound returns the rigorous lower bound on the GDP parameter μ
// implied by the counts at the given confidence:
//
//	μ_lb = max(0, Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)),
//
// with FPR_ub, FNR_ub the one-sided Clopper–Pearson upper bounds at tail
// level α/2 each. It inverts the trade-off FNR ≥ Φ(Φ⁻¹(1−FPR) − μ), which is
// symmetric in the two rates, and is clamped at 0 — never an absolute value,
// which would turn a worse-than-chance attack into spurious leakage.
func GDPMuLowerBound(c Counts, confidence float64) (mu, fprUB, fnrUB float64, err error) {
	if err = c.Validate(); err != nil {
		return
	}
	if err = CheckConfidence(confidence); err != nil {
		return
	}
	a := (1 - confidence) / 2
	fprUB = cpUpper(c.FP, c.Negatives, a)
	fnrUB = cpUpper(c.FN, c.Positives, a)
	// Φ⁻¹(1 − p) is computed as −Φ⁻¹(p) to keep precision for tiny p.
	mu = -mathext.NormalQuantile(fprUB) - mathext.NormalQuantile(fnrUB)
	if !(mu > 0) {
		mu = 0
	}
	return
}

// GDPBound returns μ_lb (in Mu) and the ε(δ) it implies under a Gaussian
// trade-off curve; the Estimate's Assumption says so. Use it next to, never
// instead of, RegionBound.
func GDPBound(c Counts, delta, confidence float64) (Estimate, error) {
	if err := checkCountsDeltaConf(c, delta, confidence); err != nil {
		return Estimate{}, err
	}
	mu, fpr, fnr, err := GDPMuLowerBound(c, confidence)
	if err != nil {
		return Estimate{}, err
	}
	eps := 0.0
	if delta > 0 {
		if eps, err = GDPEpsilon(mu, delta); err != nil {
			return Estimate{}, err
		}
	} else if mu > 0 {
		eps = math.Inf(1) // μ-GDP with μ > 0 is not (ε, 0)-DP for any finite ε
	}
	return Estimate{
		Kind: LowerBound, Estimator: EstimatorGDP, Epsilon: eps, Delta: delta,
		Confidence: confidence, Counts: c, FPR: fpr, FNR: fnr,
		Mu: mu, Assumption: GDPAssumption,
	}, nil
}
