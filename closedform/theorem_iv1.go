package closedform

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
)

// TheoremIV1Params are the inputs of the construction in the proof of
// Heller & Fetaya Theorem IV.1 (App. A-A).
type TheoremIV1Params struct {
	// Epsilon is the ε > 0 for which one posterior draw must be
	// (ε, δ)-DP; EpsilonPrime the ε′ > 0 that SGLD must fail.
	Epsilon, EpsilonPrime float64
	// Delta is the δ ∈ (0, 1/2) shared by both statements.
	Delta float64
	// Gamma1 ∈ (0, 1/2) is the domain's spread exponent (eq. 5).
	Gamma1 float64
	// Gamma2 ∈ (1 + γ1, 3/2) sets c_p = n_p^γ2; 0 asks NewTheoremIV1 to
	// choose the γ2 that minimises n_p.
	Gamma2 float64
	// Alpha, Beta are the prior and noise precisions; XH is x_h, with
	// x_h²β > 3 (eq. 5). The construction fixes x_l = x_h/2.
	Alpha, Beta, XH float64
}

// TheoremIV1 is the construction in the proof of Heller & Fetaya Theorem
// IV.1 (App. A-A, eq. 16): a dataset size n_p and slope c_p = n_p^γ2 such
// that one posterior draw is (ε, δ)-DP on D(n_p, γ1, x_h, x_h/2, c_p)
// (Claim D.28 with Lemma IV.4) while cyclic SGLD with η = 2/s² is not
// (ε′, δ)-DP after ⌈k̇⌉ + 1 epochs (Lemma A.9, k̇ of Lemma A.6).
//
// The lower bounds on n are kept as natural logarithms because for many
// γ2 they exceed what float64 (or an instance of Counterexample, n ≤ 2^53)
// can carry; Limits then says which quantity leaves which range.
type TheoremIV1 struct {
	TheoremIV1Params
	// Gamma2Chosen is true when Gamma2 was chosen to minimise n_p.
	Gamma2Chosen bool
	// XL = x_h/2.
	XL float64
	// Nu1 = 2 ln(1/δ)/ε + 1, the Rényi order fixed by the construction.
	Nu1 float64
	// V1 = max{6, 1 + 2e^(1/(x_h²β))} (Lemma A.7).
	V1 float64
	// LnN1, LnN3 and LnNSGLD are ln n_1 (Lemma A.9's conditions), ln n_3
	// (Lemma A.1's conditions at ν1) and ln of eq. 16's bound for ε′;
	// LnN2 holds ln of the five terms of n_2 (Claim D.28).
	LnN1, LnN3, LnNSGLD float64
	LnN2                [5]float64
	// Binding names the bound that sets n_p ("n_1", "n_2 term 3", …).
	Binding string
	// LnNP = ln max{n_1, n_2, n_3, eq. 16}; NP = ⌈e^LnNP⌉ (+Inf beyond
	// float64); LnCP = γ2·ln NP and CP = NP^γ2.
	LnNP, NP, LnCP, CP float64
	// LnEta = ln(2/s²) with s = α + n_p x_h² β, and Eta its value (0 when
	// it underflows).
	LnEta, Eta float64
	// MinGamma2 and MinLnNP give the γ2 ∈ (1 + γ1, 3/2) minimising n_p and
	// that minimum, for comparison with the γ2 used.
	MinGamma2, MinLnNP float64
	// Limits lists, in words, every quantity that leaves the range in
	// which an instance can be built; empty when Instance succeeds.
	Limits []string
	// Readings records how the printed formulas were read.
	Readings []string
}

// maxInstanceN is the largest n an instance of Counterexample accepts.
const maxInstanceN = 1 << 53

// theoremIV1Readings documents the choices made where App. A-A is
// ambiguous or contains a slip (docs/derivations/interim-region.md,
// "Theorem IV.1").
var theoremIV1Readings = []string{
	"n_2's fourth term uses Claim D.28's exponent 1/(2−γ1−γ2); App. A-A prints 2/(1−2γ1−γ2), negative for every allowed γ1, γ2",
	"the ν in n_2 is ν1 (App. A-A writes ν; Claim D.28 sets ν = ν1)",
	"Claim D.28's third term divides by ε where it prints κ",
	"n_1's third term reads 1/(2x_h²β) where App. A-A prints 1/(2x²β) (as in Lemma A.9)",
}

