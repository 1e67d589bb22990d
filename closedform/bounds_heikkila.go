package closedform

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Sources of the Heikkilä et al. 2019 guarantees.
const (
	HeikkilaFullSource       = "Heikkilä et al. 2019, Thm 1 + Cor. 1 (full-data DP Barker)"
	HeikkilaSubsampledSource = "Heikkilä et al. 2019, Thm 2 + Cor. 2 (subsampled DP Barker)"
)

// Variants of the full-data Barker guarantee.
const (
	// BarkerVariantRDP is Cor. 1 as printed: (α, 2αTB²/C)-RDP, converted at
	// the best real order by the better of Mironov 2017, Prop. 3 and Balle,
	// Barthe, Gaboardi, Hsu & Sato 2020, Thm 21 (stats.Improved.OrderEpsilon).
	BarkerVariantRDP = "RDP, Cor. 1 as printed"
	// BarkerVariantGDP composes the same T Gaussian mechanisms exactly in
	// GDP (beyond the paper; tighter and equally valid, see BarkerFull).
	BarkerVariantGDP = "GDP composition of the same Gaussian mechanisms"
)

// barkerCMax is π²/3, the variance of the standard logistic distribution: the
// Barker decomposition V_log = N(0, C) + V_cor needs C below it (Table 1).
const barkerCMax = math.Pi * math.Pi / 3

// BarkerFull is a full-data DP Barker chain (Heikkilä et al. 2019, §3.2):
// every iteration accepts iff Δ + N(0, C) + V_cor > 0, where Δ is the sum over
// all records of the (clipped, tempered) log-likelihood ratios plus a
// data-independent prior/proposal term, and V_cor is data-independent.
type BarkerFull struct {
	// LLRBound is B > 0 of eq. (11) or (12): every per-record term entering Δ
	// (after clipping and tempering) is bounded by B in absolute value, so
	// replacing one record moves Δ by at most 2B.
	LLRBound float64
	// C is the variance of the Gaussian part of the test, 0 < C < π²/3.
	C float64
	// Iterations is the number T ≥ 0 of accept/reject tests released.
	Iterations int
}

// Validate checks the configuration; errors name the field and its range.
func (c BarkerFull) Validate() error {
	if err := fieldPositiveFinite("LLRBound", c.LLRBound); err != nil {
		return err
	}
	if err := fieldPositiveFinite("C", c.C); err != nil {
		return err
	}
	if c.Iterations < 0 {
		return fmt.Errorf("Iterations: must be ≥ 0, got %d", c.Iterations)
	}
	return gdpMuSquaredCap(c.rho() * 2)
}

// rho is the RDP slope of the whole chain: ε(α) = α·ρ, ρ = 2TB²/C (Cor. 1).
func (c BarkerFull) rho() float64 {
	return 2 * float64(c.Iterations) * c.LLRBound * c.LLRBound / c.C
}

// RDP returns the curve of Heikkilä et al. 2019, Cor. 1: ε(α) = 2αTB²/C.
func (c BarkerFull) RDP() stats.RDPCurve {
	rho := c.rho()
	return func(a float64) float64 { return a * rho }
}

// MuGDP returns μ = 2B·√(T/C): each test releases a post-processing of
// Δ + N(0, C), a Gaussian mechanism with sensitivity 2B, and T of them
// compose adaptively to μ-GDP (Dong, Roth & Su 2019, Cor. 3.3). Its RDP,
// α·μ²/2, is exactly Cor. 1's 2αTB²/C.
func (c BarkerFull) MuGDP() float64 {
	return 2 * c.LLRBound * math.Sqrt(float64(c.Iterations)/c.C)
}

