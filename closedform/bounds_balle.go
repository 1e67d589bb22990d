package closedform

import (
	"fmt"
	"math"
	"sync"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Upper bounds of Balle, Barthe, Gaboardi & Geumlek, "Privacy amplification
// by mixing and diffusion mechanisms", NeurIPS 2019, from its appendix.

// NoisySGDParams is a configuration of one-pass noisy projected SGD as
// analysed in Balle et al. Thm 5 (proof in App. B): for records
// z_1, …, z_n, visited once in order,
//
//	x_i = Π_K(x_{i−1} − η∇_x ℓ(x_{i−1}, z_i) + Z_i),  Z_i ~ N(0, η²σ² I),
//
// from a data-independent x_0 ~ ξ₀, on a convex set K; the output is x_n.
type NoisySGDParams struct {
	// Eta is the step size η > 0.
	Eta float64
	// Sigma is the noise multiplier σ > 0: each step adds N(0, η²σ² I).
	Sigma float64
	// N is the number of records, one step each (n ≥ 1).
	N int
	// Lipschitz is C: ℓ(·, z) is C-Lipschitz on K for every record z.
	// +Inf when it is not (e.g. a quadratic term on an unbounded K);
	// 0 when unknown.
	Lipschitz float64
	// GradDiff optionally bounds sup_{x∈K} |∇ℓ(x, z) − ∇ℓ(x, z′)| over
	// records z, z′ (≤ 2C). The proof of Thm 5 uses C-Lipschitzness only to
	// bound this difference by 2C (App. B, "‖Y − Y′‖ ≤ … ≤ 2ηC"), so a
	// smaller or finite GradDiff may replace 2C. 0 when unknown.
	GradDiff float64
	// Smoothness is β: ℓ(·, z) is β-smooth on K.
	Smoothness float64
	// StrongConvexity is ρ: ℓ(·, z) is ρ-strongly convex on K (0 < ρ ≤ β).
	StrongConvexity float64
}

// Validate checks the configuration; the error names the field and its range.
func (p NoisySGDParams) Validate() error {
	if err := checkPositive("eta", p.Eta); err != nil {
		return err
	}
	if err := checkPositive("sigma", p.Sigma); err != nil {
		return err
	}
	if p.N < 1 {
		return fmt.Errorf("n: number of records must be ≥ 1, got %d", p.N)
	}
	if !(p.Lipschitz >= 0) {
		return fmt.Errorf("C: Lipschitz constant must be ≥ 0 (0 = unknown, +Inf = not Lipschitz), got %g", p.Lipschitz)
	}
	if err := checkNonNegative("gradient difference", p.GradDiff); err != nil {
		return err
	}
	if err := checkPositive("beta (smoothness)", p.Smoothness); err != nil {
		return err
	}
	if err := checkPositive("rho (strong convexity)", p.StrongConvexity); err != nil {
		return err
	}
	if p.StrongConvexity > p.Smoothness {
		return fmt.Errorf("rho: strong convexity must be ≤ smoothness beta = %g, got %g", p.Smoothness, p.StrongConvexity)
	}
	return nil
}

// BalleThm5 is Balle et al. Thm 5: for a C-Lipschitz, β-smooth,
// ρ-strongly convex loss and η ≤ 2/(β+ρ), one-pass noisy projected SGD is
// (α, α·ε_i)-RDP for every α > 1 with respect to a change of the record at
// index i, where
//
//	ε_n = 2C²/σ²,
//	ε_i = 2C²/((n−i)σ²) · (1 − 2ηβρ/(β+ρ))^{(n−i+1)/2},  1 ≤ i ≤ n−1.
//
// index = 0 asks for the worst record, max_i ε_i = ε_n. When
// p.GradDiff = G is given with G < 2C (or C is unknown or infinite), the
// proof's sensitivity G replaces 2C, i.e. 2C² becomes G²/2 (Variant says
// so). The (ε, δ) profile is the Mironov conversion of the linear RDP curve,
// ε(δ) = ε_i + 2·sqrt(ε_i ln(1/δ)).
func BalleThm5(p NoisySGDParams, index int) (Guarantee, error) {
	if err := p.Validate(); err != nil {
		return Guarantee{}, err
	}
	if index < 0 || index > p.N {
		return Guarantee{}, fmt.Errorf("index: must be in [0, n = %d] (0 = worst record), got %d", p.N, index)
	}
	release := "final iterate x_n"
	if index == 0 {
		release += ", worst record"
	} else {
		release += fmt.Sprintf(", record at index %d", index)
	}
	sens, variant, checks := p.thm5Checks()
	if ok, _ := allHold(checks); !ok {
		return NotApplicable(balleThm5Source, variant, release, checks), nil
	}
	i := index
	if i == 0 {
		i = p.N
	}
	eps := p.thm5Epsilon(sens, i)
	if math.IsInf(eps, 0) || math.IsNaN(eps) {
		return Guarantee{}, fmt.Errorf("%s: ε overflows float64; check C and sigma", balleThm5Source)
	}
	return Guarantee{
		Source: balleThm5Source, Variant: variant, Release: release, Checks: checks, Applies: true,
		Profile:   CommonFormProfile(4 * eps),
		Spec:      ptr(CommonFormSpec(4 * eps)),
		EpsilonAt: commonFormEpsilon(4 * eps),
		RDP:       linearRDP(4 * eps),
		Note:      fmt.Sprintf("RDP ε(α) = α·%.6g", eps),
	}, nil
}

const balleThm5Source = "Balle et al. 2019, Thm 5 (one-pass noisy projected SGD)"

// thm5Checks returns the sensitivity the proof of Thm 5 uses (2C, or the
// gradient-difference bound when smaller or when C is unknown), the
// variant that names it, and the theorem's checks.
func (p NoisySGDParams) thm5Checks() (sens float64, variant string, checks []Check) {
	b, rho := p.Smoothness, p.StrongConvexity
	lim := 2 / (b + rho)
	sens, variant = 2*p.Lipschitz, string(Printed)
	if p.GradDiff > 0 && !(p.GradDiff >= sens && sens > 0) {
		sens, variant = p.GradDiff, balleGradDiffVariant
	}
	checks = []Check{
		{Name: "sensitivity known (C-Lipschitz loss, or a gradient-difference bound)",
			Holds:  sens > 0 && !math.IsInf(sens, 1),
			Detail: fmt.Sprintf("C = %g, gradient difference = %g", p.Lipschitz, p.GradDiff)},
		{Name: "η ≤ 2/(β+ρ)", Holds: p.Eta <= lim, Detail: fmt.Sprintf("η = %g, 2/(β+ρ) = %g", p.Eta, lim)},
	}
	return sens, variant, checks
}

const balleGradDiffVariant = "gradient-difference sensitivity (proof of Thm 5)"

// thm5Epsilon is ε_i of Thm 5 for 1 ≤ i ≤ n with sensitivity sens:
// sens²/(2σ²) for i = n, and sens²/(2(n−i)σ²)·(1 − 2ηβρ/(β+ρ))^{(n−i+1)/2}
// below (sens = 2C gives the printed 2C²/σ²).
func (p NoisySGDParams) thm5Epsilon(sens float64, i int) float64 {
	// ε_n = sens²/(2σ²) (sens = 2C gives 2C²/σ²).
	eps := sens * sens / (2 * p.Sigma * p.Sigma)
	if r := p.N - i; r > 0 {
		// (1 − 2ηβρ/(β+ρ))^{(r+1)/2}, in log space; the base is in [0, 1)
		// because η ≤ 2/(β+ρ) and ρ ≤ β.
		b, rho := p.Smoothness, p.StrongConvexity
		lf := float64(r+1) / 2 * math.Log1p(-2*p.Eta*b*rho/(b+rho))
		eps = eps / float64(r) * math.Exp(lf)
	}
	return eps
}

// BalleThm5Shuffled applies Balle et al. Thm 5 to one pass over the
// records in a random order drawn independently of the data (the first
// epoch of SGD with a shuffled order): the record that differs between D
// and D′ is used at step k with probability weights[k−1], the same on both
// datasets, and the release follows step p.N. Conditionally on the order
// the release is (α, αε_k)-RDP with ε_k of Thm 5 (n = p.N, i = k), and it
// does not depend on the record at all when k > p.N. The laws on D and D′
// are mixtures over the order with the same weights, and
// (P, Q) ↦ ∫p^α q^{1−α} is jointly convex for α > 1, so
//
//	ε(α) ≤ (1/(α−1))·ln( W + Σ_{k≤N} w_k·e^{(α−1)·α·ε_k} ),
//
// W the weight of the steps after N (docs/derivations/balle-wiring.md).
// The (ε, δ) profile is Mironov's conversion (Prop. 3) minimised over a
// grid of orders (rdpCurveProfile); ε(δ) inverts it. Weights must be ≥ 0
// and sum to 1, with at least N of them. The sensitivity is that of
// BalleThm5.
func BalleThm5Shuffled(p NoisySGDParams, weights []float64) (Guarantee, error) {
	if err := p.Validate(); err != nil {
		return Guarantee{}, err
	}
	if len(weights) < p.N {
		return Guarantee{}, fmt.Errorf("weights: need one per step, at least n = %d, got %d", p.N, len(weights))
	}
	total := 0.0
	for i, w := range weights {
		if !(w >= 0 && w <= 1) {
			return Guarantee{}, fmt.Errorf("weights[%d]: must be in [0, 1], got %g", i, w)
		}
		total += w
	}
	if math.Abs(total-1) > 1e-9 {
		return Guarantee{}, fmt.Errorf("weights: must sum to 1, got %g", total)
	}
	sens, variant, checks := p.thm5Checks()
	variant += ", random visiting order"
	release := fmt.Sprintf("x_%d, the record's position random", p.N)
	if ok, _ := allHold(checks); !ok {
		return NotApplicable(balleThm5Source, variant, release, checks), nil
	}
	eps := make([]float64, p.N)
	rest := 0.0
	for k, w := range weights {
		if k < p.N {
			eps[k] = p.thm5Epsilon(sens, k+1)
		} else {
			rest += w
		}
	}
	ws := append([]float64(nil), weights[:p.N]...)
	curve := mixtureCurve(rest, ws, eps)
	if math.IsInf(eps[p.N-1], 0) || math.IsNaN(eps[p.N-1]) {
		return Guarantee{}, fmt.Errorf("%s: ε overflows float64; check the sensitivity and sigma", balleThm5Source)
	}
	return Guarantee{
		Source: balleThm5Source, Variant: variant, Release: release, Checks: checks, Applies: true,
		Profile: rdpCurveProfile(curve),
		Spec:    ptr(newSpec("rdp-mixture", "rest", rest).withVector("weights", ws).withVector("eps", eps)),
		RDP:     curve,
		Note:    fmt.Sprintf("mixture over the %d positions of the record; worst position alone: RDP ε(α) = α·%.6g", len(weights), eps[p.N-1]),
	}, nil
}

// OUParams is the Ornstein–Uhlenbeck mechanism of Balle et al. Cor 7:
// M_t(D) = P_t(f(D)), the OU semigroup with parameters θ, ρ run for time t
// from the deterministic point f(D). In the parametrisation the proof of
// Cor 7 uses (carré du champ Γ(f) = ρ²|∇f|², kernel log-ratio
// θe^{θt}⟨x − x′, y⟩/(ρ²(e^{2θt} − 1))), P_t is the law at time t of
// dX = −θX dt + √2·ρ dW, i.e. P_t(x) = N(e^{−θt}x, (ρ²/θ)(1 − e^{−2θt}) I).
type OUParams struct {
	// Theta is the mean-reversion rate θ > 0.
	Theta float64
	// Rho is the diffusion scale ρ > 0 (stationary variance ρ²/θ).
	Rho float64
	// Sensitivity is Δ, the global L2 sensitivity of f.
	Sensitivity float64
	// Time is t > 0.
	Time float64
}

// BalleCor7 is Balle et al. Cor 7: the OU mechanism is (α, αΛ(t))-RDP for
// every α > 1 with
//
//	Λ(t) = θΔ² / (2ρ²(e^{2θt} − 1)).
//
// Because P_t(x) is Gaussian with a mean that moves by at most e^{−θt}Δ,
// the mechanism is exactly μ-GDP with μ² = 2Λ(t); Profile is that (tight)
// Gaussian profile, which is smaller than the Mironov conversion
// Λ + 2·sqrt(Λ ln(1/δ)) of the printed RDP curve.
func BalleCor7(p OUParams) (Guarantee, error) {
	if err := checkPositive("theta", p.Theta); err != nil {
		return Guarantee{}, err
	}
	if err := checkPositive("rho", p.Rho); err != nil {
		return Guarantee{}, err
	}
	if err := checkNonNegative("sensitivity", p.Sensitivity); err != nil {
		return Guarantee{}, err
	}
	if err := checkPositive("t", p.Time); err != nil {
		return Guarantee{}, err
	}
	lambda := OULambda(p)
	if math.IsInf(lambda, 0) || math.IsNaN(lambda) {
		return Guarantee{}, fmt.Errorf("Balle et al. 2019, Cor 7: Λ(t) overflows float64 (θ = %g, ρ = %g, Δ = %g, t = %g)", p.Theta, p.Rho, p.Sensitivity, p.Time)
	}
	return ouGuarantee("Balle et al. 2019, Cor 7 (Ornstein–Uhlenbeck mechanism)", "P_t(f(D))", nil, lambda), nil
}

// OULambda returns Λ(t) = θΔ²/(2ρ²(e^{2θt} − 1)) of Balle et al. Cor 7,
// with e^{2θt} − 1 computed by expm1. Inputs are not validated.
func OULambda(p OUParams) float64 {
	return p.Theta * p.Sensitivity * p.Sensitivity / (2 * p.Rho * p.Rho * math.Expm1(2*p.Theta*p.Time))
}

// rdpCurveProfile turns an RDP curve into the privacy profile of Mironov
// 2017, Prop. 3, δ(ε) = min over α of exp((α−1)(ε_RDP(α) − ε)), capped at
// 1, the minimum taken over the 400 orders of stats.DefaultOrders (1.01 to
// 10⁴, (α−1) about 2.3% apart). Any order gives a valid δ; the curve is
// evaluated once per order, so that a claim's profile, which an audit
// evaluates thousands of times, costs 400 multiplications.
func rdpCurveProfile(curve stats.RDPCurve) func(float64) float64 {
	orders := stats.DefaultOrders
	var once sync.Once
	vals := make([]float64, len(orders))
	return func(e float64) float64 {
		once.Do(func() {
			for i, a := range orders {
				vals[i] = curve(a)
			}
		})
		best := 0.0
		for i, a := range orders {
			if v := (a - 1) * (vals[i] - e); v < best {
				best = v
			}
		}
		return math.Exp(best)
	}
}

// OUChain is a linear Gaussian chain run for Steps steps from a
// data-independent start x_0,
//
//	x_{k+1} = A·x_k + (1 − A)·m_D + N(0, NoiseVar·I),  0 < A < 1,
//
// which is what the unadjusted Langevin algorithm (and full-batch SGLD) is
// on a Gaussian target with isotropic precision p: A = 1 − γp and
// NoiseVar = 2γ for ULA. MeanShift is ‖m_D − m_D′‖, the distance between
// the fixed points on the two datasets (the posterior means).
type OUChain struct {
	A, NoiseVar float64
	Steps       int
	MeanShift   float64
}

// OUParams returns the Ornstein–Uhlenbeck mechanism of Balle et al. Cor 7
// that has exactly the chain's law at its last step: x_T ~
// N(Aᵀx_0 + (1 − Aᵀ)m_D, NoiseVar·(1 − A^{2T})/(1 − A²)) is P_T(f(D)) for
// the OU semigroup with θ = −ln A, ρ² = NoiseVar·θ/(1 − A²) (one step per
// unit of time) started at f(D) = x_0 + (A^{−T} − 1)·m_D, whose
// sensitivity is Δ = (A^{−T} − 1)·MeanShift (docs/derivations/balle-wiring.md).
// A^{−T} overflows for long chains; BalleCor7Chain does not need it.
func (c OUChain) OUParams() OUParams {
	theta := -math.Log(c.A)
	return OUParams{Theta: theta, Rho: math.Sqrt(c.NoiseVar * theta / (1 - c.A*c.A)),
		Sensitivity: math.Expm1(float64(c.Steps)*theta) * c.MeanShift, Time: float64(c.Steps)}
}

// BalleCor7Chain is Balle et al. Cor 7 for the chain's last state, through
// OUParams: (α, αΛ)-RDP, and exactly μ-GDP with μ² = 2Λ, where
//
//	Λ = θΔ²/(2ρ²(e^{2θT} − 1)) = (1 − A²)(1 − Aᵀ)·MeanShift² / (2·NoiseVar·(1 + Aᵀ)),
//
// the right-hand form (the same number, docs/derivations/balle-wiring.md)
// being the one evaluated: it neither overflows nor cancels. The bound is
// tight: it is the exact privacy of the chain's last state.
func BalleCor7Chain(c OUChain) (Guarantee, error) {
	if err := checkPositive("noise variance", c.NoiseVar); err != nil {
		return Guarantee{}, err
	}
	if err := checkNonNegative("mean shift", c.MeanShift); err != nil {
		return Guarantee{}, err
	}
	if c.Steps < 1 {
		return Guarantee{}, fmt.Errorf("steps: must be ≥ 1, got %d", c.Steps)
	}
	const src = "Balle et al. 2019, Cor 7 (Ornstein–Uhlenbeck mechanism)"
	checks := []Check{{Name: "the chain is an OU process sampled at unit times (0 < A < 1)", Holds: c.A > 0 && c.A < 1,
		Detail: fmt.Sprintf("A = %.6g", c.A)}}
	if !checks[0].Holds {
		return NotApplicable(src, "", "final state", checks), nil
	}
	aT := math.Exp(float64(c.Steps) * math.Log(c.A))
	lambda := (1 - c.A*c.A) * (1 - aT) * c.MeanShift * c.MeanShift / (2 * c.NoiseVar * (1 + aT))
	ou := c.OUParams()
	checks = append(checks, Check{Name: "OU parameters", Holds: true,
		Detail: fmt.Sprintf("θ = %.6g, ρ = %.6g, t = %d, Δ = (A^{−t} − 1)·%.6g", ou.Theta, ou.Rho, c.Steps, c.MeanShift)})
	return ouGuarantee(src, "final state", checks, lambda), nil
}

// ouGuarantee is the guarantee of Cor 7 with Λ = lambda: exact μ-GDP,
// μ = sqrt(2Λ), and the RDP line αΛ.
func ouGuarantee(src, release string, checks []Check, lambda float64) Guarantee {
	mu := math.Sqrt(2 * lambda)
	return Guarantee{
		Source: src, Release: release, Checks: checks, Applies: true,
		Profile:   func(eps float64) float64 { return stats.GDPDelta(mu, eps) },
		Spec:      ptr(GDPSpec(mu)),
		EpsilonAt: func(delta float64) float64 { e, _ := stats.GDPEpsilon(mu, delta); return e },
		RDP:       func(a float64) float64 { return a * lambda },
		Note:      fmt.Sprintf("Λ(t) = %.6g; profile: exact μ-GDP with μ = sqrt(2Λ) = %.6g", lambda, mu),
	}
}

// Amplification by mixing (Balle et al. Thm 1, proved in App. A as
// Thms 10, 13, 14, 15): post-processing an (ε, δ)-DP mechanism M by a
// data-independent Markov kernel K that mixes gives a better guarantee for
// K∘M. The kernel conditions (Lemma 9: ultra-mixing ⇒ Doeblin ⇒ Dobrushin,
// and (γ, ε)-Dobrushin ⇒ γ-Dobrushin):
//
//	γ-Dobrushin:        sup_{x,x′} TV(K(x), K(x′)) ≤ γ
//	(γ, ε′)-Dobrushin:  sup_{x,x′} D_{e^ε′}(K(x) ‖ K(x′)) ≤ γ  (hockey-stick)
//	γ-Doeblin:          K(x) ≥ (1 − γ)ω for all x, for one distribution ω
//	γ-ultra-mixing:     K(x) ≪ K(x′) and dK(x)/dK(x′) ≥ 1 − γ for all x, x′

func checkMixingInputs(eps, delta, gamma float64) error {
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return fmt.Errorf("epsilon: must be finite and ≥ 0, got %g", eps)
	}
	if !(delta >= 0 && delta <= 1) {
		return fmt.Errorf("delta: must be in [0, 1], got %g", delta)
	}
	if !(gamma >= 0 && gamma <= 1) {
		return fmt.Errorf("gamma: mixing coefficient must be in [0, 1], got %g", gamma)
	}
	return nil
}