// NewTheoremIV1 evaluates the construction. Parameters outside their
// ranges are errors; a construction that cannot be instantiated in
// float64 is not, and is described by Limits.
func NewTheoremIV1(p TheoremIV1Params) (TheoremIV1, error) {
	t := TheoremIV1{TheoremIV1Params: p, XL: p.XH / 2, Readings: theoremIV1Readings}
	finitePos := func(x float64) bool { return x > 0 && !math.IsInf(x, 1) }
	switch {
	case !finitePos(p.Epsilon):
		return t, fmt.Errorf("epsilon: must be a finite number > 0, got %g", p.Epsilon)
	case !finitePos(p.EpsilonPrime):
		return t, fmt.Errorf("epsilon-prime: must be a finite number > 0, got %g", p.EpsilonPrime)
	case !(p.Delta > 0 && p.Delta < 0.5):
		return t, fmt.Errorf("delta: must be in (0, 0.5) for Theorem IV.1, got %g", p.Delta)
	case !(p.Gamma1 > 0 && p.Gamma1 < 0.5):
		return t, fmt.Errorf("gamma1: must be in (0, 0.5), got %g", p.Gamma1)
	case p.Gamma2 != 0 && !(p.Gamma2 > 1+p.Gamma1 && p.Gamma2 < 1.5):
		return t, fmt.Errorf("gamma2: must be in (1 + γ1, 1.5) = (%g, 1.5), got %g", 1+p.Gamma1, p.Gamma2)
	case !finitePos(p.Alpha):
		return t, fmt.Errorf("alpha: must be a finite number > 0, got %g", p.Alpha)
	case !finitePos(p.Beta):
		return t, fmt.Errorf("beta: must be a finite number > 0, got %g", p.Beta)
	case !finitePos(p.XH):
		return t, fmt.Errorf("xh: must be a finite number > 0, got %g", p.XH)
	case !(p.XH*p.XH*p.Beta > 3):
		return t, fmt.Errorf("xh: the domain of eq. 5 needs x_h²β > 3, got x_h²β = %g", p.XH*p.XH*p.Beta)
	}
	b := p.XH * p.XH * p.Beta
	t.Nu1 = 2*math.Log(1/p.Delta)/p.Epsilon + 1
	t.V1 = math.Max(6, 1+2*math.Exp(1/b))
	// n_1 and n_3 do not depend on γ2.
	n1 := max(1/(2*p.Alpha*b)-1/b, p.Alpha/b, p.Alpha/b*(math.Exp(2/b)-2)+1/(2*b)) + 1
	t.LnN1 = math.Log(n1)
	r := p.XH * p.XH / (t.XL * t.XL) // = 4
	lnNu := math.Log(t.Nu1)
	// ln(max{1 + 10 r ν1/β, 1 + ν1 r} + 1).
	t.LnN3 = numeric.LogAddExp(0, math.Max(
		numeric.LogAddExp(0, math.Log(10*r/p.Beta)+lnNu),
		numeric.LogAddExp(0, math.Log(r)+lnNu)))
	// γ2: the user's, or the minimiser of n_p.
	t.MinGamma2, t.MinLnNP = t.minimiseNP()
	if p.Gamma2 == 0 {
		t.Gamma2, t.Gamma2Chosen = t.MinGamma2, true
	}
	t.LnN2, t.LnNSGLD = t.gamma2Terms(t.Gamma2)
	t.LnNP, t.Binding = t.lnMax(t.Gamma2)
	t.NP = math.Ceil(math.Exp(t.LnNP))
	if !math.IsInf(t.NP, 1) {
		t.LnNP = math.Log(t.NP)
	}
	t.LnCP = t.Gamma2 * t.LnNP
	t.CP = math.Pow(t.NP, t.Gamma2)
	// s = α + n_p x_h² β, η = 2/s².
	lnS := numeric.LogAddExp(math.Log(p.Alpha), t.LnNP+math.Log(b))
	t.LnEta = math.Ln2 - 2*lnS
	t.Eta = math.Exp(t.LnEta)
	t.Limits = t.limits()
	return t, nil
}