// Guarantees returns, for the whole chain under replace-one adjacency, the
// RDP guarantee of Heikkilä et al. 2019, Thm 1 + Cor. 1 (BarkerVariantRDP)
// and the GDP profile of the same Gaussian mechanisms (BarkerVariantGDP).
// Both are valid; the GDP profile is the tighter. When C ≥ π²/3 the Barker
// test does not exist and both are returned as not applicable.
func (c BarkerFull) Guarantees() ([]Guarantee, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	checks := []Check{{
		Name:   "C < π²/3 (N(0, C) + V_cor can be logistic; Table 1)",
		Holds:  c.C < barkerCMax,
		Detail: fmt.Sprintf("C = %g, π²/3 = %.6g", c.C, barkerCMax),
	}}
	if ok, _ := allHold(checks); !ok {
		return []Guarantee{
			NotApplicable(HeikkilaFullSource, BarkerVariantRDP, "path", checks),
			NotApplicable(HeikkilaFullSource, BarkerVariantGDP, "path", checks),
		}, nil
	}
	rho := c.rho()
	curve := c.RDP()
	rdp := Guarantee{
		Source: HeikkilaFullSource, Variant: BarkerVariantRDP, Release: "path",
		Checks: checks, Applies: true,
		// Mironov's conversion alone would give, in closed form, ε(δ) =
		// ρ + 2√(ρ ln(1/δ)) (CommonFormProfile(4ρ)); the minimum with
		// Balle et al. 2020, Thm 21 is found numerically over real α > 1.
		Profile: rdpLinearProfile(rho),
		Spec:    ptr(newSpec("rdp-linear", "rho", rho)),
		EpsilonAt: func(delta float64) float64 {
			if rho == 0 {
				return 0
			}
			e, _, err := curve.Epsilon(delta, stats.Improved, nil)
			if err != nil { // unreachable: Guarantee.Epsilon validates δ first
				panic(err)
			}
			return e
		},
		RDP: curve,
		Note: fmt.Sprintf("(α, 2αTB²/C)-RDP with 2TB²/C = %.6g; assumes a data-independent proposal "+
			"and correction V_cor, and |per-record term of Δ| ≤ B = %g after clipping and tempering", rho, c.LLRBound),
	}
	gdp := gaussianCompositionGuarantee(HeikkilaFullSource, BarkerVariantGDP, c.MuGDP(), checks,
		fmt.Sprintf("μ-GDP with μ = 2B√(T/C) = %.6g: the same T Gaussian mechanisms (sensitivity 2B, "+
			"variance C) composed exactly instead of through RDP", c.MuGDP()))
	return []Guarantee{rdp, gdp}, nil
}

// BarkerSubsampled is a subsampled DP Barker chain (Heikkilä et al. 2019,
// §3.3): every iteration draws a batch of b records uniformly without
// replacement and accepts iff N(Δ*, C − s²_Δ*) + V_cor > 0, with
// Δ* = (N/b)·Σ_batch τ·llr_i + a data-independent term and C = 2.
type BarkerSubsampled struct {
	// N is the number of records (≥ 1).
	N int
	// BatchSize is b, 10 < b ≤ N: Thm 2 needs an order α < b/5 and α ≥ 2.
	BatchSize int
	// Iterations is the number T ≥ 0 of iterations released.
	Iterations int
	// C is the variance of the Gaussian part of the test; Thm 2 is proved
	// for C = 2 only.
	C float64
	// LLRBound bounds every untempered per-record log-likelihood ratio
	// |log p(x|θ′) − log p(x|θ)| after clipping (> 0).
	LLRBound float64
	// N0 is the effective dataset size of the tempered chain (§2.3, eq. 23):
	// the test uses τ·llr with τ = N0/N. Set N0 = N for no tempering.
	N0 float64
}

// Validate checks the configuration; errors name the field and its range.
func (c BarkerSubsampled) Validate() error {
	if c.N < 1 {
		return fmt.Errorf("N: must be ≥ 1, got %d", c.N)
	}
	if c.BatchSize < 1 || c.BatchSize > c.N {
		return fmt.Errorf("BatchSize: must be in [1, N = %d], got %d", c.N, c.BatchSize)
	}
	if c.Iterations < 0 {
		return fmt.Errorf("Iterations: must be ≥ 0, got %d", c.Iterations)
	}
	if err := fieldPositiveFinite("C", c.C); err != nil {
		return err
	}
	if err := fieldPositiveFinite("LLRBound", c.LLRBound); err != nil {
		return err
	}
	if !(c.N0 > 0 && c.N0 <= float64(c.N)) {
		return fmt.Errorf("N0: must be in (0, N = %d], got %g", c.N, c.N0)
	}
	return nil
}