// MixingDobrushin is Balle et al. Thm 10 and Thm 13: if M is (ε, δ)-DP and
// K is γ-Dobrushin (Thm 10) — or only (γ, ε′)-Dobrushin at the ε′ returned
// by MixingDobrushinOrder (Thm 13) — then K∘M is (ε, γδ)-DP.
func MixingDobrushin(eps, delta, gamma float64) (epsOut, deltaOut float64, err error) {
	if err := checkMixingInputs(eps, delta, gamma); err != nil {
		return math.NaN(), math.NaN(), err
	}
	return eps, gamma * delta, nil
}

// MixingDobrushinOrder returns ε′ = ln(1 + (e^ε − 1)/δ) of Balle et al.
// Thm 13: the hockey-stick order at which K must be (γ, ε′)-Dobrushin for
// K∘M to be (ε, γδ)-DP. It is +Inf for δ = 0 and 0 for ε = 0.
func MixingDobrushinOrder(eps, delta float64) (float64, error) {
	if err := checkMixingInputs(eps, delta, 0); err != nil {
		return math.NaN(), err
	}
	if eps == 0 {
		return 0, nil
	}
	if delta == 0 {
		return math.Inf(1), nil
	}
	// ln(1 + e^{ln(e^ε − 1) − ln δ}), ln(e^ε − 1) = ε + ln(1 − e^{−ε}).
	return numeric.LogAddExp(0, eps+numeric.Log1mExp(-eps)-math.Log(delta)), nil
}

