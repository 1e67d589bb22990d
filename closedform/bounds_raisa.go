package closedform

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Sources of the Räisä et al. 2021 guarantees.
const (
	RaisaPenaltySource = "Räisä et al. 2021, Thm 2.4 (DP-penalty)"
	RaisaHMCSource     = "Räisä et al. 2021, Thm 3.5 (DP-HMC)"
)

// A note on parametrisation. Räisä et al. Thm 2.4 states the privacy profile
// of a composition of Gaussian mechanisms through the mean of its privacy
// loss distribution N(m, 2m), m = Σ Δ_i²/(2σ_i²), as
//
//	δ(ε) = ½·(erfc((ε − m)/(2√m)) − e^ε·erfc((ε + m)/(2√m))).
//
// That m is not the GDP parameter. With ½erfc(x) = Φ(−√2·x) the same profile
// is the μ-GDP profile of Dong, Roth & Su 2019 (Cor. 2.13) with
// μ = √(2m) = √(Σ Δ_i²/σ_i²), which is what the guarantees below carry and
// what stats.GDPDelta / stats.GDPEpsilon evaluate.

// RaisaPenalty is a DP-penalty sampler configuration (Yildirim & Ermis 2019,
// as analysed in Räisä et al. 2021, §3): an MH chain whose acceptance test
// adds N(0, σ_l²) noise to the sum of per-record log-likelihood ratios
// clipped at b_l‖θ′−θ‖, with σ_l = 2·TauL·b_l·‖θ′−θ‖.
type RaisaPenalty struct {
	// TauL is τ of the paper (noise scale, > 0). The clip bound b_l cancels:
	// each test is a Gaussian mechanism with sensitivity-to-noise ratio 1/τ.
	TauL float64
	// Iterations is the number k ≥ 0 of penalty tests (MH iterations), over
	// all chains run on the same data.
	Iterations int
}

// Validate checks the configuration; errors name the field and its range.
func (c RaisaPenalty) Validate() error {
	if err := fieldPositiveFinite("TauL", c.TauL); err != nil {
		return err
	}
	if c.Iterations < 0 {
		return fmt.Errorf("Iterations: must be ≥ 0, got %d", c.Iterations)
	}
	return gdpMuSquaredCap(float64(c.Iterations) * c.muSqPerIteration())
}

func (c RaisaPenalty) muSqPerIteration() float64 { return 1 / (c.TauL * c.TauL) }

// MuPLD returns the parameter m = k/(2τ²) of Räisä et al. Thm 2.4 (the mean
// of the privacy loss distribution; μ_i = 1/(2τ²) per test, §3).
func (c RaisaPenalty) MuPLD() float64 { return float64(c.Iterations) / (2 * c.TauL * c.TauL) }

// MuGDP returns the GDP parameter μ = √(2·MuPLD()) = √k/τ.
func (c RaisaPenalty) MuGDP() float64 {
	return math.Sqrt(float64(c.Iterations) * c.muSqPerIteration())
}

// Guarantee returns the μ-GDP guarantee of Räisä et al. 2021, Thm 2.4 with
// μ_i = 1/(2τ²) per iteration (§3), for the whole chain under substitute
// (replace-one) adjacency: profile stats.GDPDelta(μ, ε), RDP curve α·μ²/2.
func (c RaisaPenalty) Guarantee() (Guarantee, error) {
	if err := c.Validate(); err != nil {
		return Guarantee{}, err
	}
	checks := []Check{
		{Name: "τ > 0", Holds: true, Detail: fmt.Sprintf("τ = %g", c.TauL)},
		{Name: "k ≥ 0 iterations", Holds: true, Detail: fmt.Sprintf("k = %d", c.Iterations)},
	}
	note := fmt.Sprintf("μ-GDP with μ = √k/τ = %.6g (Thm 2.4's PLD mean m = μ²/2 = %.6g); "+
		"assumes clipped log-likelihood ratios (clip b_l‖θ′−θ‖) with noise σ_l = 2τb_l‖θ′−θ‖ "+
		"and a data-independent proposal", c.MuGDP(), c.MuPLD())
	return gaussianCompositionGuarantee(RaisaPenaltySource, "", c.MuGDP(), checks, note), nil
}

// Guarantees returns the guarantees that apply to the configuration: the one
// of Guarantee. Every sampler configuration of this package has this method.
func (c RaisaPenalty) Guarantees() ([]Guarantee, error) { return asGuaranteeList(c.Guarantee()) }