// gamma2Terms returns ln of the five terms of n_2 (Claim D.28, App. A-A)
// and of eq. 16's bound, for a given γ2.
func (t TheoremIV1) gamma2Terms(g2 float64) (n2 [5]float64, nSGLD float64) {
	p := t.TheoremIV1Params
	g1 := p.Gamma1
	eps, nu := p.Epsilon, t.Nu1
	lnEps, lnNu := math.Log(eps), math.Log(nu)
	lnXH, lnXL, lnB := math.Log(p.XH), math.Log(t.XL), math.Log(p.Beta)
	ln09 := math.Log(0.9)
	r := p.XH * p.XH / (t.XL * t.XL)
	// ln(α + x_h²β) and ln(x_h²α + x_h⁴β) = 2 ln x_h + ln(α + x_h²β).
	lnA := numeric.LogAddExp(math.Log(p.Alpha), 2*lnXH+lnB)
	// ln(1 + 10 r ν/β), and the correction 1 + (1 + 10 r ν/β)^−(γ2−γ1).
	lnQ := numeric.LogAddExp(0, math.Log(10*r/p.Beta)+lnNu)
	lnCorr := math.Log1p(math.Exp(-(g2 - g1) * lnQ))
	n2[0] = numeric.LogAddExp(0, math.Log(8*r)-lnEps)
	n2[1] = numeric.LogAddExp(0, lnNu+math.Log(r)+numeric.LogAddExp(0, math.Log(8)+math.Log(nu-1)-lnEps))
	n2[2] = (math.Log(16) + lnNu + lnB + 4*lnXH - ln09 - lnEps - 2*lnXL) / (1 - 2*g1)
	n2[3] = (math.Log(16) + lnNu - lnEps + 4*lnXH + lnA - ln09 - 4*lnXL + lnCorr) / (2 - g1 - g2)
	n2[4] = (math.Log(4) + lnNu - lnEps + 2*(2*lnXH+lnA) - ln09 - 6*lnXL - lnB + 2*lnCorr) / (3 - 2*g2)
	b := p.XH * p.XH * p.Beta
	nSGLD = (math.Log(2*t.V1/p.Alpha) + 2*math.Log(32*b/3) + math.Log(p.EpsilonPrime-math.Log(0.5-p.Delta)) + 2/b) /
		(2 * (g2 - 1))
	return n2, nSGLD
}

// lnMax returns ln max{n_1, n_2, n_3, eq. 16} at γ2 and which bound it is.
func (t TheoremIV1) lnMax(g2 float64) (float64, string) {
	n2, ns := t.gamma2Terms(g2)
	best, name := t.LnN1, "n_1 (Lemma A.9's conditions)"
	for i, v := range n2 {
		if v > best {
			best, name = v, fmt.Sprintf("n_2 term %d (Claim D.28)", i+1)
		}
	}
	if t.LnN3 > best {
		best, name = t.LnN3, "n_3 (Lemma A.1's conditions at ν1)"
	}
	if ns > best {
		best, name = ns, "eq. 16 (SGLD must fail ε′)"
	}
	return best, name
}

// minimiseNP returns the γ2 ∈ (1 + γ1, 3/2) minimising ln n_p: 4,000
// interior grid points, the best refined by golden-section search between
// its neighbours (the maximum of the bounds need not be unimodal in γ2, so
// the grid comes first).
func (t TheoremIV1) minimiseNP() (g2, lnNP float64) {
	lo, hi := 1+t.Gamma1, 1.5
	const k = 4000
	f := func(g float64) float64 { v, _ := t.lnMax(g); return v }
	bestI, bestV := 1, math.Inf(1)
	for i := 1; i < k; i++ {
		if v := f(lo + (hi-lo)*float64(i)/k); v < bestV {
			bestI, bestV = i, v
		}
	}
	a, b := lo+(hi-lo)*float64(bestI-1)/k, lo+(hi-lo)*float64(bestI+1)/k
	x, v := numeric.GoldenMin(f, a, b, 60, 0)
	if !(x > lo && x < hi) || !(v <= bestV) {
		x, v = lo+(hi-lo)*float64(bestI)/k, bestV
	}
	return x, v
}

// magnitude writes e^lnx as a decimal order of magnitude.
func magnitude(lnx float64) string {
	if math.IsInf(lnx, 0) || math.IsNaN(lnx) {
		return fmt.Sprint(math.Exp(lnx))
	}
	e := lnx / math.Ln10
	ex := math.Floor(e)
	return fmt.Sprintf("%.3fe%+d", math.Pow(10, e-ex), int(ex))
}