// mixedEpsilon is ε′ = ln(1 + γ(e^ε − 1)) = ln((1 − γ) + γe^ε) of Thms 14–15.
func mixedEpsilon(eps, gamma float64) float64 {
	return numeric.LogAddExp(math.Log1p(-gamma), math.Log(gamma)+eps)
}

// MixingDoeblin is Balle et al. Thm 14: if M is (ε, δ)-DP and K is
// γ-Doeblin, K∘M is (ε′, δ′)-DP with ε′ = ln(1 + γ(e^ε − 1)) and
// δ′ = γ(1 − e^{ε′−ε}(1 − δ)). (By Lemma 9 K is also γ-Dobrushin, so
// MixingDobrushin's (ε, γδ) holds too.) For δ = 0 the result has δ′ > 0
// unless γ ∈ {0, 1} or ε = 0.
func MixingDoeblin(eps, delta, gamma float64) (epsOut, deltaOut float64, err error) {
	if err := checkMixingInputs(eps, delta, gamma); err != nil {
		return math.NaN(), math.NaN(), err
	}
	e := mixedEpsilon(eps, gamma)
	// 1 − e^{ε′−ε} = (1 − γ)(1 − e^{−ε}) exactly; no cancellation.
	d := gamma * ((1-gamma)*(-math.Expm1(-eps)) + math.Exp(e-eps)*delta)
	return e, d, nil
}

