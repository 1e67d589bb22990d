package closedform

import (
	"errors"
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// LinRegPosterior returns the posterior of the 1-D Bayesian linear
// regression y = θx + ξ, ξ ~ N(0, 1/β), θ ~ N(0, 1/α) (Heller & Fetaya
// Lemma IV.2, eq. 6; Bishop 2006 eqs. 3.49–3.51):
//
//	N(μ, σ²),  μ = β Σxᵢyᵢ / (α + β Σxᵢ²),  σ² = 1/(α + β Σxᵢ²).
func LinRegPosterior(alpha, beta, sumXY, sumXX float64) distuv.Normal {
	prec := alpha + beta*sumXX
	return distuv.Normal{Mu: beta * sumXY / prec, Sigma: 1 / math.Sqrt(prec)}
}

// Posteriors returns the posteriors of D1 and D2 (Lemma IV.2) and their
// mean difference μ1 − μ2 = β c x_h² (3/4) α / (s1 s2), s_i the posterior
// precisions, computed in that form because the means themselves agree to
// about 1/n² of their size.
func (c Counterexample) Posteriors() (d1, d2 distuv.Normal, meanDiff float64) {
	x2 := c.XH * c.XH
	n := float64(c.N)
	d1 = LinRegPosterior(c.Alpha, c.Beta, n*c.C*x2, n*x2)
	d2 = LinRegPosterior(c.Alpha, c.Beta, (n-0.75)*c.C*x2, (n-0.75)*x2)
	s1 := c.Alpha + c.Beta*n*x2
	s2 := c.Alpha + c.Beta*(n-0.75)*x2
	meanDiff = c.Beta * c.C * x2 * 0.75 * c.Alpha / (s1 * s2)
	return d1, d2, meanDiff
}

// PosteriorRenyi returns the exact Rényi divergences of order ν > 1 between
// the posteriors of D1 and D2, D_ν(p(θ|D1) ‖ p(θ|D2)) and the reverse
// (Heller & Fetaya eq. 20, via stats.RenyiGaussian). It is the privacy loss
// of one posterior draw for this pair of datasets only, a lower bound on
// the RDP of posterior sampling over the whole domain.
func (c Counterexample) PosteriorRenyi(nu float64) (d12, d21 float64, err error) {
	if err := c.validateData(); err != nil {
		return math.NaN(), math.NaN(), err
	}
	if !(nu > 1) || math.IsInf(nu, 1) {
		return math.NaN(), math.NaN(), fmt.Errorf("nu: must be a finite number > 1, got %g", nu)
	}
	p1, p2, dm := c.Posteriors()
	// The divergence depends on the means only through μ1 − μ2.
	d12 = stats.RenyiGaussian(nu, dm, p1.Sigma, 0, p2.Sigma)
	d21 = stats.RenyiGaussian(nu, 0, p2.Sigma, dm, p1.Sigma)
	return d12, d21, nil
}

// validateData checks the fields the posterior needs (not η).
func (c Counterexample) validateData() error {
	d := c
	d.Eta = 1 / (c.Alpha + float64(c.N)*c.XH*c.XH*c.Beta) // any valid η
	return d.Validate()
}

// LemmaA1Variant selects how ε1(ν) of Lemma A.1 is evaluated.
type LemmaA1Variant int

const (
	// A1Conservative replaces n by n − 1 in the denominators of the last
	// three terms of ε1. Claim D.26, which yields those terms, lower-bounds
	// Σxᵢ² over the n − 1 shared records by (n − 1)x_l² and then uses
	// "(n − 1)x_l ≈ n x_l" (its step **); without that approximation the
	// denominators are (n−1)·n^(−2γ1), (n−1)²·n^(−γ1) and (n−1)³. Each
	// term only grows, so this reading is never smaller than the printed
	// one (docs/derivations/interim-region.md, "Lemma A.1: the
	// conservative reading").
	A1Conservative LemmaA1Variant = iota
	// A1Printed is Lemma A.1 exactly as printed.
	A1Printed
)

// String names the variant as the CLI spells it.
func (v LemmaA1Variant) String() string {
	switch v {
	case A1Printed:
		return "printed"
	case A1Conservative:
		return "conservative"
	}
	return fmt.Sprintf("LemmaA1Variant(%d)", int(v))
}

// LinRegDomain is the data domain D(n, γ1, x_h, x_l, c) of Heller & Fetaya
// eq. 5 — n records with x_l ≤ xᵢ ≤ x_h and |yᵢ/xᵢ − c| ≤ n^γ1 — together
// with the model's precisions α and β. The posterior privacy results
// (Lemma A.1, Lemma IV.4) hold for every pair of neighbouring datasets in
// it.
type LinRegDomain struct {
	// N is the number of records n ≥ 2.
	N int
	// Alpha and Beta are the prior and noise precisions α, β > 0.
	Alpha, Beta float64
	// Gamma1 ∈ (0, 1/2) sets the allowed spread |yᵢ/xᵢ − c| ≤ n^γ1.
	Gamma1 float64
	// XH and XL bound the covariates, 0 < x_l ≤ xᵢ ≤ x_h.
	XH, XL float64
	// C is the centre c ≥ 0 of the slopes yᵢ/xᵢ.
	C float64
}

// Domain returns the domain of the paper's Fig. 1 around a counterexample:
// its n, α, β, x_h, c with the given γ1 and x_l.
func (c Counterexample) Domain(gamma1, xl float64) LinRegDomain {
	return LinRegDomain{N: c.N, Alpha: c.Alpha, Beta: c.Beta, Gamma1: gamma1, XH: c.XH, XL: xl, C: c.C}
}

// Validate reports the first field outside its allowed range.
func (d LinRegDomain) Validate() error {
	if d.N < 2 || float64(d.N) > 1<<53 {
		return fmt.Errorf("n: must be an integer in [2, 2^53] for Lemma A.1, got %d", d.N)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"alpha", d.Alpha}, {"beta", d.Beta}, {"xh", d.XH}, {"xl", d.XL}} {
		if !(p.v > 0) || math.IsInf(p.v, 1) {
			return fmt.Errorf("%s: must be a finite number > 0, got %g", p.name, p.v)
		}
	}
	if !(d.C >= 0) || math.IsInf(d.C, 1) {
		return fmt.Errorf("c: must be a finite number ≥ 0, got %g", d.C)
	}
	if !(d.XL <= d.XH) {
		return fmt.Errorf("xl: must be in (0, x_h] = (0, %g], got %g", d.XH, d.XL)
	}
	if !(d.Gamma1 > 0 && d.Gamma1 < 0.5) {
		return fmt.Errorf("gamma1: must be in (0, 0.5), got %g", d.Gamma1)
	}
	return nil
}