// limits describes every quantity outside the range an instance needs.
func (t TheoremIV1) limits() []string {
	var out []string
	maxLn := math.Log(math.MaxFloat64)
	if t.LnNP > math.Log(maxInstanceN) {
		msg := fmt.Sprintf("n_p ≈ %s exceeds 2^53 ≈ 9.007e15, the largest dataset size an instance can be built with (n must be an exact float64 integer); n_p is set by %s",
			magnitude(t.LnNP), t.Binding)
		if !t.Gamma2Chosen && t.MinLnNP < t.LnNP {
			msg += fmt.Sprintf("; γ2 = %.6g would give n_p ≈ %s", t.MinGamma2, magnitude(t.MinLnNP))
		}
		out = append(out, msg)
	}
	if t.LnNP > maxLn {
		out = append(out, fmt.Sprintf("n_p ≈ %s overflows float64 (largest 1.798e+308)", magnitude(t.LnNP)))
	}
	if t.LnCP > maxLn {
		out = append(out, fmt.Sprintf("c_p = n_p^γ2 ≈ %s overflows float64 (largest 1.798e+308)", magnitude(t.LnCP)))
	}
	if t.LnEta < math.Log(0x1p-1022) {
		out = append(out, fmt.Sprintf("η = 2/s² ≈ %s underflows float64 (smallest normal 2.225e-308)", magnitude(t.LnEta)))
	}
	return out
}

// Instance returns the counterexample (n_p, c_p, η = 2/s²) and the domain
// D(n_p, γ1, x_h, x_h/2, c_p) of the construction, or an error naming the
// quantities outside the range when Limits is not empty.
func (t TheoremIV1) Instance() (Counterexample, LinRegDomain, error) {
	if len(t.Limits) > 0 {
		return Counterexample{}, LinRegDomain{}, fmt.Errorf("n: no instance of the construction can be built: %s", strings.Join(t.Limits, "; "))
	}
	c := Counterexample{N: int(t.NP), Alpha: t.Alpha, Beta: t.Beta, XH: t.XH, C: t.CP}
	c.Eta = c.EtaScaled(2)
	d := c.Domain(t.Gamma1, t.XL)
	return c, d, c.Validate()
}

// TheoremIV1Check is the construction checked with exact quantities.
type TheoremIV1Check struct {
	// Variant is the reading of Lemma A.1 used for the posterior.
	Variant LemmaA1Variant
	// PosteriorEpsilon is the posterior's ε by Lemma A.1 + Lemma IV.4,
	// minimised over the order (at PosteriorOrder); PosteriorEpsilonNu1
	// is the same at the construction's order ν1.
	PosteriorEpsilon, PosteriorOrder, PosteriorEpsilonNu1 float64
	// PosteriorHolds is PosteriorEpsilon ≤ ε.
	PosteriorHolds bool
	// Epoch is ⌈k̇⌉ + 1 of Lemma A.9 (k̇ of Lemma A.6).
	Epoch int
	// LemmaA9 is Lemma A.9's lower bound at (n_p, c_p), with its
	// conditions.
	LemmaA9       float64
	LemmaA9Checks []Check
	// Curves are the four exact lower bounds at Epoch.
	Curves EpochCurves
	// ProofHolds is the proof's own route: the exact Chernoff quantity at
	// Epoch is at least Lemma A.9's bound (as Lemmas A.7–A.9 claim), which
	// is at least ε′ (eq. 16, up to 1e-12 relative for rounding), and
	// exceeds ε′.
	ProofHolds bool
	// ClaimHolds is the theorem's claim, "not (ε′, δ)-DP", for this pair
	// of datasets: the exact privacy profile exceeds ε′.
	ClaimHolds bool
}