// MixingUltra is Balle et al. Thm 15: if M is (ε, δ)-DP and K is
// γ-ultra-mixing, K∘M is (ε′, δ′)-DP with ε′ = ln(1 + γ(e^ε − 1)) and
// δ′ = γδe^{ε′−ε}.
func MixingUltra(eps, delta, gamma float64) (epsOut, deltaOut float64, err error) {
	if err := checkMixingInputs(eps, delta, gamma); err != nil {
		return math.NaN(), math.NaN(), err
	}
	e := mixedEpsilon(eps, gamma)
	return e, gamma * delta * math.Exp(e-eps), nil
}

// AmplifyDobrushin applies Balle et al. Thm 10 to a whole guarantee: if g
// holds for M and K is γ-Dobrushin (in particular γ-Doeblin or
// γ-ultra-mixing, Lemma 9), K∘M has the profile δ(ε) = γ·g.Profile(ε).
// The RDP curve is dropped.
func AmplifyDobrushin(g Guarantee, gamma float64) (Guarantee, error) {
	out, err := postProcessed(g, gamma, "Thm 10", "Dobrushin")
	if err != nil || !g.Applies {
		return out, err
	}
	in := g
	out.Profile = dobrushinProfile(in.Profile, gamma)
	if in.Spec != nil {
		s := newSpec("dobrushin", "gamma", gamma)
		s.Args = []ProfileSpec{*in.Spec}
		out.Spec = &s
	}
	out.EpsilonAt = func(delta float64) float64 {
		if delta >= gamma {
			return 0
		}
		e, err := in.Epsilon(delta / gamma)
		if err != nil {
			return math.Inf(1)
		}
		return e
	}
	return out, nil
}