// MaxOrder returns the supremum of the Rényi orders ν allowed by Lemma A.1's
// condition n > max{1 + 10(x_h²/x_l²)ν/β, 1 + ν x_h²/x_l²}, i.e.
// ν < (n−1)(x_l²/x_h²)·min{β/10, 1}.
func (d LinRegDomain) MaxOrder() float64 {
	return float64(d.N-1) * (d.XL * d.XL) / (d.XH * d.XH) * math.Min(d.Beta/10, 1)
}

// Epsilon1 returns ε1(ν) of Heller & Fetaya Lemma A.1: one posterior draw
// is (ν, ε1)-RDP on the domain, with
//
//	ε1 = x_h²/(2(n−1)x_l²) + (ν−1)ν x_h²/(2((n−1)x_l² − ν x_h²))
//	   + 20νβx_h⁴/(9 n^(1−2γ1) x_l²) + 20ν x_h⁴(α + x_h²β)/(9x_l⁴) · (c + n^γ1)/n^(2−γ1)
//	   + 5ν x_h⁴(α + x_h²β)²/(9 x_l⁶ β) · (c + n^γ1)²/n³
//
// (A1Printed; A1Conservative puts n − 1 in the last three denominators).
// It is an error when ν is outside (1, MaxOrder()).
func (d LinRegDomain) Epsilon1(nu float64, v LemmaA1Variant) (float64, error) {
	if err := d.Validate(); err != nil {
		return math.NaN(), err
	}
	if hi := d.MaxOrder(); !(nu > 1 && nu < hi) {
		return math.NaN(), fmt.Errorf("nu: Lemma A.1 needs ν in (1, %g) for n = %d, got %g", hi, d.N, nu)
	}
	return d.eps1(nu, v), nil
}

// eps1 evaluates Lemma A.1 without checks; eps1Slope is its derivative's
// part that is linear in ν (the last three terms divided by ν).
func (d LinRegDomain) eps1(nu float64, v LemmaA1Variant) float64 {
	return d.eps1First(nu) + nu*d.eps1Slope(v)
}

func (d LinRegDomain) eps1First(nu float64) float64 {
	n1 := float64(d.N - 1)
	xh2, xl2 := d.XH*d.XH, d.XL*d.XL
	return xh2/(2*n1*xl2) + (nu-1)*nu*xh2/(2*(n1*xl2-nu*xh2))
}

