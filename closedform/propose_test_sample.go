package closedform

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// ProposeTestSample holds the parameters of Heller & Fetaya's Algorithm 1
// (§IV-C, "Propose Test Sample"): clip the data, privately estimate the
// slope, drop the records far from it, privately test that enough are left
// (|W| against n_min of eq. 33), and release one draw from the posterior
// on what is left (Lemma IV.2). Claim IV.8: the algorithm is
// (5ε, 2δ)-DP. The readings taken where the algorithm leaves a case open
// are in docs/derivations/interim-region.md, "Algorithm 1 and n_min".
type ProposeTestSample struct {
	// Epsilon > 0 and Delta ∈ (0, 1/2) are the per-step (ε, δ).
	Epsilon, Delta float64
	// XL, XH bound the covariates after clipping, 0 < x_l < x_h.
	XL, XH float64
	// Alpha > 0 and Beta ≥ 3/x_h² are the prior and noise precisions.
	Alpha, Beta float64
	// Rho1 ∈ (1, 3/2) sets the slope cap n̆1^ρ1 of line 10; Rho2 ∈ (0, 1/2)
	// the width n_2^ρ2 of line 19; Gamma1 ∈ (ρ2, 1/2) the domain exponent.
	Rho1, Rho2, Gamma1 float64
	// N1 ≥ 1 is the dataset size n_1 the algorithm is told.
	N1 float64
}

// Validate reports the first parameter outside the ranges of Algorithm 1's
// line 2.
func (a ProposeTestSample) Validate() error {
	pos := func(x float64) bool { return x > 0 && !math.IsInf(x, 1) }
	switch {
	case !pos(a.Epsilon):
		return fmt.Errorf("epsilon: must be a finite number > 0, got %g", a.Epsilon)
	case !(a.Delta > 0 && a.Delta < 0.5):
		return fmt.Errorf("delta: must be in (0, 0.5), got %g", a.Delta)
	case !pos(a.XL):
		return fmt.Errorf("xl: must be a finite number > 0, got %g", a.XL)
	case !(a.XH > a.XL) || math.IsInf(a.XH, 1):
		return fmt.Errorf("xh: must be finite and > x_l = %g, got %g", a.XL, a.XH)
	case !pos(a.Alpha):
		return fmt.Errorf("alpha: must be a finite number > 0, got %g", a.Alpha)
	case !(a.Beta >= 3/(a.XH*a.XH)) || math.IsInf(a.Beta, 1):
		return fmt.Errorf("beta: must be ≥ 3/x_h² = %g, got %g", 3/(a.XH*a.XH), a.Beta)
	case !(a.Rho1 > 1 && a.Rho1 < 1.5):
		return fmt.Errorf("rho1: must be in (1, 1.5), got %g", a.Rho1)
	case !(a.Rho2 > 0 && a.Rho2 < 0.5):
		return fmt.Errorf("rho2: must be in (0, 0.5), got %g", a.Rho2)
	case !(a.Gamma1 > a.Rho2 && a.Gamma1 < 0.5):
		return fmt.Errorf("gamma1: must be in (ρ2, 0.5) = (%g, 0.5), got %g", a.Rho2, a.Gamma1)
	case !(a.N1 >= 1 && a.N1 <= maxInstanceN && a.N1 == math.Floor(a.N1)):
		return fmt.Errorf("n1: must be an integer in [1, 2^53], got %g", a.N1)
	}
	return nil
}

// NMin is n_min of Heller & Fetaya eq. 33 with its parts.
type NMin struct {
	// Nu = 2 ln(1/δ)/ε + 1.
	Nu float64
	// B1 are the seven terms of n_b1 (the conditions of Claim D.27 with
	// c = m̆ and c + n^γ1 ≤ 2 max{m̆, n^γ1}); B2 the two of n_b2 (Lemma
	// A.1's conditions); N1Term = n_1^(ρ2/γ1) (so that n_2^ρ2 ≤ |W|^γ1).
	B1     [7]float64
	B2     [2]float64
	N1Term float64
	// Value = max of all of them.
	Value float64
}

// NMin returns n_min of eq. 33 for the noisy slope m̆ of line 18; m̆ < 0 is
// read as 0 (every kept record then has 0 ≤ y/x ≤ n_2^ρ2, inside the
// domain centred at 0). It is closed-form: m̆ and the parameters fix it.
func (a ProposeTestSample) NMin(mBreve float64) (NMin, error) {
	if err := a.Validate(); err != nil {
		return NMin{}, err
	}
	if math.IsNaN(mBreve) || math.IsInf(mBreve, 0) {
		return NMin{}, fmt.Errorf("m-breve: must be a finite number, got %g", mBreve)
	}
	m := math.Max(mBreve, 0)
	var r NMin
	eps, g1 := a.Epsilon, a.Gamma1
	nu := 2*math.Log(1/a.Delta)/eps + 1
	r.Nu = nu
	xh2, xl2 := a.XH*a.XH, a.XL*a.XL
	xh4 := xh2 * xh2
	ah := a.Alpha + xh2*a.Beta
	k4 := xh4 * ah / (0.9 * xl2 * xl2)                     // x_h⁴(α + x_h²β)/(0.9 x_l⁴)
	k6 := xh4 * ah * ah / (0.9 * xl2 * xl2 * xl2 * a.Beta) // x_h⁴(α + x_h²β)²/(0.9 x_l⁶ β)
	r.B1 = [7]float64{
		1 + xh2/xl2*8/eps,
		1 + nu*xh2/xl2*(1+8*(nu-1)/eps),
		math.Pow(16*nu*a.Beta*xh4/(0.9*eps*xl2), 1/(1-2*g1)),
		math.Pow(32*nu/eps*k4*m, 1/(2-g1)),
		math.Pow(32*nu/eps*k4, 1/(2-2*g1)),
		math.Cbrt(4*nu/eps*k6) * math.Pow(2*m, 2.0/3),
		math.Pow(16*nu/eps*k6, 1/(3-2*g1)),
	}
	r.B2 = [2]float64{1 + xh2/xl2*10*nu/a.Beta, 1 + nu*xh2/xl2}
	r.N1Term = math.Pow(a.N1, a.Rho2/g1)
	r.Value = r.N1Term
	for _, v := range append(r.B1[:], r.B2[:]...) {
		r.Value = math.Max(r.Value, v)
	}
	return r, nil
}