// Verify instantiates the construction and checks both halves of the
// theorem with exact quantities: the posterior's ε (Lemma A.1 in reading
// v + Lemma IV.4, minimised over the order) is at most ε, and at Lemma
// A.9's epoch the SGLD iterate is not (ε′, δ)-DP. The theorem speaks of
// the latter in terms of DP itself, i.e. the exact profile (ε_profile)
// for the pair D1, D2; its proof reaches it through the paper's event
// θ > μ_j and the Chernoff bound (ε_chernoff ≥ Lemma A.9's bound ≥ ε′).
// Both are reported; ε_chernoff ≤ ε_tail ≤ ε_threshold ≤ ε_profile.
func (t TheoremIV1) Verify(v LemmaA1Variant) (TheoremIV1Check, error) {
	chk := TheoremIV1Check{Variant: v}
	c, d, err := t.Instance()
	if err != nil {
		return chk, err
	}
	chk.PosteriorEpsilon, chk.PosteriorOrder, err = d.PosteriorDP(t.Delta, v)
	if err != nil {
		return chk, err
	}
	e1, err := d.Epsilon1(t.Nu1, v)
	if err != nil {
		return chk, err
	}
	chk.PosteriorEpsilonNu1 = e1 + math.Log(1/t.Delta)/(t.Nu1-1)
	chk.PosteriorHolds = chk.PosteriorEpsilon <= t.Epsilon
	chk.LemmaA9, chk.Epoch, chk.LemmaA9Checks, err = c.LemmaA9Epsilon(t.Delta)
	if err != nil {
		return chk, err
	}
	chk.Curves, err = c.Curves(chk.Epoch, t.Delta)
	if err != nil {
		return chk, fmt.Errorf("at n_p = %d, c_p = %g: %w", c.N, c.C, err)
	}
	// Lemma A.9's bound at n_p equals ε′ when eq. 16 sets n_p; evaluating
	// it in float64 can land a few ulps below, hence the 1e-12.
	chk.ProofHolds = chk.Curves.Chernoff.Epsilon >= chk.LemmaA9 && chk.LemmaA9 >= t.EpsilonPrime*(1-1e-12) &&
		chk.Curves.Chernoff.Epsilon > t.EpsilonPrime
	chk.ClaimHolds = chk.Curves.Profile.Epsilon > t.EpsilonPrime
	return chk, nil
}

// LemmaA9Epsilon returns the lower bound of Heller & Fetaya Lemma A.9 (and
// Lemma IV.7): cyclic SGLD with η = 2/s² is not (ε, δ)-DP after
// ⌈k̇⌉ + 1 epochs for any
// ε < e^(−2/(x_h²β)) α/(2v1) (3/(32x_h²β))² (c/n)² + ln(0.5 − δ),
// v1 = max{6, 1 + 2e^(1/(x_h²β))}, and that epoch. It needs δ < 1/2 and the
// conditions on n of Lemmas A.5–A.7, which are returned as checks.
func (c Counterexample) LemmaA9Epsilon(delta float64) (eps float64, epoch int, checks []Check, err error) {
	if err := c.validateData(); err != nil {
		return math.NaN(), 0, nil, err
	}
	if !(delta > 0 && delta < 0.5) {
		return math.NaN(), 0, nil, fmt.Errorf("delta: must be in (0, 0.5), got %g", delta)
	}
	if c.S() <= 1 {
		return math.NaN(), 0, nil, fmt.Errorf("n: Lemma A.9's step size η = 2/s² needs s = α + n x_h² β > 1, got s = %g", c.S())
	}
	b := c.XH * c.XH * c.Beta
	n := float64(c.N)
	v1 := math.Max(6, 1+2*math.Exp(1/b))
	k := 3 / (32 * b)
	eps = math.Exp(-2/b)*c.Alpha/(2*v1)*k*k*(c.C/n)*(c.C/n) + math.Log(0.5-delta)
	// k̇ = (1/(2n)) log_λ(1/(1 + (1−λ²)/(αη))) − 1 with η = 2/s² (Lemma A.6).
	cc := c
	cc.Eta = c.EtaScaled(2)
	kk := cc.consts()
	kdot := math.Log1p(kk.oneMLam2/(c.Alpha*cc.Eta))/(2*n*kk.L) - 1
	epoch = int(math.Ceil(kdot)) + 1
	nMin := max(c.Alpha/b, c.Alpha/b*(math.Exp(2/b)-2)+1/(2*b), 1/(2*c.Alpha*b)-1/b)
	checks = []Check{
		{Name: "x_h²β > 3", Holds: b > 3, Detail: fmt.Sprintf("x_h²β = %g", b)},
		{Name: "n > max{α/(x_h²β), α/(x_h²β)(e^(2/(x_h²β)) − 2) + 1/(2x_h²β), 1/(2αx_h²β) − 1/(x_h²β)}",
			Holds: n > nMin, Detail: fmt.Sprintf("n = %d, bound %g", c.N, nMin)},
		{Name: "k̇ > 0", Holds: kdot > 0, Detail: fmt.Sprintf("k̇ = %g", kdot)},
	}
	return eps, epoch, checks, nil
}