func (d LinRegDomain) eps1Slope(v LemmaA1Variant) float64 {
	n := float64(d.N)
	n1, n2, n3 := n, n*n, n*n*n // denominators' n, n², n³ before the n^γ1 factors
	if v == A1Conservative {
		m := n - 1
		n1, n2, n3 = m, m*m, m*m*m
	}
	xh2, xl2 := d.XH*d.XH, d.XL*d.XL
	xh4 := xh2 * xh2
	ng := math.Pow(n, d.Gamma1)
	a := d.Alpha + xh2*d.Beta
	cn := d.C + ng
	t3 := 20 * d.Beta * xh4 * ng * ng / (9 * n1 * xl2)
	t4 := 20 * xh4 * a / (9 * xl2 * xl2) * cn * ng / n2
	t5 := 5 * xh4 * a * a / (9 * xl2 * xl2 * xl2 * d.Beta) * cn * cn / n3
	return t3 + t4 + t5
}

// PosteriorDP returns the ε for which one posterior draw is (ε, δ)-DP by
// Lemma IV.4 — ε1(ν) + ln(1/δ)/(ν−1) — minimised over the orders ν that
// Lemma A.1 allows, and the minimising ν.
//
// The objective is strictly convex on (1, MaxOrder()) (proof in
// docs/derivations/interim-region.md, "The order search"), so its
// derivative is increasing and has at most one root. The root is bracketed
// in t = ln(ν − 1) from ν = 1⁺, where the derivative tends to −∞, up to
// the open end, and found by Brent's method to a relative accuracy of
// about 1e-13 in ν − 1. When the derivative is still negative at the open
// end the minimum is reported there, at ν − 1 = (MaxOrder() − 1)(1 − 1e-9).
func (d LinRegDomain) PosteriorDP(delta float64, v LemmaA1Variant) (eps, nu float64, err error) {
	if err := d.Validate(); err != nil {
		return math.NaN(), math.NaN(), err
	}
	if !(delta > 0 && delta < 1) {
		return math.NaN(), math.NaN(), fmt.Errorf("delta: must be in (0, 1), got %g", delta)
	}
	hi := d.MaxOrder()
	if !(hi > 1) {
		return math.NaN(), math.NaN(), fmt.Errorf(
			"n: Lemma A.1 needs n > max{1 + 10(x_h²/x_l²)ν/β, 1 + ν x_h²/x_l²} for some ν > 1; n = %d allows none", d.N)
	}
	if sl := d.eps1Slope(v); math.IsInf(sl, 0) || math.IsNaN(sl) {
		return math.NaN(), math.NaN(), fmt.Errorf("c: too large for float64: Lemma A.1's ε1 overflows at c = %g", d.C)
	}
	nu = d.bestOrder(delta, v)
	eps = d.eps1(nu, v) - math.Log(delta)/(nu-1)
	if math.IsInf(eps, 0) || math.IsNaN(eps) {
		return math.NaN(), math.NaN(), fmt.Errorf("c: too large for float64: Lemma A.1's ε1 overflows at c = %g", d.C)
	}
	return eps, nu, nil
}

// orderDeriv returns the derivative in ν of ε1(ν) + L/(ν−1).
func (d LinRegDomain) orderDeriv(L float64, v LemmaA1Variant) func(nu float64) float64 {
	n1 := float64(d.N - 1)
	xh2, xl2 := d.XH*d.XH, d.XL*d.XL
	a := n1 * xl2
	slope := d.eps1Slope(v)
	return func(nu float64) float64 {
		den := a - nu*xh2
		t2 := xh2 / 2 * ((2*nu-1)*den + (nu*nu-nu)*xh2) / (den * den)
		return t2 + slope - L/((nu-1)*(nu-1))
	}
}

// bestOrder returns the minimiser of ε1(ν) + ln(1/δ)/(ν−1) on (1,
// MaxOrder()); see PosteriorDP.
func (d LinRegDomain) bestOrder(delta float64, v LemmaA1Variant) float64 {
	deriv := d.orderDeriv(-math.Log(delta), v)
	span := (d.MaxOrder() - 1) * (1 - 1e-9) // largest ν − 1 searched
	if deriv(1+span) <= 0 {
		return 1 + span
	}
	// Walk down from ν − 1 = min(span, 1)/2 until the derivative is
	// negative; −L/(ν−1)² dominates near ν = 1, so this ends.
	x := math.Min(span, 1) / 2
	for deriv(1+x) >= 0 {
		if x < 1e-300 {
			return 1 + x
		}
		x *= 1e-3
	}
	g := func(t float64) float64 { return deriv(1 + math.Exp(t)) }
	t, err := numeric.Root(g, math.Log(x), math.Log(span), 1e-13)
	if err != nil {
		panic("closedform: convex objective without a bracketed minimum: " + err.Error())
	}
	return 1 + math.Exp(t)
}