// WeightedPoint is Count identical records (X, Y); a dataset of many equal
// records (as in eq. 9) is a few of them.
type WeightedPoint struct {
	X, Y  float64
	Count float64
}

// PTSResult is one run of Algorithm 1 with its intermediate values.
type PTSResult struct {
	// Released is true when line 25 ran; Theta is then the draw.
	Released bool
	Theta    float64
	// Line is the line that ended the run: 14 (n_2 ≤ 1, or V empty), 23
	// (n_W < n_min) or 25 (released, unless W is empty).
	Line int
	// N1Breve, SizeV, N2, M, MBreve, SizeW, NW are n̆1, |V|, n_2, m, m̆, |W|
	// and n_W of lines 9–21 (NaN when the run stopped before them).
	N1Breve, SizeV, N2, M, MBreve, SizeW, NW float64
	// NMin is eq. 33 at m̆ (zero value before line 22).
	NMin NMin
	// PostMean, PostVar are the posterior N(μ, σ²) on W sampled at line 25.
	PostMean, PostVar float64
}

// Run performs Algorithm 1 on d with the given source of randomness: four
// Laplace draws (lines 8, 11, 17, 20) and, when it gets there, one
// posterior draw.
func (a ProposeTestSample) Run(d []WeightedPoint, rng *rand.Rand) (PTSResult, error) {
	if err := a.Validate(); err != nil {
		return PTSResult{}, err
	}
	for i, p := range d {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) || !(p.Count >= 0) || math.IsInf(p.Count, 1) {
			return PTSResult{}, fmt.Errorf("data: record %d = (%g, %g) × %g is not finite with a count ≥ 0", i, p.X, p.Y, p.Count)
		}
	}
	lap := func() float64 { return rng.ExpFloat64() - rng.ExpFloat64() } // Laplace(0, 1)
	var unit [4]float64
	for i := range unit {
		unit[i] = lap()
	}
	return a.run(d, unit, rng.NormFloat64()), nil
}

// run is Algorithm 1 given unit Laplace draws l[i] (scaled inside) and a
// standard normal z for line 25.
func (a ProposeTestSample) run(d []WeightedPoint, l [4]float64, z float64) PTSResult {
	nan := math.NaN()
	res := PTSResult{N1Breve: nan, SizeV: nan, N2: nan, M: nan, MBreve: nan, SizeW: nan, NW: nan}
	// Lines 3–7: clip.
	pts := make([]WeightedPoint, len(d))
	for i, p := range d {
		pts[i] = WeightedPoint{X: math.Min(math.Max(p.X, a.XL), a.XH), Y: math.Max(p.Y, 0), Count: p.Count}
	}
	b := 1 / a.Epsilon
	shift := b * math.Log(1/(2*a.Delta)) // (1/ε) log(1/(2δ))
	// Lines 8–10.
	res.N1Breve = a.N1 - shift + b*l[0]
	cap1 := math.Pow(math.Max(res.N1Breve, 0), a.Rho1)
	var sizeV, sxy, sxx float64
	for _, p := range pts {
		if p.Y/p.X <= cap1 {
			sizeV += p.Count
			sxy += p.Count * p.X * p.Y
			sxx += p.Count * p.X * p.X
		}
	}
	res.SizeV = sizeV
	// Lines 11–15.
	res.N2 = sizeV - shift + b*l[1]
	if res.N2 <= 1 || sizeV == 0 {
		res.Line = 14
		return res
	}
	// Lines 16–18.
	res.M = sxy / sxx
	n2 := res.N2
	xh2, xl2 := a.XH*a.XH, a.XL*a.XL
	scale3 := b * cap1 * (2*(n2-1)*xh2*xl2 + xh2*xh2) / (n2 * (n2 - 1) * xl2 * xl2)
	res.MBreve = res.M + scale3*l[2]
	// Lines 19–21.
	width := math.Pow(n2, a.Rho2)
	var sizeW, wxy, wxx float64
	for _, p := range pts {
		if math.Abs(p.Y/p.X-res.MBreve) <= width {
			sizeW += p.Count
			wxy += p.Count * p.X * p.Y
			wxx += p.Count * p.X * p.X
		}
	}
	res.SizeW = sizeW
	res.NW = sizeW - shift + b*l[3]
	// Lines 22–24.
	res.NMin, _ = a.NMin(res.MBreve)
	if res.NW < res.NMin.Value {
		res.Line = 23
		return res
	}
	// Line 25: one draw from p(θ|W) (Lemma IV.2); the proof of Claim IV.9
	// takes a draw given an empty W to be null.
	res.Line = 25
	if sizeW == 0 {
		return res
	}
	post := LinRegPosterior(a.Alpha, a.Beta, wxy, wxx)
	res.PostMean, res.PostVar = post.Mu, post.Sigma*post.Sigma
	res.Released = true
	res.Theta = post.Mu + post.Sigma*z
	return res
}