// AmplifyUltraMixing applies Balle et al. Thm 15, together with Thm 10
// (an ultra-mixing kernel is Dobrushin, Lemma 9), to a whole guarantee: at
// each ε′ it keeps the smaller of γ·δ(ε′) and γe^{ε′−ε}δ(ε) with ε the
// input level mapped to ε′, e^ε = 1 + (e^{ε′} − 1)/γ. Both terms are
// non-increasing in ε′, so the result is a privacy profile. The RDP curve
// is dropped.
func AmplifyUltraMixing(g Guarantee, gamma float64) (Guarantee, error) {
	out, err := postProcessed(g, gamma, "Thm 15", "ultra-mixing")
	if err != nil || !g.Applies {
		return out, err
	}
	out.Profile = ultraMixingProfile(g.Profile, gamma)
	if g.Spec != nil {
		s := newSpec("ultra-mixing", "gamma", gamma)
		s.Args = []ProfileSpec{*g.Spec}
		out.Spec = &s
	}
	return out, nil
}

// dobrushinProfile is the profile of AmplifyDobrushin: γ·δ(ε).
func dobrushinProfile(in func(float64) float64, gamma float64) func(float64) float64 {
	return func(eps float64) float64 { return gamma * in(eps) }
}

// ultraMixingProfile is the profile of AmplifyUltraMixing.
func ultraMixingProfile(in func(float64) float64, gamma float64) func(float64) float64 {
	return func(epsOut float64) float64 {
		if gamma == 0 {
			return 0
		}
		d := gamma * in(epsOut)
		if epsOut <= 0 {
			return d
		}
		// e^ε = 1 + (e^{ε′} − 1)/γ, as in MixingDobrushinOrder.
		epsIn := numeric.LogAddExp(0, epsOut+numeric.Log1mExp(-epsOut)-math.Log(gamma))
		return math.Min(d, gamma*math.Exp(epsOut-epsIn)*in(epsIn))
	}
}

// postProcessed returns g relabelled as post-processed by a γ-mixing kernel,
// without profile, closed-form ε or RDP curve; the caller sets the profile.
func postProcessed(g Guarantee, gamma float64, thm, kind string) (Guarantee, error) {
	if !(gamma >= 0 && gamma <= 1) {
		return Guarantee{}, fmt.Errorf("gamma: mixing coefficient must be in [0, 1], got %g", gamma)
	}
	out := g
	out.Source = fmt.Sprintf("%s + Balle et al. 2019, %s (γ-%s post-processing)", g.Source, thm, kind)
	out.Release = g.Release + ", post-processed by a data-independent kernel"
	out.Profile, out.EpsilonAt, out.RDP, out.Spec = nil, nil, nil, nil
	amp := fmt.Sprintf("amplified by a %g-%s kernel", gamma, kind)
	out.Note = joinNote(g.Note, amp)
	if at := g.NoteAt; at != nil {
		out.NoteAt = func(delta float64) string { return joinNote(at(delta), amp) }
	}
	return out, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