// MaxIterations returns the largest number of iterations k for which
// Thm 2.4 certifies (eps, delta)-DP, i.e. the largest k with
// δ_{μ(k)}(eps) ≤ delta, μ(k) = √k/τ. TauL must be valid; Iterations is ignored.
func (c RaisaPenalty) MaxIterations(eps, delta float64) (int, error) {
	if err := fieldPositiveFinite("TauL", c.TauL); err != nil {
		return 0, err
	}
	return gdpMaxSteps(c.muSqPerIteration(), eps, delta)
}

// RaisaHMC is a DP-HMC sampler configuration (Räisä et al. 2021, Alg. 1):
// per iteration, L leapfrog steps with L+1 evaluations of the clipped
// gradient sum plus N(0, 4b_g²τ_g²I) noise, then one penalty test with noise
// σ_l = 2τ_l·b_l·‖θ′−θ‖ on the clipped log-likelihood ratio sum.
type RaisaHMC struct {
	// TauL is τ_l (> 0), the noise scale of the penalty test.
	TauL float64
	// TauG is τ_g (> 0), the noise scale of the gradients; b_g cancels: each
	// gradient evaluation is a Gaussian mechanism with ratio 1/τ_g.
	TauG float64
	// Leapfrog is the number L ≥ 1 of leapfrog steps per iteration.
	Leapfrog int
	// Iterations is the number k ≥ 0 of iterations, over all chains.
	Iterations int
}

// Validate checks the configuration; errors name the field and its range.
func (c RaisaHMC) Validate() error {
	if err := c.validateNoise(); err != nil {
		return err
	}
	if c.Iterations < 0 {
		return fmt.Errorf("Iterations: must be ≥ 0, got %d", c.Iterations)
	}
	return gdpMuSquaredCap(float64(c.Iterations) * c.muSqPerIteration())
}

func (c RaisaHMC) validateNoise() error {
	if err := fieldPositiveFinite("TauL", c.TauL); err != nil {
		return err
	}
	if err := fieldPositiveFinite("TauG", c.TauG); err != nil {
		return err
	}
	if c.Leapfrog < 1 {
		return fmt.Errorf("Leapfrog: must be ≥ 1, got %d", c.Leapfrog)
	}
	return nil
}

// muSqPerIteration is μ² of one iteration: 1/τ_l² + (L+1)/τ_g².
func (c RaisaHMC) muSqPerIteration() float64 {
	return 1/(c.TauL*c.TauL) + float64(c.Leapfrog+1)/(c.TauG*c.TauG)
}

// MuPLD returns Räisä et al. Thm 3.5's μ = k/(2τ_l²) + k(L+1)/(2τ_g²), the
// privacy-loss-distribution mean of Thm 2.4 (not the GDP parameter).
func (c RaisaHMC) MuPLD() float64 {
	k := float64(c.Iterations)
	return k/(2*c.TauL*c.TauL) + k*float64(c.Leapfrog+1)/(2*c.TauG*c.TauG)
}

// MuGDP returns the GDP parameter μ = √(2·MuPLD()) = √(k·(1/τ_l² + (L+1)/τ_g²)).
func (c RaisaHMC) MuGDP() float64 {
	return math.Sqrt(float64(c.Iterations) * c.muSqPerIteration())
}

// Guarantee returns the μ-GDP guarantee of Räisä et al. 2021, Thm 3.5 for the
// whole chain under substitute (replace-one) adjacency: k penalty tests and
// k(L+1) gradient evaluations composed (Thm 2.4).
func (c RaisaHMC) Guarantee() (Guarantee, error) {
	if err := c.Validate(); err != nil {
		return Guarantee{}, err
	}
	checks := []Check{
		{Name: "τ_l, τ_g > 0", Holds: true, Detail: fmt.Sprintf("τ_l = %g, τ_g = %g", c.TauL, c.TauG)},
		{Name: "L ≥ 1 leapfrog steps (L+1 gradient evaluations per iteration)", Holds: true,
			Detail: fmt.Sprintf("L = %d, k = %d", c.Leapfrog, c.Iterations)},
	}
	note := fmt.Sprintf("μ-GDP with μ = √(k(1/τ_l² + (L+1)/τ_g²)) = %.6g (Thm 3.5's μ is the PLD mean "+
		"μ²/2 = %.6g); assumes Alg. 1: gradients clipped at b_g with noise N(0, 4b_g²τ_g²I) at all "+
		"L+1 evaluations, log-likelihood ratios clipped at b_l‖θ′−θ‖ with noise σ_l = 2τ_l b_l‖θ′−θ‖",
		c.MuGDP(), c.MuPLD())
	return gaussianCompositionGuarantee(RaisaHMCSource, "", c.MuGDP(), checks, note), nil
}