// Rate returns the sampling ratio q = b/N.
func (c BarkerSubsampled) Rate() float64 { return float64(c.BatchSize) / float64(c.N) }

// MaxOrder returns the largest integer order α with α < b/5 (Thm 2, eq. 20);
// it is < 2 when no order is admissible.
func (c BarkerSubsampled) MaxOrder() int { return (c.BatchSize+4)/5 - 1 }

// checks evaluates the assumptions of Thm 2.
func (c BarkerSubsampled) checks() []Check {
	// (19)/(23): |llr| ≤ √b/N0. The comparison allows 8 ulps of slack for the
	// rounding of the two sides, e.g. LLRBound = √1000/100 with N0 = 100.
	limit := math.Sqrt(float64(c.BatchSize)) / c.N0
	return []Check{
		{Name: "C = 2 (Thm 2 is proved for C = 2)", Holds: c.C == 2, Detail: fmt.Sprintf("C = %g", c.C)},
		{Name: "|llr| ≤ √b/N0 (eq. 19; eq. 23 when tempered)",
			Holds:  c.LLRBound <= limit*(1+8*0x1p-52),
			Detail: fmt.Sprintf("bound = %g, √b/N0 = %.6g (b = %d, N0 = %g)", c.LLRBound, limit, c.BatchSize, c.N0)},
		{Name: "some integer order 2 ≤ α < b/5 (eq. 20)", Holds: c.MaxOrder() >= 2,
			Detail: fmt.Sprintf("b/5 = %g", float64(c.BatchSize)/5)},
	}
}

// HeikkilaStepRDP returns the RDP at order α of releasing one sample of
// N(Δ*, C − s²_Δ*) with C = 2 under the conditions of Heikkilä et al. 2019,
// Thm 2, eq. (21):
//
//	ε(α) = 5/(2b) + ln(2b/(b − 5α))/(2(α−1)) + 2α/(b − 5α),  1 < α < b/5.
//
// It is +Inf for α ≥ b/5, where the theorem gives nothing, and panics for
// α ≤ 1 or b < 1 (programmer errors). The logarithm is evaluated as
// ln 2 − log1p(−5α/b).
func HeikkilaStepRDP(b int, alpha float64) float64 {
	bf := float64(b)
	if !(alpha > 1) || b < 1 {
		panic(fmt.Sprintf("closedform: HeikkilaStepRDP(b = %d, α = %g) needs b ≥ 1 and α > 1", b, alpha))
	}
	if 5*alpha >= bf {
		return math.Inf(1)
	}
	return 5/(2*bf) + (math.Ln2-math.Log1p(-5*alpha/bf))/(2*(alpha-1)) + 2*alpha/(bf-5*alpha)
}

// HeikkilaAmplifiedRDP returns the per-iteration RDP at integer order α of
// Heikkilä et al. 2019, Cor. 2, eq. (22): eq. (21) amplified by sampling a
// fraction q without replacement (Wang, Balle & Kasiviswanathan 2019, Thm 9;
// see stats.WORSubsampledRDP), evaluated in log space.
func HeikkilaAmplifiedRDP(b int, q float64, alpha int) float64 {
	return stats.WORSubsampledRDP(func(j int) float64 { return HeikkilaStepRDP(b, float64(j)) }, q, alpha)
}

// RDPTable returns T times eq. (22) at the integer orders 2 ≤ α < b/5 (every
// order up to 256, geometric beyond): the RDP of the whole chain (Cor. 2).
func (c BarkerSubsampled) RDPTable() (stats.RDPTable, error) {
	if err := c.Validate(); err != nil {
		return stats.RDPTable{}, err
	}
	if c.MaxOrder() < 2 {
		return stats.RDPTable{}, fmt.Errorf("BatchSize: Thm 2 needs b > 10 (an order 2 ≤ α < b/5), got %d", c.BatchSize)
	}
	q := c.Rate()
	t, err := stats.NewRDPTable(stats.IntegerOrders(256, c.MaxOrder(), 1.05),
		func(a int) float64 { return HeikkilaAmplifiedRDP(c.BatchSize, q, a) })
	if err != nil {
		return t, err
	}
	return t.Compose(float64(c.Iterations)), nil
}