// PosteriorGuarantee returns the upper bound of Lemma IV.4 on one posterior
// draw as a Guarantee: its RDP curve is Lemma A.1's ε1(ν) (+Inf for ν
// outside the allowed orders), its ε(δ) is PosteriorDP.
func (d LinRegDomain) PosteriorGuarantee(v LemmaA1Variant) Guarantee {
	const source = "Heller & Fetaya, Lemma A.1 + Lemma IV.4"
	hi := d.MaxOrder()
	checks := []Check{
		{Name: "domain parameters valid", Holds: d.Validate() == nil, Detail: errString(d.Validate())},
		{Name: "n > max{1 + 10(x_h²/x_l²)ν/β, 1 + νx_h²/x_l²} for some ν > 1",
			Holds: hi > 1, Detail: fmt.Sprintf("n = %d allows ν < %g", d.N, hi)},
	}
	if ok, _ := allHold(checks); !ok {
		return NotApplicable(source, v.String(), "one posterior draw", checks)
	}
	g := Guarantee{Source: source, Variant: v.String(), Release: "one posterior draw",
		Checks: checks, Applies: true}
	g.RDP = func(nu float64) float64 {
		if !(nu > 1 && nu < hi) {
			return math.Inf(1)
		}
		return d.eps1(nu, v)
	}
	g.EpsilonAt = func(delta float64) float64 {
		e, _, err := d.PosteriorDP(delta, v)
		if err != nil {
			return math.NaN()
		}
		return e
	}
	g.Profile = d.posteriorProfile(v)
	g.setSpec(newSpec("linreg-posterior", "n", d.N, "alpha", d.Alpha, "beta", d.Beta, "gamma1", d.Gamma1,
		"xh", d.XH, "xl", d.XL, "c", d.C, "variant", int(v)))
	g.Note = "RDP of one posterior draw over the whole domain, converted at the best order"
	return g
}

// posteriorProfile is the profile of PosteriorGuarantee: δ(ε) = min over
// ν of exp(−(ν−1)(ε − ε1(ν))) (RDP to DP, Mironov 2017 Prop. 3).
func (d LinRegDomain) posteriorProfile(v LemmaA1Variant) func(float64) float64 {
	hi := d.MaxOrder()
	return func(eps float64) float64 {
		best := 1.0
		f := func(nu float64) float64 { return -(nu - 1) * (eps - d.eps1(nu, v)) }
		_, fm := numeric.GoldenMin(f, 1.0, hi, 200, 0)
		if m := math.Exp(fm); m < best {
			best = m
		}
		return best
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// ErrNoPrivateC is returned by MaxPrivateC when even c → 0 leaves the
// posterior above the requested ε by Lemma A.1.
var ErrNoPrivateC = errors.New("no c > 0 makes one posterior draw (ε, δ)-DP by Lemma A.1 for this n")

// MaxPrivateC returns the largest c for which one posterior draw on the
// domain (d.C is ignored) is (ε, δ)-DP by Lemma A.1 and Lemma IV.4, i.e. the
// c at which PosteriorDP(δ) = ε. PosteriorDP increases with c (ε1 does, for
// every ν), so the answer is found by Brent's method.
func (d LinRegDomain) MaxPrivateC(eps, delta float64, v LemmaA1Variant) (float64, error) {
	if !(eps > 0) || math.IsInf(eps, 1) {
		return math.NaN(), fmt.Errorf("epsilon: must be a finite number > 0, got %g", eps)
	}
	at := func(c float64) float64 {
		dd := d
		dd.C = c
		e, _, err := dd.PosteriorDP(delta, v)
		if err != nil {
			return math.NaN()
		}
		return e - eps
	}
	d0 := d
	d0.C = 0
	if _, _, err := d0.PosteriorDP(delta, v); err != nil {
		return math.NaN(), err
	}
	if at(0) >= 0 {
		return math.NaN(), ErrNoPrivateC
	}
	hi := 1.0
	for at(hi) < 0 {
		hi *= 2
		if hi > 1e300 {
			return math.Inf(1), nil
		}
	}
	return numeric.Root(at, 0, hi, 1e-13*hi)
}