// Guarantees returns the guarantees that apply to the configuration: the one
// of Guarantee.
func (c RaisaHMC) Guarantees() ([]Guarantee, error) { return asGuaranteeList(c.Guarantee()) }

// MaxIterations returns the largest number of DP-HMC iterations k for which
// Thm 3.5 certifies (eps, delta)-DP. TauL, TauG and Leapfrog must be valid;
// Iterations is ignored.
func (c RaisaHMC) MaxIterations(eps, delta float64) (int, error) {
	if err := c.validateNoise(); err != nil {
		return 0, err
	}
	return gdpMaxSteps(c.muSqPerIteration(), eps, delta)
}

// RaisaTauFromCode converts a noise scale of the authors' public experiment
// code to the τ of the paper. That code draws the penalty noise with standard
// deviation τ_code·√n·2b_l‖θ′−θ‖ and the gradient noise with 2τ_code·√n·b_g,
// so τ_paper = τ_code·√n for a dataset of n records.
func RaisaTauFromCode(tauCode float64, n int) float64 { return tauCode * math.Sqrt(float64(n)) }

// gaussianCompositionGuarantee is the guarantee of an adaptive composition of
// Gaussian mechanisms with total GDP parameter μ (Dong, Roth & Su 2019,
// Cor. 3.3): profile stats.GDPDelta, ε(δ) by stats.GDPEpsilon, RDP α·μ²/2.
func gaussianCompositionGuarantee(source, variant string, mu float64, checks []Check, note string) Guarantee {
	return Guarantee{
		Source: source, Variant: variant, Release: "path", Checks: checks, Applies: true,
		Profile: func(eps float64) float64 { return stats.GDPDelta(mu, eps) },
		Spec:    ptr(GDPSpec(mu)),
		EpsilonAt: func(delta float64) float64 {
			e, err := stats.GDPEpsilon(mu, delta)
			if err != nil { // unreachable: μ is validated finite and δ by Guarantee.Epsilon
				panic(err)
			}
			return e
		},
		RDP:  stats.GaussianRDP(mu),
		Note: note,
	}
}

// gdpMaxSteps returns the largest k ≥ 0 such that √(k·muSq1)-GDP is
// (eps, delta)-DP, i.e. GDPLogDelta(√(k·muSq1), eps) ≤ ln delta. It solves for
// the largest admissible μ by Brent's method (δ_μ(ε) increases with μ), rounds
// k = ⌊μ²/muSq1⌋ and then checks k and k+1 directly with the exact profile.
func gdpMaxSteps(muSq1, eps, delta float64) (int, error) {
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return 0, fmt.Errorf("eps: must be finite and ≥ 0, got %g", eps)
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("delta: must be in (0, 1), got %g", delta)
	}
	target := math.Log(delta)
	ok := func(k int) bool {
		return k == 0 || stats.GDPLogDelta(math.Sqrt(float64(k)*muSq1), eps) <= target
	}
	f := func(mu float64) float64 { return stats.GDPLogDelta(mu, eps) - target }
	hi := 1.0
	for f(hi) <= 0 {
		hi *= 2
		if hi > 1e150 {
			return 0, fmt.Errorf("closedform: the budget (ε = %g, δ = %g) admits μ > 1e150", eps, delta)
		}
	}
	lo := hi / 2
	for f(lo) > 0 {
		lo /= 2
		if lo < 1e-150 {
			return 0, nil
		}
	}
	mu, err := numeric.Root(f, lo, hi, 1e-14*hi)
	if err != nil {
		return 0, err
	}
	kf := math.Floor(mu * mu / muSq1)
	const maxK = 1 << 52
	if kf > maxK {
		return 0, fmt.Errorf("closedform: the budget admits more than 2^52 iterations (μ² per iteration = %g)", muSq1)
	}
	k := int(kf)
	for k > 0 && !ok(k) {
		k--
	}
	for k < maxK && ok(k+1) {
		k++
	}
	return k, nil
}

// asGuaranteeList wraps a single guarantee as a list.
func asGuaranteeList(g Guarantee, err error) ([]Guarantee, error) {
	if err != nil {
		return nil, err
	}
	return []Guarantee{g}, nil
}

func fieldPositiveFinite(name string, x float64) error {
	if !(x > 0) || math.IsInf(x, 1) {
		return fmt.Errorf("%s: must be finite and > 0, got %g", name, x)
	}
	return nil
}

// gdpMuSquaredCap rejects configurations whose GDP parameter is too large
// for ε(δ) to be represented (μ² beyond 1e300).
func gdpMuSquaredCap(muSq float64) error {
	if !(muSq <= 1e300) {
		return fmt.Errorf("closedform: μ² = %g is too large (noise too small for the number of iterations)", muSq)
	}
	return nil
}