// EpsilonOrder returns ε(δ) of Cor. 2 converted by the better of Mironov
// 2017, Prop. 3 and Balle et al. 2020, Thm 21 (stats.RDPTable.Epsilon with stats.Improved),
// minimised over the integer orders α < b/5, and the order that attains it.
func (c BarkerSubsampled) EpsilonOrder(delta float64) (eps float64, order int, err error) {
	t, err := c.RDPTable()
	if err != nil {
		return math.NaN(), 0, err
	}
	return t.Epsilon(delta, stats.Improved)
}

// Guarantee returns the RDP guarantee of Heikkilä et al. 2019, Thm 2 +
// Cor. 2 for the whole chain under replace-one adjacency, with its profile
// δ(ε) = min over integer α < b/5 of the RDP → DP conversion of T·ε′(α)
// (see rdpTableGuarantee). When an assumption of Thm 2 fails it is returned
// as not applicable.
func (c BarkerSubsampled) Guarantee() (Guarantee, error) {
	if err := c.Validate(); err != nil {
		return Guarantee{}, err
	}
	checks := c.checks()
	if ok, _ := allHold(checks); !ok {
		return NotApplicable(HeikkilaSubsampledSource, "", "path", checks), nil
	}
	if c.Iterations == 0 {
		return nothingReleased(HeikkilaSubsampledSource, "", checks), nil
	}
	t, err := c.RDPTable()
	if err != nil {
		return Guarantee{}, err
	}
	return rdpTableGuarantee(HeikkilaSubsampledSource, "", checks, t,
		fmt.Sprintf("q = b/N = %g, T = %d; integer orders 2…%d (α < b/5); batches drawn uniformly "+
			"without replacement at every iteration; proposal and V_cor data-independent; "+
			"any private initialisation is extra", c.Rate(), c.Iterations, c.MaxOrder())), nil
}

// Guarantees returns the guarantees that apply to the configuration: the one
// of Guarantee (possibly not applicable, with the failed check).
func (c BarkerSubsampled) Guarantees() ([]Guarantee, error) { return asGuaranteeList(c.Guarantee()) }

// nothingReleased is the guarantee of a mechanism run for zero steps: the
// output does not depend on the data, so δ(ε) = 0 for every ε ≥ 0.
func nothingReleased(source, variant string, checks []Check) Guarantee {
	return Guarantee{
		Source: source, Variant: variant, Release: "path", Checks: checks, Applies: true,
		Profile:   func(float64) float64 { return 0 },
		Spec:      &ProfileSpec{Kind: "const", Params: map[string]stats.JSONFloat{"value": 0}},
		EpsilonAt: func(float64) float64 { return 0 },
		RDP:       func(float64) float64 { return 0 },
		Note:      "zero steps: nothing data-dependent is released",
	}
}

// rdpTableGuarantee wraps an RDP table: profile and ε(δ) by the better of
// Mironov 2017, Prop. 3 and Balle, Barthe, Gaboardi, Hsu & Sato 2020,
// Thm 21 at every tabulated order (stats.RDPTable.Profile and
// Epsilon with stats.Improved), RDP curve interpolated (RDPTable.Curve).
func rdpTableGuarantee(source, variant string, checks []Check, t stats.RDPTable, note string) Guarantee {
	return Guarantee{
		Source: source, Variant: variant, Release: "path", Checks: checks, Applies: true,
		Profile: t.Profile(stats.Improved),
		Spec:    ptr(RDPTableSpec(t)),
		EpsilonAt: func(delta float64) float64 {
			e, _, err := t.Epsilon(delta, stats.Improved)
			if err != nil { // unreachable: Guarantee.Epsilon validates δ first
				panic(err)
			}
			return e
		},
		RDP:  t.Curve(),
		Note: note,
	}
}
